"""The bridge's hooks: plain callables given frozen records of each call (``Hooks``).

As aiohttp's ``TraceConfig``: each call through a bridge gets one ``ctx`` (a
``SimpleNamespace``) that its hooks share; ``on_call_start(ctx, CallStarted)`` when a
request is to be forwarded, ``on_child_request(ctx, ChildRequest)`` when it is written to a
child, ``on_call_end(ctx, CallEnded)`` once its answer was sent (or it was refused).
``child_meta(ctx)`` returns what to splice into ``params._meta`` toward the child (the W3C
trace context of a tracer's CLIENT span). Beside calls: ``on_session_start(SessionStarted)``
and ``on_session_end(SessionEnded)`` for each 2025-era session, ``on_child_restart
(ChildRestarted)`` for each start of a child that had run before. A bridge without hooks
does none of this: one attribute test a call.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Final

from rpcline._core.route import Route, route
from rpcline._core.shared import RequestId
from rpcline._gateway import otel_lines

Headers = Sequence[tuple[bytes, bytes]]


@dataclass(frozen=True, slots=True)
class CallStarted:
    """A request the bridge is about to forward (it may still be refused: 429, 503)."""

    method: str
    target: str | None  # params.name (tools/call, prompts/get) or params.uri (resources)
    caller_id: RequestId
    era: str  # "2026" (2026-07-28) or "2025" (the handshake era)
    session_id: str | None  # a 2025-era session's Mcp-Session-Id
    protocol_version: str | None
    server: str | None  # the bridge's name (a router's server name)
    client_address: str | None
    client_port: int | None
    transport: str  # "tcp": HTTP; "pipe": stdio
    headers: Headers = field(repr=False)  # the HTTP request's (trace context without _meta)
    route: Route = field(repr=False)
    at: float  # time.perf_counter()


@dataclass(frozen=True, slots=True)
class ChildRequest:
    """The request written to a child (``child``: its name, as in the log)."""

    child: str
    at: float


@dataclass(frozen=True, slots=True)
class CallEnded:
    """The call's end: the HTTP ``status`` sent (0 over a pipe: ``rpcline proxy``), the
    child's id for it (None: never sent to a child; the caller's own through the proxy),
    the answer's JSON-RPC ``error_code`` and the conventions' ``error_type`` (the code as
    a string, ``tool_error`` for a tool's ``isError: true``; None: success),
    and the seconds since ``CallStarted`` (``child_duration``: since ``ChildRequest``)."""

    status: int
    child_id: RequestId | None
    error_code: int | None
    error_type: str | None
    duration: float
    child_duration: float | None
    answer_bytes: int


@dataclass(frozen=True, slots=True)
class SessionStarted:
    """A 2025-era session opened (its ``Mcp-Session-Id``), on a bridge named ``server``."""

    session_id: str
    protocol_version: str | None
    server: str | None


@dataclass(frozen=True, slots=True)
class SessionEnded:
    """A session's end, ``duration`` seconds after it opened; ``error_type`` None when the
    client ended it (DELETE) or the bridge stopped, ``evicted`` (past ``max_sessions``),
    ``timeout`` (idle past ``session_idle_timeout``)."""

    session_id: str
    protocol_version: str | None
    server: str | None
    duration: float
    error_type: str | None


@dataclass(frozen=True, slots=True)
class ChildRestarted:
    """A child (its name, as in the log: ``2025-1``) started again after a process ended."""

    child: str
    server: str | None


Hook = Callable[[SimpleNamespace, Any], None]
Told = Callable[[Any], None]  # a hook given the record alone (sessions, restarts)


class Hooks:
    """The callables a bridge calls for each call (see the module's text)."""

    __slots__ = ("on_call_start", "on_child_request", "on_call_end", "child_meta",
                 "on_session_start", "on_session_end", "on_child_restart")

    def __init__(self, *, on_call_start: Iterable[Hook] = (),
                 on_child_request: Iterable[Hook] = (), on_call_end: Iterable[Hook] = (),
                 child_meta: Callable[[SimpleNamespace], Mapping[str, str]] | None = None,
                 on_session_start: Iterable[Told] = (), on_session_end: Iterable[Told] = (),
                 on_child_restart: Iterable[Told] = ()) -> None:
        self.on_call_start = tuple(on_call_start)
        self.on_child_request = tuple(on_child_request)
        self.on_call_end = tuple(on_call_end)
        self.child_meta = child_meta
        self.on_session_start = tuple(on_session_start)
        self.on_session_end = tuple(on_session_end)
        self.on_child_restart = tuple(on_child_restart)

    def tell(self, hooks: tuple[Told, ...], record: Any) -> None:
        for hook in hooks:
            hook(record)


class Watch:
    """One call's observation: its ctx, its start, its child request."""

    __slots__ = ("hooks", "ctx", "started", "child_at", "status", "body", "call")

    def __init__(self, hooks: Hooks, started: CallStarted) -> None:
        self.hooks = hooks
        self.ctx = SimpleNamespace()
        self.started = started
        self.child_at: float | None = None
        self.status = 0
        self.body = b""
        self.call: Any = None  # the bridge's ``Call``, once it has one
        for hook in hooks.on_call_start:
            hook(self.ctx, started)

    def to_child(self, child: str, r: Route) -> Route:
        """``ChildRequest`` told; the request with ``child_meta``'s entries spliced in."""
        self.child_at = time.perf_counter()
        for hook in self.hooks.on_child_request:
            hook(self.ctx, ChildRequest(child, self.child_at))
        meta = self.hooks.child_meta
        if meta is None:
            return r
        entries = meta(self.ctx)
        return route(otel_lines.splice_meta(r, entries)) if entries else r

    def noted(self, message: Mapping[str, Any]) -> None:
        """An ASGI message sent for this call: its status, the start of its body."""
        if message["type"] == "http.response.start":
            self.status = message["status"]
        elif message["type"] == "http.response.body" and not self.body:
            self.body = message.get("body", b"")

    def end(self, answer: bytes | None, child_id: RequestId | None) -> None:
        now = time.perf_counter()
        code, kind = outcome(self.started.method, answer if answer is not None else self.body)
        ended = CallEnded(self.status, child_id, code, kind, now - self.started.at,
                          None if self.child_at is None else now - self.child_at,
                          len(answer) if answer is not None else len(self.body))
        for hook in self.hooks.on_call_end:
            hook(self.ctx, ended)


def outcome(method: str, answer: bytes) -> tuple[int | None, str | None]:
    """The answer's error code and the conventions' ``error.type`` (None: a success)."""
    if not answer or answer[:1] != b"{":
        return None, None
    r = route(answer)
    if r.kind != "response":
        return None, None
    if r.error_span is not None:
        code = otel_lines.error_code(r)
        return code, "_OTHER" if code is None else str(code)
    if method == "tools/call" and otel_lines.is_tool_error(r):
        return None, "tool_error"
    return None, None


WATCH: Final[ContextVar[Watch | None]] = ContextVar("rpcline_watch", default=None)


def watch(hooks: Hooks, scope: Mapping[str, Any], r: Route, era: str,
          session_id: str | None, server: str | None, name: str | None) -> Watch:
    """A ``Watch`` of an HTTP request's call (``name``: its target when a Guard read it)."""
    assert r.method is not None and r.id is not None
    headers = scope["headers"]
    version = next((v.decode("latin-1") for k, v in headers if k == b"mcp-protocol-version"),
                   None)
    client = scope.get("client")
    started = CallStarted(
        r.method, name if name is not None else otel_lines.target(r), r.id, era, session_id,
        version, server, None if client is None else client[0],
        None if client is None else client[1], "tcp", headers, r, time.perf_counter())
    return Watch(hooks, started)
