"""End to end: the MCP SDK's Streamable HTTP client and server, with rpcline.sse between them.

An ASGI relay in front of the SDK's server app parses every SSE response body with
``EventStreamParser(classify=route)`` and writes each event again with ``sse.encode``
(the message's own bytes, never re-encoded JSON). uvicorn serves it on 127.0.0.1; the
SDK's client runs a session (initialize, tools/list, tools/call) through it, and the
session must come out exactly as it does without the relay. The server keeps an event
store, so its responses carry event ids and it primes each stream with an empty event.
"""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed: there is no Streamable HTTP client or server to relay")
uvicorn = pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed: "
                              "nothing to serve the relay with")
anyio = pytest.importorskip("anyio", reason="anyio comes with the MCP SDK")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp.server.streamable_http import EventStore  # noqa: E402

from _asgi import serving, two_tool_server  # noqa: E402

import rpcline  # noqa: E402
from rpcline import sse  # noqa: E402


class MemoryEventStore(EventStore):
    """Event ids for every message (replay is not exercised: nothing reconnects)."""

    def __init__(self) -> None:
        self.ids = count()

    async def store_event(self, stream_id: str, message: Any) -> str:
        return f"{stream_id}-{next(self.ids)}"

    async def replay_events_after(self, last_event_id: str, send_callback: Any) -> None:
        return None


class Relay:
    """An ASGI app that forwards to ``app`` and relays its SSE bodies through rpcline.sse."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.enabled = True
        self.events: list[sse.Event] = []

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not self.enabled:
            return await self.app(scope, receive, send)
        parser: sse.EventStreamParser | None = None

        async def relay(message: dict) -> None:
            nonlocal parser
            if message["type"] == "http.response.start":
                headers = dict(message.get("headers", []))
                if headers.get(b"content-type", b"").startswith(b"text/event-stream"):
                    parser = sse.EventStreamParser(classify=rpcline.route)
            elif message["type"] == "http.response.body" and parser is not None:
                events = parser.feed(message.get("body", b""))
                if not message.get("more_body", False):
                    events += parser.close()
                self.events += events
                message = {**message, "body": b"".join(map(_encode, events))}
            await send(message)

        await self.app(scope, receive, relay)


def _encode(event: sse.Event) -> bytes:
    line = event.message.line if event.message is not None else b""  # None: the priming event
    return sse.encode(line, event.event, event.id or None)


async def _session(url: str) -> list[dict]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        initialized = await session.initialize()
        tools = await session.list_tools()
        added = await session.call_tool("add", {"a": 2**70, "b": 1})
        echoed = await session.call_tool("echo", {"text": "é\n" + "x" * 100_000})
        return [result.model_dump(mode="json") for result in (initialized, tools, added, echoed)]


def test_an_sdk_session_passes_through_the_relay_unchanged():
    app = two_tool_server("rpcline-sse-e2e").streamable_http_app(
        event_store=MemoryEventStore(), retry_interval=500)
    relay = Relay(app)

    async def main() -> tuple[list[dict], list[dict]]:
        async with serving(relay) as url:
            relay.enabled = False
            direct = await _session(url)
            relay.enabled = True
            relayed = await _session(url)
        return direct, relayed

    direct, relayed = anyio.run(main)
    assert relayed == direct
    assert relayed[2]["structured_content"] == {"result": 2**70 + 1}
    kinds = [event.message and event.message.kind for event in relay.events]
    assert kinds.count("response") == 4 and "refused" not in kinds
    assert None in kinds  # the priming events (empty data, with an id) went through too
    assert all(event.id for event in relay.events)
    # The priming event's retry reached the parser; encode writes no retry field, so the
    # relayed client falls back to its default reconnection delay (nothing reconnects here).
    assert {event.retry for event in relay.events} == {500}
