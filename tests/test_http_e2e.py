"""End to end: the MCP SDK's Streamable HTTP client and server, with rpcline.http as the guard.

An ASGI guard in front of the SDK's server app reads each POST body and calls
``rpcline.http.check_request(body, scope["headers"])`` (the raw ASGI header pairs). A
refusal (``verdict.error`` set) is answered with ``verdict.status`` and ``verdict.response``
as application/json; anything else reaches the SDK's app with the body replayed. uvicorn
serves it on 127.0.0.1.

Protocol era: ``mcp.Client(url)`` (mcp 2.3) connects with ``mode="auto"`` by default: it
probes ``server/discover`` at 2026-07-28 and, the SDK's server being dual-era, stays in the
stateless 2026-07-28 mode, stamping every request with the ``_meta`` envelope and the
mirrored ``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers. That is exactly
what ``check_request`` targets, so every POST of the session goes through the guard's
checks (the test asserts the era and that each POST got a 200 verdict). Only
``ClientSession.initialize()`` used by hand speaks the 2025 handshake era; it is not used
here.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed: there is no Streamable HTTP client or server to guard")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed: "
                              "nothing to serve the guard with")
anyio = pytest.importorskip("anyio", reason="anyio comes with the MCP SDK")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK's dependencies: "
                            "nothing to send forged requests with")

from _asgi import serving, two_tool_server

from rpcline import http

V = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": V,
    "io.modelcontextprotocol/clientInfo": {"name": "forger", "version": "1.0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


class Guard:
    """An ASGI app that lets a POST reach ``app`` only when check_request accepts it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.enabled = True
        self.verdicts: list[http.Verdict] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self.enabled:
            return await self.app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        verdict = http.check_request(body, scope["headers"])
        self.verdicts.append(verdict)
        if verdict.error is not None:
            response = verdict.response
            await send({"type": "http.response.start", "status": verdict.status, "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(response)).encode()),
            ]})
            await send({"type": "http.response.body", "body": response})
            return
        replayed = False

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # then the real stream: http.disconnect

        await self.app(scope, replay, send)


async def _session(url: str) -> list[Any]:
    async with mcp.Client(url) as client:
        tools = await client.list_tools()
        added = await client.call_tool("add", {"a": 2**70, "b": 1})
        echoed = await client.call_tool("echo", {"text": "é\n" + "x" * 10_000})
        dumps = [result.model_dump(mode="json") for result in (tools, added, echoed)]
        return [client.protocol_version, *dumps]


def test_an_sdk_session_passes_through_the_guard_unchanged():
    guard = Guard(two_tool_server("rpcline-http-e2e").streamable_http_app())

    async def main() -> tuple[list[Any], list[Any]]:
        async with serving(guard, timeout=15) as url:
            guard.enabled = False
            direct = await _session(url)
            guard.enabled = True
            guarded = await _session(url)
        return direct, guarded

    direct, guarded = anyio.run(main)
    assert guarded == direct
    assert guarded[0] == V  # the SDK client's default era is the stateless 2026-07-28 one
    assert guarded[2]["structured_content"] == {"result": 2**70 + 1}
    assert {v.status for v in guard.verdicts} == {200}
    assert {v.protocol_version for v in guard.verdicts} == {V}
    methods = [v.route.method for v in guard.verdicts]
    assert {"server/discover", "tools/list", "tools/call"} <= set(methods)
    assert [v.name for v in guard.verdicts if v.route.method == "tools/call"] == ["add", "echo"]


def _post(method: str, params: dict, **headers: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "method": method,
                       "params": {**params, "_meta": params.get("_meta", META)}})
    return body.encode(), {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": V,
        "Mcp-Method": method,
        **headers,
    }


FORGED = {
    "method-header": _post("tools/list", {}, **{"Mcp-Method": "tools/call"}),
    "version-header": _post("tools/list", {"_meta": {
        **META, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}}),
    "name-header": _post("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}},
                         **{"Mcp-Name": "echo"}),
}


def test_forged_headers_are_refused_by_the_guard():
    guard = Guard(two_tool_server("rpcline-http-e2e").streamable_http_app())

    async def main() -> dict[str, Any]:
        answers: dict[str, Any] = {}
        async with serving(guard, timeout=15) as url, httpx.AsyncClient(timeout=10) as client:
            for enabled in (True, False):  # guarded, then the SDK's own answer
                guard.enabled = enabled
                for case, (body, headers) in FORGED.items():
                    reply = await client.post(url, content=body, headers=headers)
                    answers[case, enabled] = reply.status_code, reply.json()
            guard.enabled = True
            body, headers = _post("tools/list", {})
            honest = await client.post(url, content=body, headers=headers)
            answers["honest"] = honest.status_code, honest.text
        return answers

    answers = anyio.run(main)
    for case in FORGED:
        status, reply = answers[case, True]
        assert status == 400, case
        assert reply["error"]["code"] == -32020, case
        assert reply["id"] == 7, case
        sdk_status, sdk_reply = answers[case, False]  # the guard agrees with the SDK server
        assert (sdk_status, sdk_reply["error"]["code"]) == (400, -32020), case
    assert [v.status for v in guard.verdicts] == [400] * len(FORGED) + [200]
    assert answers["honest"][0] == 200 and '"echo"' in answers["honest"][1]
