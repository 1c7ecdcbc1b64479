"""What one client of a shared child can reach of another through ``rpcline serve``: nothing.

Each test is an attack or an edge found on main (issue 37), sent as raw HTTP the way a
hostile client would, against tests/bridge_peer.py (which logs every line it receives,
and answers its ``progress`` tool with progress for the token its own JSON parser reads).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx (the interop extra) is not installed")
pytest.importorskip("anyio", reason="anyio comes with the interop extra")

from _asgi import serving

from rpcline.bridge import StdioBridge

pytestmark = pytest.mark.anyio
PEER = [sys.executable, str(Path(__file__).parent / "bridge_peer.py")]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
V = "2026-07-28"


@pytest.fixture
def peer_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file bridge_peer.py appends every line it receives to."""
    path = tmp_path / "received.jsonl"
    monkeypatch.setenv("PEER_LOG", str(path))
    return path


def received(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def request(id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


def initialize(client: str, capabilities: dict[str, Any] | None = None) -> bytes:
    return request(0, "initialize", {"protocolVersion": "2025-11-25",
                                     "capabilities": capabilities or {},
                                     "clientInfo": {"name": client, "version": "1"}})


async def open_session(http: Any, url: str, client: str = "t") -> dict[str, str]:
    opened = await http.post(url, headers=HEADERS, content=initialize(client))
    assert opened.status_code == 200, opened.text
    return {**HEADERS, "Mcp-Session-Id": opened.headers["mcp-session-id"]}


async def events(response: Any, into: list[Any]) -> None:
    """Every SSE event's message of a streamed response, appended to ``into``."""
    async for line in response.aiter_lines():
        if line.startswith("data: "):
            into.append(json.loads(line[6:]))


# --- isolation between clients ----------------------------------------------------------


async def test_a_second_initialize_in_a_session_never_reaches_the_shared_child(
        peer_log: Path) -> None:
    app = StdioBridge(PEER, env=["PEER_LOG"])
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            victim = await open_session(http, url, "victim")
            attacker = await open_session(http, url, "attacker")
            again = await http.post(url, headers=attacker, content=initialize(
                "attacker", {"sampling": {}}).replace(b'"id":0', b'"id":"again"'))
            pinged = await http.post(url, headers=victim, content=request(1, "ping"))
    finally:
        await app.aclose()
    assert again.status_code == 200 and again.json()["id"] == "again"
    assert again.json()["result"]["serverInfo"]["name"] == "bridge-peer"  # the bridge's answer
    assert pinged.json()["result"] == {}
    initializes = [m for m in received(peer_log) if m.get("method") == "initialize"]
    assert len(initializes) == 1  # the bridge's own handshake, and nobody's after it
    assert initializes[0]["params"]["clientInfo"]["name"] == "rpcline-serve"
    assert initializes[0]["params"]["capabilities"] == {}


@pytest.mark.parametrize("key", [b'"progress\\u0054oken"', b'"\\u0070rogressToken"'])
async def test_an_escaped_progress_token_key_is_rewritten_too(peer_log: Path,
                                                              key: bytes) -> None:
    # The victim's call is in flight on the child as the child's id 2 (the handshake was
    # 1); the attacker asks for progress under that same number, its key escaped.
    app = StdioBridge(PEER, env=["PEER_LOG"])
    cancel = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                           "params": {"requestId": "v"}})
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            victim = await open_session(http, url, "victim")
            attacker = await open_session(http, url, "attacker")
            waiting = asyncio.create_task(http.post(url, headers=victim, content=request(
                "v", "tools/call", {"name": "wait", "arguments": {}})))
            await asyncio.sleep(0.3)
            victim_child_id = next(m["id"] for m in received(peer_log)
                                   if m.get("params", {}).get("name") == "wait")
            attack = (b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{'
                      b'"name":"progress","arguments":{},"_meta":{' + key
                      + b":%d}}}" % victim_child_id)
            answer = await http.post(url, headers=attacker, content=attack)
            await asyncio.sleep(0.3)
            await http.post(url, headers=victim, content=cancel)  # its call ends, unanswered
            victim_got = (await asyncio.wait_for(waiting, 10)).text
    finally:
        await app.aclose()
    sent = next(m for m in received(peer_log) if m.get("id") not in (None, victim_child_id)
                and m.get("params", {}).get("name") == "progress")
    assert sent["params"]["_meta"]["progressToken"] == sent["id"] != victim_child_id
    assert "progress" not in victim_got  # nothing of the attacker's reached the victim
    progress = [json.loads(line[6:]) for line in answer.text.splitlines()
                if line.startswith("data: ")]
    assert progress[0]["params"]["progressToken"] == victim_child_id  # the attacker's own,
    assert progress[-1]["id"] == "a"  # back under the token it chose, then its answer


@pytest.mark.parametrize("token", [b"2.0", b"true", b"[2]", b'{"n":2}'])
async def test_a_token_that_cannot_be_rewritten_is_refused(peer_log: Path,
                                                           token: bytes) -> None:
    app = StdioBridge(PEER, env=["PEER_LOG"])
    body = (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"progress",'
            b'"arguments":{},"_meta":{"progressToken":' + token + b"}}}")
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            session = await open_session(http, url)
            refused = await http.post(url, headers=session, content=body)
    finally:
        await app.aclose()
    assert refused.json()["id"] == 7 and refused.json()["error"]["code"] == -32602
    assert not [m for m in received(peer_log) if m.get("method") == "tools/call"]


async def test_progress_for_no_call_in_flight_reaches_nobody() -> None:
    stray = {"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": 999, "progress": 1}}
    cancelled = {"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 3, "reason": "the child's own request"}}
    changed = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    app = StdioBridge(PEER)
    seen: list[Any] = []
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            bystander = await open_session(http, url)
            other = await open_session(http, url)
            async with http.stream("GET", url, headers=bystander) as stream:
                reading = asyncio.create_task(events(stream, seen))
                await asyncio.sleep(0.3)
                await http.post(url, headers=other, content=request(1, "tools/call", {
                    "name": "notify", "arguments": {"messages": [stray, cancelled, changed]}}))
                await asyncio.sleep(0.3)
                reading.cancel()
    finally:
        await app.aclose()
    assert seen == [changed]  # what concerns every session, and only that


# --- HTTP edges ---------------------------------------------------------------------------


async def test_a_session_id_of_any_bytes_is_unknown_with_a_session_key() -> None:
    app = StdioBridge(PEER, session_key="secret")
    replies = []
    for session_id in ("é.é", "\x80abc", "x" * 5000, ".", ""):
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": request(1, "ping"), "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)  # noqa: B023  (read before the next request)

        await app({"type": "http", "method": "POST", "path": "/mcp", "headers": [
            (b"host", b"127.0.0.1:1"), (b"accept", HEADERS["Accept"].encode()),
            (b"content-type", b"application/json"),
            (b"mcp-session-id", session_id.encode("latin-1"))]}, receive, send)
        replies.append(sent[0]["status"])
    await app.aclose()
    assert replies == [404] * 5


@pytest.mark.parametrize(("content_type", "era", "status"), [
    (None, "2025", 400), ("text/plain", "2025", 400), ("application/x-www-form-urlencoded",
                                                        "2025", 400),
    ("Application/JSON", "2025", 415), ("application/jsonx", "2025", 415),
    ("application/json; charset=utf-8", "2025", 200),
    (None, V, 400), ("text/plain", V, 400), ("Application/JSON", V, 200),
])
async def test_a_post_that_is_not_json_is_refused_as_the_sdk_refuses_it(
        content_type: str | None, era: str, status: int) -> None:
    # The SDK checks it first (400, plain text), and its 2025-era transport again, exactly
    # (415, JSON-RPC): what a browser sends cross-site without asking first never passes.
    headers = {k: v for k, v in HEADERS.items() if k != "Content-Type"}
    if content_type is not None:
        headers["Content-Type"] = content_type
    if era == V:
        body = request(1, "tools/list", {"_meta": {
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": {}}})
        headers |= {"MCP-Protocol-Version": V, "Mcp-Method": "tools/list"}
    else:
        body = initialize("t")
    app = StdioBridge(PEER)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            reply = await http.post(url, headers=headers, content=body)
    finally:
        await app.aclose()
    sdk = await sdk_reply(headers, body)
    assert (reply.status_code, sdk.status_code) == (status, status), (reply.text, sdk.text)
    if status == 400:
        assert reply.text == sdk.text == "Invalid Content-Type header"
    elif status == 415:
        assert reply.json()["error"] == sdk.json()["error"] == {
            "code": -32600,
            "message": "Unsupported Media Type: Content-Type must be application/json"}


async def sdk_reply(headers: dict[str, str], body: bytes) -> Any:
    """What the official SDK's own Streamable HTTP server answers the same POST."""
    from _asgi import two_tool_server

    server = two_tool_server("oracle")
    app = server.streamable_http_app()
    async with server.session_manager.run():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000",
                                     timeout=20) as http:
            return await http.post("/mcp", headers=headers, content=body)
