"""Fair limits: one client cannot take a shared child from the others.

tests/bridge_peer.py's tool ``wait`` never answers, so a client's calls stay in flight for
as long as a test wants: past ``max_in_flight_per_client`` its next call is answered 429
(``Retry-After``, a JSON-RPC error with its id), while another client's calls on the same
child are answered meanwhile. A client is a 2025-era session, a 2026-07-28 request's bearer
token, or else its address. However a call ends (answered, timed out, its client gone, its
session ended) it stops counting. Past ``max_waiting`` calls waiting for a child, 503.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest

pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx (the interop extra) is not installed")
pytest.importorskip("anyio", reason="anyio comes with the interop extra")

from _asgi import serving
from test_bridge_sessions import ACCEPT, PEER, open_session, request

from rpcline._gateway import fair
from rpcline.bridge import StdioBridge

pytestmark = pytest.mark.anyio
V = "2026-07-28"
# A server that reads every line and answers none: its 2026 probe never comes back, so the
# calls of that era wait for it to start.
SILENT = [sys.executable, "-c", "import sys; sys.stdin.read()"]


def tool(id: Any, name: str) -> bytes:
    return request(id, "tools/call", {"name": name, "arguments": {}})


def modern(id: Any, name: str, token: str | None = None) -> dict[str, Any]:
    """httpx.post's arguments for a 2026-07-28 ``tools/call``, with ``token`` as a bearer."""
    body = orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    headers = {**ACCEPT, "MCP-Protocol-Version": V, "Mcp-Method": "tools/call",
               "Mcp-Name": name}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return {"content": body, "headers": headers}


async def until(condition: Callable[[], bool]) -> None:
    """Wait for the bridge to reach a state (the test's own timeout bounds it)."""
    while not condition():
        await asyncio.sleep(0.01)


def in_flight(app: StdioBridge) -> list[int]:
    return sorted(app.per_client.counts.values())


def assert_refused(response: Any, status: int, id: Any, data: str) -> None:
    assert response.status_code == status
    assert response.headers["retry-after"] == "1"
    answer = response.json()
    assert answer["id"] == id and answer["error"]["code"] == -32000
    assert data in answer["error"]["data"]


async def blocked_then_others_served(
        app: StdioBridge, first: Callable[[Any, str], Awaitable[Any]],
        second: Callable[[Any, str], Awaitable[Any]]) -> tuple[Any, list[Any]]:
    """``first`` holds 2 calls that never end; its third is refused; ``second``'s calls
    are answered while ``first``'s still wait. The refusal and the answers, as they came."""
    held = [asyncio.create_task(first(n, "wait")) for n in (1, 2)]
    await until(lambda: in_flight(app) == [2])
    refused = await first(3, "echo")
    served = await asyncio.gather(*(second(n, "echo") for n in (1, 2)))
    assert not any(task.done() for task in held)  # still blocked while the others went on
    assert in_flight(app) == [2]  # the refused call never counted
    for task in held:
        task.cancel()
    return refused, served


async def test_a_session_past_its_bound_is_refused_while_another_is_served() -> None:
    app = StdioBridge(PEER, max_in_flight_per_client=2)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            a, b = await open_session(http, url), await open_session(http, url)

            async def as_a(id: Any, name: str) -> Any:
                return await http.post(url, headers=a, content=tool(id, name))

            async def as_b(id: Any, name: str) -> Any:
                return await http.post(url, headers=b, content=tool(id, name))

            refused, served = await blocked_then_others_served(app, as_a, as_b)
            assert refused.headers["mcp-session-id"] == a["Mcp-Session-Id"]
            await http.delete(url, headers=a)  # ends A's calls: nothing stays counted
            await until(lambda: in_flight(app) == [])
    finally:
        await app.aclose()
    assert_refused(refused, 429, 3, "this session has 2 calls in flight "
                   "(--max-in-flight-per-client 2)")
    assert [r.json() for r in served] == [{"jsonrpc": "2.0", "id": n, "result": {}}
                                          for n in (1, 2)]


async def test_2026_requests_count_by_bearer_token() -> None:
    app = StdioBridge(PEER, max_in_flight_per_client=2)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:

            async def as_a(id: Any, name: str) -> Any:
                return await http.post(url, **modern(id, name, token="token-a"))

            async def as_b(id: Any, name: str) -> Any:
                return await http.post(url, **modern(id, name, token="token-b"))

            refused, served = await blocked_then_others_served(app, as_a, as_b)
            await until(lambda: in_flight(app) == [])  # the clients that left
    finally:
        await app.aclose()
    assert_refused(refused, 429, 3, "this bearer token has 2 calls in flight")
    assert "token-a" not in refused.text
    assert [r.json() for r in served] == [{"jsonrpc": "2.0", "id": n, "result": {}}
                                          for n in (1, 2)]


@pytest.mark.parametrize("token", [None, "shared"])
async def test_2026_requests_count_by_address_without_a_token_of_their_own(
        token: str | None) -> None:
    """No Authorization, or the one token every client of ``token=`` holds: the peer's
    host tells clients apart (127.0.0.1 and 127.0.0.2, both loopback)."""
    app = StdioBridge(PEER, max_in_flight_per_client=2, token=token)
    other = httpx.AsyncHTTPTransport(local_address="127.0.0.2")
    try:
        async with (serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http,
                    httpx.AsyncClient(timeout=20, transport=other) as http2):

            async def as_a(id: Any, name: str) -> Any:
                return await http.post(url, **modern(id, name, token))

            async def as_b(id: Any, name: str) -> Any:
                return await http2.post(url, **modern(id, name, token))

            refused, served = await blocked_then_others_served(app, as_a, as_b)
            await until(lambda: in_flight(app) == [])
    finally:
        await app.aclose()
    assert_refused(refused, 429, 3, "this address (127.0.0.1) has 2 calls in flight")
    assert [r.status_code for r in served] == [200, 200]


async def next_call_is_served(app: StdioBridge, http: Any, url: str,
                              session: dict[str, str]) -> None:
    """Nothing counted any more, and the session's next call goes through (bound 1)."""
    await until(lambda: in_flight(app) == [])
    answered = await http.post(url, headers=session, content=tool("next", "echo"))
    assert answered.json()["result"] == {}


async def test_a_call_stops_counting_however_it_ends() -> None:
    """Bound 1: each way a call ends leaves room for the next one (no leak)."""
    app = StdioBridge(PEER, max_in_flight_per_client=1)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            session = await open_session(http, url)
            next_served = functools.partial(next_call_is_served, app, http, url, session)
            await next_served()  # answered
            gone = httpx.AsyncClient(timeout=httpx.Timeout(5, read=0.2))
            with pytest.raises(httpx.ReadTimeout):  # its client leaves before the answer
                await gone.post(url, headers=session, content=tool(2, "wait"))
            await gone.aclose()
            await next_served()
            held = asyncio.create_task(http.post(url, headers=session, content=tool(3, "wait")))
            await until(lambda: in_flight(app) == [1])
            refused = await http.post(url, headers=session, content=tool(4, "echo"))
            cancel = orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                   "params": {"requestId": 3}})
            await http.post(url, headers=session, content=cancel)  # cancelled
            await held
            await next_served()
            ended = await open_session(http, url)
            held = asyncio.create_task(http.post(url, headers=ended, content=tool(5, "wait")))
            await until(lambda: in_flight(app) == [1])
            await http.delete(url, headers=ended)  # its session ended
            await held
            await next_served()
    finally:
        await app.aclose()
    assert refused.status_code == 429


async def test_a_call_that_times_out_stops_counting() -> None:
    app = StdioBridge(PEER, max_in_flight_per_client=1, request_timeout=0.5)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            session = await open_session(http, url)
            timed_out = await http.post(url, headers=session, content=tool(1, "wait"))
            assert timed_out.json()["error"]["message"] == "Request timed out"
            await next_call_is_served(app, http, url, session)
    finally:
        await app.aclose()


async def test_past_max_waiting_a_call_is_refused_503() -> None:
    """A 2026 child that never answers its probe: the first call waits for it to start,
    the second has no room to wait."""
    app = StdioBridge(SILENT, max_waiting=1, request_timeout=1)
    try:
        async with serving(app, timeout=60) as url, httpx.AsyncClient(timeout=20) as http:
            waiting = asyncio.create_task(http.post(url, **modern(1, "echo")))
            await until(lambda: app._waiting == 1)
            refused = await http.post(url, **modern(2, "echo"))
            unsent = await waiting  # its time ran out: the room is free again
            assert (app._waiting, in_flight(app)) == (0, [])
    finally:
        await app.aclose()
    assert_refused(refused, 503, 2, "1 calls are waiting for a server to start or to take "
                   "input (--max-waiting 1)")
    assert unsent.json()["error"]["data"].startswith("no server was ready to take it")


def test_the_table_holds_only_clients_with_calls() -> None:
    counted = fair.InFlight(2)
    assert counted.admit(b"a") and counted.admit(b"a") and not counted.admit(b"a")
    assert counted.admit(b"b")
    counted.release(b"a")
    assert counted.admit(b"a")
    for key in (b"a", b"a", b"b"):
        counted.release(key)
    assert counted.counts == {}
    unbounded = fair.InFlight(None)
    assert all(unbounded.admit(b"a") for _ in range(1000))
    with pytest.raises(ValueError, match="max_in_flight_per_client"):
        fair.InFlight(0)
    with pytest.raises(ValueError, match="max_waiting"):
        StdioBridge(PEER, max_waiting=-1)


def test_a_token_is_held_as_a_digest_only() -> None:
    scope = {"headers": [(b"authorization", b"Bearer s3cret")], "client": ("10.0.0.1", 5)}
    client = fair.stateless(scope, by_token=True)
    assert b"s3cret" not in client.key and "s3cret" not in client.shown
    assert client == fair.stateless({**scope, "client": ("10.0.0.2", 6)}, by_token=True)
    assert fair.stateless(scope, by_token=False).shown == "this address (10.0.0.1)"


def test_rpcline_serve_passes_the_bounds_on(monkeypatch: Any) -> None:
    from rpcline import bridge
    from rpcline.cli import main

    given: dict[str, Any] = {}

    class Built(Exception):
        pass

    def bridge_of(command: Any, options: bridge.Options, **changed: Any) -> None:
        given.update(vars(options), **changed)
        raise Built  # no server needed: the options are what this test is about

    monkeypatch.setattr(bridge, "StdioBridge", bridge_of)
    with pytest.raises(Built):
        main(["serve", "--max-in-flight-per-client", "8", "--max-waiting", "0", "--",
              sys.executable])
    assert (given["max_in_flight_per_client"], given["max_waiting"]) == (8, 0)
    with pytest.raises(SystemExit):
        main(["serve", "--max-in-flight-per-client", "0", "--", sys.executable])
