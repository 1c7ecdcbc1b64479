"""rpcline.bridge.StdioBridge under uvicorn: the official SDK's client in both eras, and faults.

The SDK's own Streamable HTTP client (``mcp.Client``, mode ``legacy``: the 2025 handshake
and sessions; mode ``2026-07-28``: stateless) talks to the bridge, which shares one stdio
child per era (tests/sdk_server.py, the SDK's own server); what it gets must equal what the
SDK's stdio client gets from the same server directly. Raw HTTP requests check the faults:
a child that dies, one that never answers, a client that leaves mid-call, the security
defaults and the session rules.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed: there is no client to serve")
pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx comes with the MCP SDK")

from _asgi import serving
from mcp.client.stdio import StdioServerParameters

from rpcline.bridge import StdioBridge

pytestmark = pytest.mark.anyio

HERE = Path(__file__).parent
SERVER = [sys.executable, str(HERE / "sdk_server.py")]
PEER = [sys.executable, str(HERE / "proxy_peer.py")]
SCRIPTED = [sys.executable, str(HERE / "bridge_peer.py")]  # its tool "wait" never answers
V = "2026-07-28"
ACCEPT = "application/json, text/event-stream"


def modern(id: Any, method: str, params: dict[str, Any] | None = None,
           name: str | None = None) -> tuple[bytes, dict[str, str]]:
    """A 2026-07-28 request as the SDK's client sends it: body and headers."""
    params = {**(params or {}), "_meta": {
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientCapabilities": {}}}
    body = orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    headers = {"MCP-Protocol-Version": V, "Mcp-Method": method, "Accept": ACCEPT,
               "Content-Type": "application/json"}
    if name is not None:
        headers["Mcp-Name"] = name
    return body, headers


def call_tool(id: Any, tool: str, arguments: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    return modern(id, "tools/call", {"name": tool, "arguments": arguments}, name=tool)


class Log(list[str]):
    def __call__(self, message: str) -> None:
        self.append(message)

    def started(self, era: str) -> int:
        return sum(f"{era}-" in m and ": started " in m for m in self)


async def session_results(client: Any) -> list[Any]:
    """One session's worth of calls; what each gave, as JSON."""
    got: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        got.append((done, total, message))

    results = [
        await client.list_tools(),
        await client.call_tool("echo", {"text": "héllo 😀"}),
        await client.call_tool("add", {"a": 2**70, "b": 1}),
        await client.call_tool("big", {"size": 300_000}),
        await client.call_tool("fail", {"message": "nope"}),
        await client.call_tool("progress", {"steps": 3}, progress_callback=progress),
        await client.list_resources(),
        await client.read_resource("test://greeting"),
        await client.list_prompts(),
        await client.get_prompt("review", {"code": "x = 1"}),
    ]
    return [r.model_dump(mode="json") for r in results] + [got]


@pytest.mark.parametrize("mode", ["legacy", V])
async def test_sdk_client_gets_what_it_gets_directly(mode: str) -> None:
    direct = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
    async with mcp.Client(direct, mode=mode) as client:  # the same client, over stdio
        expected = await session_results(client)
    app = StdioBridge(SERVER)
    try:
        async with serving(app, timeout=60) as url, mcp.Client(url, mode=mode) as client:
            assert await session_results(client) == expected
    finally:
        await app.aclose()


@pytest.mark.parametrize("mode", ["legacy", V])
async def test_fifty_clients_share_one_child(mode: str) -> None:
    log = Log()
    app = StdioBridge(SERVER, log=log)

    async def one(url: str, n: int) -> str:
        async with mcp.Client(url, mode=mode) as client:  # each numbers its ids from 0
            result = await client.call_tool("echo", {"text": f"client {n}"})
            return str(result.content[0].text)  # type: ignore[union-attr]

    try:
        async with serving(app, timeout=90) as url:
            texts = await asyncio.gather(*(one(url, n) for n in range(50)))
    finally:
        await app.aclose()
    assert texts == [f"client {n}" for n in range(50)]
    era = "2025" if mode == "legacy" else "2026"
    assert log.started(era) == 1 and log.started("2025" if era == "2026" else "2026") == 0


async def test_a_child_that_dies_fails_its_call_and_is_started_again() -> None:
    log = Log()
    app = StdioBridge(SERVER, log=log)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            body, headers = call_tool(1, "die", {})
            answer = (await http.post(url, content=body, headers=headers)).json()
            assert answer["id"] == 1 and answer["error"]["code"] == -32000
            assert "exited with status 7" in answer["error"]["data"]
            await asyncio.sleep(0.3)  # its backoff: 0.25 s after the first exit
            body, headers = call_tool("two", "echo", {"text": "again"})
            answer = (await http.post(url, content=body, headers=headers)).json()
            assert answer["id"] == "two" and answer["result"]["content"][0]["text"] == "again"
    finally:
        await app.aclose()
    assert log.started("2026") == 2
    assert log[-1] == ("2 calls forwarded (1 failed by the bridge), 0 sessions opened, "
                       "children started: 2 for 2026-07-28, 0 for the 2025 era")


async def test_a_child_that_closes_its_output_fails_its_calls_and_is_stopped() -> None:
    log = Log()
    app = StdioBridge(SCRIPTED, log=log)
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            body, headers = call_tool(1, "close", {})
            answer = (await http.post(url, content=body, headers=headers)).json()
            pid = app.modern.children[0].child.pid
            await asyncio.sleep(0.5)  # its backoff after the kill
            body, headers = call_tool(2, "echo", {})
            again = (await http.post(url, content=body, headers=headers)).json()
    finally:
        await app.aclose()
    assert answer["error"]["data"] == "the server closed its output"
    assert again["result"] == {}  # a new child
    assert "2026-1: the server closed its output; stopping it" in log
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_hung_child_is_bounded_by_the_request_timeout(tmp_path: Path,
                                                               monkeypatch: Any) -> None:
    received = tmp_path / "received.jsonl"
    monkeypatch.setenv("PEER_LOG", str(received))
    app = StdioBridge(SCRIPTED, request_timeout=0.5, env=["PEER_LOG"])
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            body, headers = call_tool("mine", "wait", {})
            response = await http.post(url, content=body, headers=headers)
    finally:
        await app.aclose()
    answer = response.json()
    assert answer["id"] == "mine" and answer["error"]["message"] == "Request timed out"
    probe, *sent = [orjson.loads(line) for line in received.read_bytes().splitlines()]
    assert probe["id"] == 1 and probe["method"] == "server/discover"  # the bridge's own
    assert sent[0]["id"] == 2 and sent[0]["method"] == "tools/call"  # the child's own id
    assert sent[1]["method"] == "notifications/cancelled"
    assert sent[1]["params"]["requestId"] == 2


async def test_a_client_that_leaves_cancels_its_call(tmp_path: Path, monkeypatch: Any) -> None:
    received = tmp_path / "received.jsonl"
    monkeypatch.setenv("PEER_LOG", str(received))
    app = StdioBridge(SCRIPTED, env=["PEER_LOG"])
    try:
        async with serving(app, timeout=30) as url:
            async with httpx.AsyncClient(timeout=httpx.Timeout(5, read=0.5)) as http:
                body, headers = call_tool(7, "wait", {})
                with pytest.raises(httpx.ReadTimeout):
                    await http.post(url, content=body, headers=headers)
            for _ in range(100):
                if b"notifications/cancelled" in received.read_bytes():
                    break
                await asyncio.sleep(0.05)
            assert app.modern.in_flight == 0
    finally:
        await app.aclose()
    sent = [orjson.loads(line) for line in received.read_bytes().splitlines()]
    assert [m.get("method") for m in sent] == [
        "server/discover", "tools/call", "notifications/cancelled"]
    sent = sent[1:]
    assert sent[1]["params"]["requestId"] == sent[0]["id"]


async def test_a_broken_answer_fails_its_call_and_is_recorded(tmp_path: Path) -> None:
    app = StdioBridge(SCRIPTED, record=str(tmp_path / "rec"))
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            body, headers = call_tool("b", "broken", {})
            answer = (await http.post(url, content=body, headers=headers)).json()
    finally:
        await app.aclose()
    assert answer["id"] == "b" and answer["error"]["message"] == "Invalid response from the server"
    sent = (tmp_path / "rec.2026-1.client.jsonl").read_bytes().splitlines()
    wrote = (tmp_path / "rec.2026-1.server.jsonl").read_bytes().splitlines()
    assert [orjson.loads(line)["method"] for line in sent] == ["server/discover", "tools/call"]
    assert wrote[1] == b'{"jsonrpc":"2.0","id":2,"result":"\xff"}'  # as the child wrote it


async def test_callers_ids_are_their_own_whatever_the_child_saw(tmp_path: Path,
                                                                monkeypatch: Any) -> None:
    received = tmp_path / "received.jsonl"
    monkeypatch.setenv("PEER_LOG", str(received))
    app = StdioBridge([*PEER, "answer"], env=["PEER_LOG"])
    ids: list[Any] = [1, 1, "1", "é\\u0041", 2**62, 0]
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            responses = await asyncio.gather(*(
                http.post(url, content=body, headers=headers)
                for body, headers in (call_tool(id, "echo", {}) for id in ids)))
    finally:
        await app.aclose()
    assert [r.json()["id"] for r in responses] == ids
    child_ids = [orjson.loads(line)["id"] for line in received.read_bytes().splitlines()]
    assert child_ids[0] == 1  # the bridge's own server/discover, answered: a 2026 child
    assert sorted(child_ids[1:]) == list(range(2, len(ids) + 2))  # unique on the child


@pytest.mark.parametrize(("headers", "status"), [
    ({"Host": "evil.example"}, 421),
    ({"Origin": "http://evil.example"}, 403),
    ({"Origin": "http://localhost:3000"}, 200),
])
async def test_dns_rebinding_defaults(headers: dict[str, str], status: int) -> None:
    app = StdioBridge([*PEER, "answer"])
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            body, sent = call_tool(1, "echo", {})
            response = await http.post(url, content=body, headers={**sent, **headers})
    finally:
        await app.aclose()
    assert response.status_code == status


async def test_a_bearer_token_is_required_when_set() -> None:
    app = StdioBridge([*PEER, "answer"], token="s3cret")
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            body, headers = call_tool(1, "echo", {})
            refused = await http.post(url, content=body, headers=headers)
            wrong = await http.post(url, content=body, headers={
                **headers, "Authorization": "Bearer s3cre"})
            right = await http.post(url, content=body, headers={
                **headers, "Authorization": "Bearer s3cret"})
    finally:
        await app.aclose()
    assert (refused.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert refused.headers["www-authenticate"] == "Bearer"


async def test_session_rules_are_the_sdks() -> None:
    app = StdioBridge(SERVER)
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    init = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    ping = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            missing = await http.post(url, content=ping, headers=headers)
            unknown = await http.post(url, content=ping, headers={**headers,
                                                                   "Mcp-Session-Id": "nope"})
            opened = await http.post(url, content=init, headers=headers)
            session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
            pinged = await http.post(url, content=ping, headers=session)
            deleted = await http.delete(url, headers=session)
            after = await http.post(url, content=ping, headers=session)
    finally:
        await app.aclose()
    assert (missing.status_code, unknown.status_code) == (400, 404)
    assert opened.json()["result"]["serverInfo"]["name"] == "rpcline-test-server"
    assert pinged.json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    assert (deleted.status_code, after.status_code) == (200, 404)


async def test_a_shared_child_asks_no_client_for_roots() -> None:
    from mcp.shared.exceptions import MCPError

    app = StdioBridge(SERVER)
    try:
        async with serving(app, timeout=60) as url, mcp.Client(url, mode="legacy") as client:
            with pytest.raises(MCPError, match="Method not found: roots/list"):
                await client.call_tool("roots", {})
            echoed = await client.call_tool("echo", {"text": "still here"})
    finally:
        await app.aclose()
    assert echoed.content[0].text == "still here"  # type: ignore[union-attr]


async def test_an_abandoned_session_costs_little_memory() -> None:
    """10,000 sessions opened and never closed: each holds its id, an empty mailbox, its sets.
    Measured on the bridge's own objects, the handshake's child already running."""
    app = StdioBridge(SERVER)
    init = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    try:
        async with serving(app, timeout=120) as url, httpx.AsyncClient(timeout=20) as http:
            await http.post(url, content=init, headers=headers)  # starts the child
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(10_000):
                await _asgi_post(app, init)
            per_session = (tracemalloc.get_traced_memory()[0] - before) / 10_000
            tracemalloc.stop()
    finally:
        await app.aclose()
    assert len(app.sessions.open) == 0  # closed by aclose
    print(f"{per_session:.0f} bytes a session")
    assert per_session < 4096, per_session  # DESIGN: at most 64 KB


async def _asgi_post(app: StdioBridge, body: bytes) -> None:
    """One POST straight into the app, no HTTP server (uvicorn's own costs stay out)."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app({"type": "http", "method": "POST", "path": "/mcp", "headers": [
        (b"host", b"127.0.0.1:1"), (b"accept", ACCEPT.encode()),
        (b"content-type", b"application/json")]}, receive, send)
    assert sent[0]["status"] == 200


def test_serve_refuses_to_bind_beyond_loopback_without_allow_lists(capsys: Any) -> None:
    from rpcline.cli import main

    assert main(["serve", "--host", "0.0.0.0", "--", "true"]) == 2
    assert "--allow-host" in capsys.readouterr().err
    os.environ.pop("RPCLINE_TEST_NO_TOKEN", None)
    assert main(["serve", "--token-env", "RPCLINE_TEST_NO_TOKEN", "--", "true"]) == 2


def test_rpcline_serve_serves_then_stops_its_children_on_sigterm() -> None:
    import re
    import signal
    import socket
    import subprocess
    import time

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = subprocess.Popen([sys.executable, "-m", "rpcline", "serve", "--port", str(port),
                              "--", *SERVER], stderr=subprocess.PIPE, text=True)
    try:
        body, headers = call_tool(1, "echo", {"text": "over the wire"})
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.post(f"http://127.0.0.1:{port}/mcp", content=body,
                                    headers=headers, timeout=20).json()
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline and serve.poll() is None
                time.sleep(0.1)
        serve.send_signal(signal.SIGTERM)
        _, err = serve.communicate(timeout=30)
    finally:
        serve.kill()
    assert answer["result"]["content"][0]["text"] == "over the wire"
    assert serve.returncode == -signal.SIGTERM  # uvicorn re-raises it, after a clean shutdown
    pid = int(re.search(r"2026-1: started \S+ \(pid (\d+)\)", err).group(1))  # type: ignore[union-attr]
    assert "1 call forwarded (0 failed by the bridge)" in err.splitlines()[-1]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped: not even a zombie


def test_a_child_runs_on_uvloop() -> None:
    """uvicorn runs the bridge on uvloop when it is installed; uvloop's transports do not
    derive from asyncio's classes, so nothing may check them with isinstance."""
    uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed")
    from rpcline._gateway.shared_child import Limits, SharedChild

    async def handshake() -> bytes | None:
        shared = SharedChild("t", SERVER, limits=Limits(), env=None, cwd=None,
                             log=lambda _: None, on_notification=lambda *_: None)
        await shared.start()
        try:
            call = shared.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "t", "version": "1"}})
            await asyncio.wait_for(call.wait(), 30)
            return call.answer
        finally:
            await shared.stop()

    answer = uvloop.run(handshake())
    assert answer is not None and orjson.loads(answer)["result"]["serverInfo"]["name"] == (
        "rpcline-test-server")
