"""rpcline.bridge when a child or the gateway itself fails: nobody waits forever (issue 37).

Against tests/fault_peer.py, a scripted server that stalls, closes a pipe and lives on,
crashes on its first start or starts slowly, on demand:

- ``request_timeout`` bounds a call from its arrival: the time it waits for room in a
  stuck child's full stdin pipe, or for a slow child to start, counts;
- SIGTERM stops ``rpcline serve`` with a GET stream open and calls in flight: answered if
  they can be within ``--shutdown-grace``, failed -32000 if not; a second signal at once;
- a child that closes its stdin or its stdout and keeps running is noticed on either event
  loop (asyncio's, and uvloop's, which ``rpcline serve`` runs on): every call on it is
  failed, the process is stopped (SIGTERM, then SIGKILL) and a new one serves;
- an exit or a slow start of a new 2026 child is no answer to the bridge's
  ``server/discover`` probe: the next child is probed again, a slow one waited for.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx (the interop extra) is not installed")
pytest.importorskip("anyio", reason="anyio comes with the interop extra")

from _asgi import serving

from rpcline._gateway import bridge_eras as eras
from rpcline._gateway import shared_child
from rpcline.bridge import StdioBridge

PEER = [sys.executable, str(Path(__file__).parent / "fault_peer.py")]
V = "2026-07-28"
ACCEPT = "application/json, text/event-stream"
LOOPS = ["asyncio", pytest.param("uvloop", marks=pytest.mark.skipif(
    importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed"))]


class Log(list[str]):
    def __call__(self, message: str) -> None:
        self.append(message)


def call_tool(id: Any, tool: str, arguments: dict[str, Any] | None = None,
              ) -> tuple[bytes, dict[str, str]]:
    """A 2026-07-28 ``tools/call`` as the SDK's client sends it: body and headers."""
    body = orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": arguments or {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    return body, {"MCP-Protocol-Version": V, "Mcp-Method": "tools/call", "Mcp-Name": tool,
                  "Accept": ACCEPT, "Content-Type": "application/json"}


async def post(http: Any, url: str, request: tuple[bytes, dict[str, str]]) -> Any:
    body, headers = request
    return (await http.post(url, content=body, headers=headers)).json()


async def until(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"still not {what} after {timeout} s"
        await asyncio.sleep(0.02)


async def served(http: Any, url: str, tool: str, timeout: float = 20) -> Any:
    """``tool``'s answer once a child takes it: a call that comes while the child is down
    (its restart backoff) is failed with -32000 Connection closed, and is sent again."""
    deadline = time.monotonic() + timeout
    n = 0
    while True:
        n += 1
        answer = await post(http, url, call_tool(f"again-{n}", tool))
        if "result" in answer or answer["error"]["message"] != "Connection closed":
            return answer
        assert time.monotonic() < deadline, answer
        await asyncio.sleep(0.1)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def run_on(loop: str, main: Callable[[], Awaitable[Any]]) -> Any:
    if loop == "uvloop":
        import uvloop

        return uvloop.run(main())
    return asyncio.run(main())


# --- 4: the request timeout covers the whole call ------------------------------------------------


@pytest.mark.anyio
async def test_the_request_timeout_bounds_a_call_waiting_for_room_in_a_full_input() -> None:
    app = StdioBridge(PEER, request_timeout=1)
    try:
        async with serving(app, timeout=90) as url, httpx.AsyncClient(timeout=30) as http:
            stalled = await post(http, url, call_tool(1, "stall"))  # it reads no more
            # 300 KB more than its stdin pipe and the transport's buffer take: full.
            filled = await post(http, url, call_tool(2, "echo", {"fill": "x" * 300_000}))
            assert app.modern.children[0].congested is not None  # its input is full
            waiting = await asyncio.gather(*(post(http, url, call_tool(n, "echo"))
                                             for n in range(3, 8)))
    finally:
        await app.aclose()
    for answer in (stalled, filled, *waiting):
        assert answer["error"]["code"] == -32000
        assert answer["error"]["message"] == "Request timed out"
    assert [answer["id"] for answer in waiting] == [3, 4, 5, 6, 7]
    assert "1 s" in waiting[0]["error"]["data"]


@pytest.mark.anyio
async def test_the_request_timeout_bounds_a_call_waiting_for_a_slow_child(
        monkeypatch: Any) -> None:
    monkeypatch.setenv("PEER_SLOW", "3")
    app = StdioBridge(PEER, env=["PEER_SLOW"], request_timeout=0.5)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=30) as http:
            early = await post(http, url, call_tool(1, "era"))
            deadline = time.monotonic() + 30
            later = await served(http, url, "era")  # timed out too, until it is ready
            while "error" in later and time.monotonic() < deadline:
                assert later["error"]["message"] == "Request timed out", later
                later = await served(http, url, "era")
    finally:
        await app.aclose()
    assert early["error"]["message"] == "Request timed out"
    assert later["result"]["era"] == V and not app.handshake_only


# --- 5: SIGTERM stops rpcline serve, whatever is open ----------------------------------------------


def start_serve(tmp_path: Path, *options: str) -> tuple[subprocess.Popen[str], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PEER_LOG": str(tmp_path / "received.jsonl")}
    serve = subprocess.Popen(
        [sys.executable, "-m", "rpcline", "serve", "--port", str(port), "--env", "PEER_LOG",
         *options, "--", *PEER], stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return serve, f"http://127.0.0.1:{port}/mcp"
        except OSError:
            assert time.monotonic() < deadline and serve.poll() is None, serve.stderr
            time.sleep(0.1)


async def open_stream(http: Any, url: str) -> tuple[asyncio.Task[list[str]], str]:
    """A 2025-era session and its GET stream (as the SDK's clients keep one); the task
    ends with the stream, returning what it read."""
    init = orjson.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    opened = await http.post(url, content=init, headers=headers)
    session = opened.headers["mcp-session-id"]
    started = asyncio.Event()

    async def listen() -> list[str]:
        async with http.stream("GET", url, headers={
                "Accept": "text/event-stream", "Mcp-Session-Id": session}) as response:
            assert response.status_code == 200
            started.set()
            return [line async for line in response.aiter_lines()]

    task = asyncio.create_task(listen())
    await asyncio.wait_for(started.wait(), 20)
    return task, session


def pids(err: str) -> list[int]:
    return [int(pid) for pid in re.findall(r": started \S+ \(pid (\d+)\)", err)]


@pytest.mark.anyio
async def test_sigterm_answers_what_it_can_fails_the_rest_and_exits(tmp_path: Path) -> None:
    serve, url = start_serve(tmp_path)  # the default --shutdown-grace
    received = tmp_path / "received.jsonl"
    try:
        async with httpx.AsyncClient(timeout=600) as http:  # the client never gives up first
            stream, _ = await open_stream(http, url)
            waiting = asyncio.create_task(post(http, url, call_tool("w", "wait")))
            slow = asyncio.create_task(post(http, url, call_tool("s", "slow", {"seconds": 2})))
            await until(lambda: received.exists()
                        and received.read_bytes().count(b'"tools/call"') == 2, "in flight")
            serve.send_signal(signal.SIGTERM)
            answers = await asyncio.wait_for(asyncio.gather(waiting, slow, stream), 40)
            returncode = await asyncio.to_thread(serve.wait, 40)
    finally:
        serve.kill()
        _, err = serve.communicate()
    waited, slept, streamed = answers
    assert slept["result"] == {"slept": 2}  # answered within the grace
    assert waited["error"] == {"code": -32000, "message": "Connection closed",
                               "data": "the bridge is stopping"}
    assert streamed == []  # the stream ended, cleanly
    assert returncode == -signal.SIGTERM, err
    assert "calls forwarded" in err.splitlines()[-1], err
    assert len(pids(err)) == 2 and all(gone(pid) for pid in pids(err)), err


@pytest.mark.anyio
async def test_a_second_signal_stops_rpcline_serve_at_once(tmp_path: Path) -> None:
    serve, url = start_serve(tmp_path, "--shutdown-grace", "600")
    received = tmp_path / "received.jsonl"
    try:
        async with httpx.AsyncClient(timeout=600) as http:  # the client never gives up first
            waiting = asyncio.create_task(post(http, url, call_tool("w", "wait")))
            await until(lambda: received.exists() and b'"wait"' in received.read_bytes(),
                        "in flight")
            serve.send_signal(signal.SIGTERM)
            await asyncio.sleep(0.5)
            serve.send_signal(signal.SIGTERM)
            returncode = await asyncio.to_thread(serve.wait, 30)  # far less than the grace
            waiting.cancel()
    finally:
        serve.kill()
        _, err = serve.communicate()
    assert returncode == -signal.SIGTERM, err
    assert pids(err) and all(gone(pid) for pid in pids(err)), err


# --- 6: a child that closes a pipe and lives on -------------------------------------------------


@pytest.mark.parametrize("loop", LOOPS)
@pytest.mark.parametrize("pipe", ["input", "output"])
def test_a_child_that_closes_a_pipe_and_lives_on_is_stopped_and_replaced(
        loop: str, pipe: str) -> None:
    log = Log()

    async def main() -> tuple[Any, ...]:
        app = StdioBridge(PEER, log=log, kill_after=0.5)
        try:
            async with serving(app, timeout=90) as url, httpx.AsyncClient(timeout=30) as http:
                first = await post(http, url, call_tool(1, "era"))
                waiting = asyncio.ensure_future(post(http, url, call_tool(2, "wait")))
                await until(lambda: app.modern.in_flight == 1, "written")
                # It closes the pipe, ignores SIGTERM, and sleeps: only SIGKILL ends it.
                closed = await post(http, url, call_tool(3, f"close_{pipe}", {"stubborn": True}))
                waited = await waiting
                again = await served(http, url, "era")
                old = first["result"]["pid"]
                await until(lambda: gone(old), "reaped")
        finally:
            await app.aclose()
        return first, closed, waited, again

    first, closed, waited, again = run_on(loop, main)
    cause = f"the server closed its {pipe}"
    assert closed["error"] == waited["error"] == {
        "code": -32000, "message": "Connection closed", "data": cause}
    assert again["result"]["era"] == V and again["result"]["pid"] != first["result"]["pid"]
    assert f"2026-1: {cause}; stopping it" in log
    assert any("did not exit" in m and "SIGTERM" in m and "killing it" in m for m in log), log


@pytest.mark.anyio
async def test_a_call_that_replaces_a_child_that_closed_its_input_ends_what_it_left(
        monkeypatch: Any) -> None:
    """The next call may come before the bridge gives up on the old process (it waits a
    moment for an exit): starting the new one fails the old one's calls and stops it."""
    monkeypatch.setattr(shared_child, "EXIT_GRACE", 60)  # the next call comes first
    app = StdioBridge(PEER, kill_after=0.5)
    try:
        async with serving(app, timeout=90) as url, httpx.AsyncClient(timeout=30) as http:
            first = await post(http, url, call_tool(1, "era"))
            waiting = asyncio.ensure_future(post(http, url, call_tool(2, "wait")))
            await until(lambda: app.modern.in_flight == 1, "written")
            closing = asyncio.ensure_future(
                post(http, url, call_tool(3, "close_input", {"stubborn": True})))
            child = app.modern.children[0]
            await until(lambda: child.gone == "the server closed its input", "noticed")
            again = await post(http, url, call_tool(4, "era"))
            left = await asyncio.gather(waiting, closing)
            old = first["result"]["pid"]
            await until(lambda: gone(old), "reaped")
    finally:
        await app.aclose()
    assert again["result"]["pid"] != first["result"]["pid"]
    for answer in left:
        assert answer["error"]["data"] == "the server closed its input"


# --- 7: one probe that failed is not forever ------------------------------------------------------


@pytest.mark.anyio
async def test_a_2026_child_that_crashes_on_its_first_start_is_probed_again(
        tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("PEER_FIRST", str(tmp_path / "started once"))
    log = Log()
    app = StdioBridge(PEER, env=["PEER_FIRST"], log=log)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=30) as http:
            crashed = await post(http, url, call_tool(1, "era"))
            again = await served(http, url, "era")
    finally:
        await app.aclose()
    assert crashed["error"]["message"] == "Connection closed"
    assert "exited with status 3" in crashed["error"]["data"]
    assert again["result"]["era"] == V  # a 2026 child served it, probed again
    assert not app.handshake_only
    assert any("exited with status 3" in m for m in log), log
    assert not any("handshake era only" in m for m in log), log


@pytest.mark.anyio
async def test_a_2026_child_slower_than_the_probes_patience_is_waited_for(
        monkeypatch: Any) -> None:
    monkeypatch.setattr(eras, "SLOW_PROBE", 0.5)  # the log says so past it, and waits on
    monkeypatch.setenv("PEER_SLOW", "2")
    log = Log()
    app = StdioBridge(PEER, env=["PEER_SLOW"], log=log)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=30) as http:
            answer = await post(http, url, call_tool(1, "era"))
    finally:
        await app.aclose()
    assert answer["result"]["era"] == V
    assert not app.handshake_only
    assert "2026-1: no answer to server/discover in 0.5 s yet; waiting for it" in log, log
