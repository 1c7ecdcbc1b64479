"""2025-era sessions sharing one child: each gets the notifications that concern it.

Raw HTTP sessions against tests/bridge_peer.py, which writes whatever notifications a test
asks for: ``list_changed`` reaches every session's GET stream, ``resources/updated`` the
sessions subscribed to its uri, ``notifications/message`` the sessions at or below its
level; a session's ``notifications/cancelled`` reaches the child with the child's own id;
a client that never reads its stream costs a bounded amount of memory.
"""

from __future__ import annotations

import asyncio
import json
import socket
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
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def request(id: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}})


def notification(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


async def open_session(http: Any, url: str) -> dict[str, str]:
    opened = await http.post(url, headers=ACCEPT, content=request(0, "initialize", {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}))
    assert opened.json()["result"]["serverInfo"]["name"] == "bridge-peer"
    return {**ACCEPT, "Mcp-Session-Id": opened.headers["mcp-session-id"]}


async def listen(http: Any, url: str, headers: dict[str, str], into: list[Any],
                 started: asyncio.Event) -> None:
    """A session's GET stream, each event's message appended to ``into``."""
    async with http.stream("GET", url, headers=headers) as response:
        assert response.status_code == 200
        started.set()
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                into.append(json.loads(line[6:]))


async def test_each_session_gets_the_notifications_that_concern_it() -> None:
    app = StdioBridge(PEER)
    updated = notification("notifications/resources/updated", {"uri": "test://a"})
    changed = notification("notifications/tools/list_changed", {})
    info = notification("notifications/message", {"level": "info", "data": "i"})
    error = notification("notifications/message", {"level": "error", "data": "e"})
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            a, b = await open_session(http, url), await open_session(http, url)
            seen: dict[str, list[Any]] = {"a": [], "b": []}
            listening = []
            for name, headers in (("a", a), ("b", b)):
                started = asyncio.Event()
                listening.append(asyncio.create_task(listen(http, url, headers, seen[name],
                                                            started)))
                await started.wait()
            assert (await http.post(url, headers=a, content=request(
                1, "resources/subscribe", {"uri": "test://a"}))).json()["result"] == {}
            assert (await http.post(url, headers=b, content=request(
                1, "logging/setLevel", {"level": "error"}))).json()["result"] == {}
            await http.post(url, headers=a, content=request(2, "tools/call", {
                "name": "notify", "arguments": {"messages": [updated, changed, info, error]}}))
            await asyncio.sleep(0.3)
            for task in listening:
                task.cancel()
    finally:
        await app.aclose()
    assert seen["a"] == [updated, changed, info, error]
    assert seen["b"] == [changed, error]


async def test_a_sessions_cancellation_reaches_the_child_with_its_own_id(
        tmp_path: Path, monkeypatch: Any) -> None:
    received = tmp_path / "received.jsonl"
    monkeypatch.setenv("PEER_LOG", str(received))
    app = StdioBridge(PEER, env=["PEER_LOG"])
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            session = await open_session(http, url)
            waiting = asyncio.create_task(http.post(url, headers=session, content=request(
                "mine", "tools/call", {"name": "wait", "arguments": {}})))
            await asyncio.sleep(0.3)
            cancel = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                   "params": {"requestId": "mine", "reason": "no longer"}})
            assert (await http.post(url, headers=session, content=cancel)).status_code == 202
            await asyncio.wait_for(waiting, 5)  # the call's own POST ends too
            assert app.legacy.in_flight == 0
    finally:
        await app.aclose()
    sent = [orjson.loads(line) for line in received.read_bytes().splitlines()]
    call = next(m for m in sent if m.get("method") == "tools/call")
    cancelled = next(m for m in sent if m.get("method") == "notifications/cancelled")
    assert cancelled["params"]["requestId"] == call["id"] != "mine"


async def test_a_client_that_never_reads_its_stream_costs_bounded_memory() -> None:
    """3,000 notifications of 8 KB (24 MB) for a session whose GET stream is never read:
    the bridge holds at most its bound (1 MiB) for it, the rest is dropped, and other
    sessions are served meanwhile."""
    app = StdioBridge(PEER)
    big = notification("notifications/message", {"level": "info", "data": "x" * 8000})
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            deaf = await open_session(http, url)
            host, port = url.split("/")[2].split(":")
            with socket.create_connection((host, int(port))) as stalled:
                stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                stalled.sendall(f"GET /mcp HTTP/1.1\r\nHost: {host}:{port}\r\n"
                                "Accept: text/event-stream\r\n"
                                f"Mcp-Session-Id: {deaf['Mcp-Session-Id']}\r\n\r\n".encode())
                await asyncio.sleep(0.3)
                for _ in range(30):
                    await http.post(url, headers=deaf, content=request(1, "tools/call", {
                        "name": "notify", "arguments": {"messages": [big] * 100}}))
                other = await open_session(http, url)
                pong = await http.post(url, headers=other, content=request(9, "ping"))
                mailbox = app.sessions.open[deaf["Mcp-Session-Id"]].mailbox
                held, dropped = mailbox.note_bytes, mailbox.dropped
    finally:
        await app.aclose()
    assert pong.json()["id"] == 9
    assert held <= 1024 * 1024 and dropped > 2000  # most of the 24 MB never held


async def test_past_max_sessions_the_least_recently_used_idle_one_ends() -> None:
    app = StdioBridge(PEER, max_sessions=3)
    ping = request(5, "ping")
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            a, b, c = [await open_session(http, url) for _ in range(3)]
            await http.post(url, headers=a, content=ping)  # b is now the least recently used
            d = await open_session(http, url)
            statuses = [(await http.post(url, headers=s, content=ping)).status_code
                        for s in (a, b, c, d)]
            streams = []
            for headers in (a, c, d):  # every open session busy: none can end
                started = asyncio.Event()
                streams.append(asyncio.create_task(listen(http, url, headers, [], started)))
                await started.wait()
            refused = await http.post(url, headers=ACCEPT, content=request(0, "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}))
            for task in streams:
                task.cancel()
    finally:
        await app.aclose()
    assert statuses == [200, 404, 200, 200]
    assert refused.status_code == 503 and refused.json()["error"]["message"] == (
        "Too many open sessions")
