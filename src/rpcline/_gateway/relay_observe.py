"""The proxy's calls told to ``observe.Hooks``: each client request the relay forwards.

The relay keeps the caller's ids toward the server, so a call is known by its id from the
request the client sent to the answer the server gives (or the -32000 the relay makes up
when the server goes); two in flight with one id end in the order they were sent. Both
sides are pipes (``network.transport=pipe``); the protocol version is the one the
server's answer to ``initialize`` names (2025-era stdio), the client's proposal until then
(a client may send more before the answer), else unknown.
"""

from __future__ import annotations

import time
from typing import Any

from rpcline._core.route import Route, route
from rpcline._gateway import otel_lines
from rpcline._gateway.observe import CallStarted, Hooks, Watch

CHILD = "server"  # the child's name in the relay's log


class PipeWatches:
    """The calls in flight through a relay, by the caller's id, each with its ``Watch``."""

    __slots__ = ("calls", "hooks", "protocol_version", "server")

    def __init__(self, hooks: Hooks, server: str | None = None) -> None:
        self.hooks = hooks
        self.server = server
        self.calls: dict[Any, list[Watch]] = {}
        self.protocol_version: str | None = None

    def sent(self, r: Route) -> bytes:
        """A client request to forward, told to the hooks: its line toward the server
        (``child_meta``'s entries spliced into it)."""
        assert r.method is not None and r.id is not None
        if r.method == "initialize":
            self.protocol_version = otel_lines.protocol_version(r, r.params_span)
        version = self.protocol_version
        started = CallStarted(r.method, otel_lines.target(r), r.id,
                              "2025" if version is not None and version < "2026" else "2026",
                              None, version, self.server, None, None, "pipe", (), r,
                              time.perf_counter())
        w = Watch(self.hooks, started)
        self.calls.setdefault(r.id, []).append(w)
        line = w.to_child(CHILD, r).line
        assert type(line) is bytes
        return line

    def ended(self, id: Any, answer: bytes | None) -> None:
        """The call with ``id`` answered (``answer`` None: cancelled, never answered)."""
        waiting = self.calls.get(id)
        if not waiting:
            return
        w = waiting.pop(0)
        if not waiting:
            del self.calls[id]
        if w.started.method == "initialize" and answer is not None:
            answered = route(answer)
            self.protocol_version = otel_lines.protocol_version(answered,
                                                                answered.result_span)
        w.end(answer, id)
