"""A Streamable HTTP gateway for a stdio MCP server: many clients of both eras, shared children.

    from rpcline.bridge import StdioBridge
    app = StdioBridge(["python", "-m", "my_server"], children=1, request_timeout=None)

``StdioBridge`` is an ASGI 3 app serving MCP at ``/mcp``. Requests are forwarded as bytes to
a pool of stdio children with ids of the child's own (``Route.with_id``), and each answer
goes back to its caller with its own id. The era of a request is the SDK's (its
``MCP-Protocol-Version`` header): 2026-07-28 requests are checked by ``http.Guard``'s ladder
and forwarded one by one; 2025-era clients get sessions (``initialize``,
``Mcp-Session-Id``, a GET stream, DELETE), answered from one handshake the bridge makes with
each child itself. A child speaks one era for good, so each era has its own children.
``rpcline serve`` runs it under uvicorn. docs/serve.md says where a shared child differs
from a child of one's own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import signal
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final

import rpcline
from rpcline import http
from rpcline._gateway import bridge_eras as eras
from rpcline._gateway import bridge_lines as lines
from rpcline._gateway import fair, otel_lines, own_requests
from rpcline._gateway.asgi import (HANDSHAKE_PROTOCOL_VERSIONS, TOO_LARGE, VERDICT,
                                   Receive, Scope, Send, is_modern, read_body, respond)
from rpcline._gateway.bridge_health import server_health
from rpcline._gateway.bridge_options import (DEFAULT_SHUTDOWN_GRACE, LOCALHOST_HOSTS,
                                             LOCALHOST_ORIGINS, Options)
from rpcline._gateway.bridge_own import OwnBridge
from rpcline._gateway.bridge_http import (JSON, MCP, NAMED, Headers, accepts, answer_call,
                                          bearer_matches, content_type, is_exactly_json, logged,
                                          modern_refusal, refuse, says_json, stream)
from rpcline._gateway.bridge_sessions import (LEVELS, Session, Sessions, owned_by, owner_of,
                                              param)
from rpcline._gateway.child import child_environment
from rpcline._gateway.observe import WATCH, ChildRestarted, Hooks, watch
from rpcline._gateway.cors import Cors
from rpcline._gateway.input_rounds import Rounds
from rpcline._gateway.own_children import Owner, OwnChildren
from rpcline._gateway.pool import HANDSHAKE_TIMEOUT, Pool
from rpcline._gateway.relay_lines import failure
from rpcline._gateway.router import Router
from rpcline._gateway.shared_child import Call, Limits, SharedChild

__all__ = ("DEFAULT_SHUTDOWN_GRACE", "LOCALHOST_HOSTS", "LOCALHOST_ORIGINS", "Cors", "Options",
           "Router", "StdioBridge")

SESSION_HEADER: Final = b"mcp-session-id"
CLIENT_INFO: Final = {"name": "rpcline-serve", "version": rpcline.__version__}
NEWEST_HANDSHAKE: Final = HANDSHAKE_PROTOCOL_VERSIONS[-1]


def __dir__() -> list[str]:
    return sorted(__all__)


class StdioBridge(OwnBridge):
    """The ASGI app: ``command`` (a stdio MCP server) for every HTTP client at ``path``.

    ``options`` (an ``Options``, checked when it is made) says everything else; keywords
    of the same names give a copy of it with those changed (``Options()``'s defaults when
    there is none): ``StdioBridge(command, children=2)`` is ``StdioBridge(command,
    Options(children=2))``.
    """

    def __init__(self, command: Sequence[str], options: Options | None = None,
                 **overrides: Any) -> None:
        if isinstance(command, str) or not command:
            raise TypeError("command must be a non-empty sequence of str (the program and "
                            "its arguments)")
        if options is None:
            options = Options(**overrides)
        elif overrides:
            options = dataclasses.replace(options, **overrides)
        self.options = o = options
        self.isolation = o.isolation
        self.path = o.path
        self.name = o.name
        self.log = _stderr if o.log is None else o.log
        if o.name is not None:
            self.log = functools.partial(_named, self.log, o.name)
        self.access_log = o.access_log
        self.hooks = o.hooks
        self._token = None if o.token is None else o.token.encode()
        self.max_body_bytes = o.max_body_bytes
        self.request_timeout = o.request_timeout
        self.shutdown_grace = o.shutdown_grace
        self.unsent = 0  # calls answered -32000 before any child took them (their timeout)
        self._waiting = 0  # calls not yet forwarded: waiting for a child, or room in its input
        self.max_waiting = o.max_waiting
        self.per_client = fair.InFlight(o.max_in_flight_per_client)
        self._closing: asyncio.Future[None] | None = None  # aclose, once it began
        self._aborted = False
        limits = Limits(o.max_line_bytes, o.max_pending, o.max_pending_bytes,
                        o.request_timeout, o.kill_after)  # fmt: skip
        shared = dict(limits=limits, env=child_environment(o.env, everything=o.pass_environment),
                      cwd=o.cwd, log=self.log, record=o.record, stderr=o.child_stderr,
                      label=o.name,
                      on_restart=None if o.hooks is None else self._restarted)  # fmt: skip
        self._command, self._child_options = command, shared
        self.modern = Pool("2026", command, o.children, on_notification=self._from_modern,
                           prepare=self._discover, **shared)  # type: ignore[arg-type]
        self.handshake_only = False  # the command answered no server/discover
        self._probed = False  # the first probe was announced
        self.legacy = Pool("2025", command, o.children, on_notification=self._from_legacy,
                           prepare=self._handshake, **shared)  # type: ignore[arg-type]
        key = None if o.session_key is None else o.session_key.encode()
        # The way each caller's children are chosen, once: ``own`` None is the shared pools.
        self.own: OwnChildren | None = None
        if self.isolation == "shared":
            self.sessions = Sessions(key, o.max_sessions, self.legacy)
        else:
            self.sessions = Sessions(key, o.max_sessions, on_close=self._session_closed)
            self.rounds = Rounds()
            self.own = OwnChildren(self.isolation, self._new_owner,
                                   max_children=o.max_children,
                                   idle_timeout=o.session_idle_timeout, prestart=o.prestart,
                                   end=self._end_owner)
            self._modern = self._modern_own  # type: ignore[method-assign]
            self._initialize = self._initialize_own  # type: ignore[method-assign,assignment]
        self.sessions.hooks, self.sessions.server = o.hooks, o.name
        self.initialized: rpcline.Route | None = None  # a legacy child's initialize answer
        # The bridge's own initialize: no sampling, elicitation or roots (no caller to ask);
        # the version the first session asks for, when it is the first to need a child.
        self._handshake_params: dict[str, Any] = {
            "protocolVersion": NEWEST_HANDSHAKE, "capabilities": {}, "clientInfo": CLIENT_INFO}
        self._child_level: str | None = None
        self._guard = http.Guard(self._serve, max_body_bytes=o.max_body_bytes,
                                 allowed_hosts=o.allowed_hosts,
                                 allowed_origins=o.allowed_origins)

    # --- ASGI -----------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return None
        if self.access_log is not None:
            return await logged(self._http, self.access_log, scope, receive, send)
        return await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        if _route_path(scope).rstrip("/") != self.path.rstrip("/"):
            return await respond(send, 404, b"Not Found", [(b"content-type", b"text/plain")])
        if self._token is not None and not bearer_matches(scope["headers"], self._token):
            return await respond(send, 401, b"Unauthorized", [
                (b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")])
        if self._closing is not None:
            return await refuse(send, 503, "Service Unavailable: the bridge is stopping",
                                code=-32000)
        if scope["method"] == "POST" and not says_json(content_type(scope["headers"])):
            # The SDK's first check, in both eras: a form or text/plain is what a browser
            # sends cross-site without asking first.
            return await respond(send, 400, b"Invalid Content-Type header")
        return await self._guard(scope, receive, send)

    async def aclose(self) -> None:
        """Stop: new requests are refused (503); the sessions end, and their GET streams;
        the calls in flight have ``shutdown_grace`` seconds to be answered, then the rest
        fail (-32000); every child is stopped (input closed, then SIGTERM, then SIGKILL);
        the summary goes to the log. A server embedding the bridge calls it when its
        shutdown begins (uvicorn waits for open responses before its lifespan shutdown);
        every call after the first waits for the same end. ``abort`` cuts it short."""
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())
        await asyncio.shield(self._closing)

    def abort(self) -> None:
        """Stop now (an operator's second signal): every child is killed (SIGKILL), and
        ``aclose`` waits for no call."""
        self._aborted = True
        own = () if self.own is None else self.own.children()
        for child in (*self.modern.children, *self.legacy.children, *own):
            child.child.signal(signal.SIGKILL)

    async def _close(self) -> None:
        for session in list(self.sessions.open.values()):
            self.sessions.close(session)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.shutdown_grace
        while self._in_flight() and loop.time() < deadline and not self._aborted:
            await asyncio.sleep(0.05)
        grace = 0.0 if self._aborted else 2.0
        if self.own is not None:
            self.rounds.close()
        own = () if self.own is None else (self.own.close(grace),)
        await asyncio.gather(self.modern.stop(grace), self.legacy.stop(grace), *own)
        self.log(self.summary())

    async def warm(self) -> None:
        """Start the server now rather than for its first call (a gateway of named servers
        does, so that its log and ``/readyz`` tell at once which cannot run): a 2026 child,
        which learns the era, and for a handshake-era server a 2025 child instead."""
        if self.own is not None:  # nobody's child starts before its caller: the warm ones
            return self.own.warm_up()
        await self.modern.pick()
        if self.handshake_only:
            await self.legacy.pick()

    def health(self) -> dict[str, Any]:
        """What ``/readyz`` shows of this server (``bridge_health.server_health``): the
        children that serve it (a handshake-era server's 2026 children serve nobody)."""
        pools = (self.legacy,) if self.handshake_only else (self.modern, self.legacy)
        own = () if self.own is None else [
            pool for owner in self.own.everyone() for pool in owner.pools()]
        health = server_health(pools, len(self.sessions.open), self._closing is not None, own)
        if self.own is not None:
            health["own_children"] = len(self.own)
        return health

    def _in_flight(self) -> int:
        """Calls not answered yet: on a child, or waiting for one."""
        own = 0 if self.own is None else sum(o.legacy.in_flight + o.modern.in_flight
                                             for o in self.own.owners)
        return self.modern.in_flight + self.legacy.in_flight + self._waiting + own

    def summary(self) -> str:
        """One line: calls forwarded and failed, sessions, child starts per era."""
        children = [*self.modern.children, *self.legacy.children]
        forwarded = sum(child.forwarded for child in children)
        failed = sum(child.failed for child in children)
        unsent = f", {self.unsent} timed out unsent" if self.unsent else ""
        own = ""
        if self.own is not None:
            own_forwarded, own_failed, starts = self.own.totals()
            forwarded, failed = forwarded + own_forwarded, failed + own_failed
            own = f", {starts} of their own ({self.isolation} isolation)"
        return (f"{_count(forwarded, 'call')} forwarded ({failed} failed by the "
                f"bridge{unsent}), {_count(self.sessions.opened, 'session')} opened, "
                "children started: "
                f"{sum(c.generation for c in self.modern.children)} for 2026-07-28, "
                f"{sum(c.generation for c in self.legacy.children)} for the 2025 era{own}")

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = scope["headers"]
        if is_modern(headers):
            return await self._modern(scope, receive, send)
        session_id = next((v for k, v in headers if k == SESSION_HEADER), None)
        session = None
        if session_id is not None:
            session = self.sessions.find(session_id.decode("latin-1"))
            # Another caller's session is answered as if it did not exist (the SDK's way).
            if session is None or not owned_by(session, scope):
                return await refuse(send, 404, "Not Found: Invalid or expired session ID")
        method = scope["method"]
        if method == "POST":
            return await self._legacy_post(scope, session, receive, send)
        if session is None:
            return await refuse(send, 400, "Bad Request: Missing session ID")
        if method == "GET":
            return await self._legacy_get(session, headers, receive, send)
        if method == "DELETE":
            self._end(session)
            return await respond(send, 200, b"", [])
        return await refuse(send, 405, "Method Not Allowed",
                            headers=[(b"allow", b"GET, POST, DELETE")])

    # --- 2026-07-28: one request, one answer ------------------------------------------------------

    async def _modern(self, scope: Scope, receive: Receive, send: Send) -> None:
        refusal = modern_refusal(scope)
        if refusal is not None:
            return await respond(send, refusal[0], b"", refusal[1])
        r = scope[VERDICT].route  # the Guard's: a request, routed once
        if self.handshake_only and r.method not in eras.FORWARDED:  # the bridge answers it
            return await self._translated(r, receive, send)

        async def forward(send: Send) -> None:
            if not self.handshake_only:
                deadline = self._deadline()
                child = await self._ready(self.modern, deadline)  # a new child's probe finds out
                if not self.handshake_only:
                    await self._call(child, r, receive, send, [], self._modern_status,
                                     deadline=deadline)
                    return
            await self._translated(r, receive, send)

        await self._limited(scope, None, r, send, [], forward)

    async def _discover(self, child: SharedChild) -> None:
        """``Pool.prepare`` of a 2026 child: ``server/discover``, to know it speaks 2026.

        Only the child's answer says: a result, 2026-07-28; an error, the handshake era
        only. A child that exits first (a crash on its first start, say) said nothing, and
        the next one is asked again; a slow one (a server run through ``uvx`` the first
        time, heavy imports) is waited for, the calls with it, each within its timeout.
        """
        if not self._probed:  # said once: what follows on its stderr may be the probe's
            self._probed = True
            self.log(f"{child.name}: asking it server/discover to learn its era (a server of "
                     "the 2025 era only may write a warning about that request)")
        call = child.ask("server/discover", eras.PROBE_PARAMS)
        answered = asyncio.ensure_future(call.wait())
        try:
            if not (await asyncio.wait((answered,), timeout=eras.SLOW_PROBE))[0]:
                self.log(f"{child.name}: no answer to server/discover in "
                         f"{eras.SLOW_PROBE:g} s yet; waiting for it")
                await answered
        finally:
            answered.cancel()
        if eras.answered_discover(call.answer):
            return
        if not child.running:  # the bridge failed the probe: the child's end answered it
            raise RuntimeError(f"{child.gone}, before it answered server/discover (the next "
                               "one is asked again)")
        self.handshake_only = True
        said = (call.answer or b"")[:200].decode("utf-8", "replace")
        self.log(f"{child.name}: the server answered server/discover with an error ({said}): "
                 "it speaks the 2025 handshake era only; its 2025-era children serve "
                 "2026-07-28 requests (docs/serve.md)")
        raise RuntimeError("a handshake-era server")

    async def _translated(self, r: rpcline.Route, receive: Receive, send: Send,
                          source: StdioBridge | Owner | None = None) -> None:
        """A 2026-07-28 request for a handshake-era server (``bridge_eras``), to the
        ``source``'s handshake-era children (the bridge's own, or a caller's)."""
        source = self if source is None else source
        assert r.id is not None and r.method is not None
        method = r.method
        if method not in eras.FORWARDED and method != eras.DISCOVER:  # never the child's to answer
            answer = eras.not_found(r.id, method)
            return await respond(send, self._modern_status(answer), answer, [JSON])
        child = await source.legacy.pick()
        initialized = source.initialized
        if method == eras.DISCOVER and initialized is not None:
            return await respond(send, 200, eras.discover_result(initialized, r.id), [JSON])
        stamp = None if initialized is None else eras.server_info(initialized)
        await self._call(child, r, receive, send, [], self._modern_status,
                         translate=lambda answer: eras.completed(answer, method, stamp))

    @staticmethod
    def _modern_status(answer: bytes) -> int:
        return lines.error_status(rpcline.route(answer))

    def _from_modern(self, child: SharedChild, r: rpcline.Route) -> None:
        """A 2026 child's notification that is no call's progress: no session to send it to
        (a stateless client asks for change notices with ``subscriptions/listen``)."""

    # --- 2025: sessions ---------------------------------------------------------------------------

    async def _legacy_post(self, scope: Scope, session: Session | None, receive: Receive,
                           send: Send) -> None:
        headers = scope["headers"]
        json_ok, sse_ok = accepts(headers)
        if not (json_ok and sse_ok):
            return await refuse(send, 406, "Not Acceptable: Client must accept both "
                                "application/json and text/event-stream")
        if not is_exactly_json(content_type(headers)):
            return await refuse(send, 415, "Unsupported Media Type: Content-Type must be "
                                "application/json")
        body = await read_body(receive, self.max_body_bytes)
        if body is None:  # the client went away
            return None
        if body is TOO_LARGE:
            return await refuse(send, 413, "Request body too large")
        assert isinstance(body, bytes)
        r = rpcline.route(body)
        if self.access_log is not None:
            named = NAMED.get(r.method) if r.method is not None else None
            scope[MCP] = (r.method, None if named is None else param(body, named))
        if r.kind == "refused":
            assert r.error is not None
            refused = rpcline.error_response(rpcline.Refused(r.id, r.error))
            return await respond(send, 400, refused, [JSON])
        if session is None:
            if r.method != "initialize" or r.kind != "request":
                return await refuse(send, 400, "Bad Request: Missing session ID")
            return await self._initialize(r, receive, send, owner_of(scope))
        header = [(SESSION_HEADER, session.id.encode())]
        if r.method == "initialize" and r.kind == "request":
            # Again, in a session: the SDK's server negotiates anew for that session alone.
            # The shared child must not (every session would run under this one's client
            # info and capabilities): the bridge answers from its own handshake again.
            # A child of one's own was initialized once, by the first: answered from that.
            own = session.own
            assert r.id is not None
            answer = (await self._handshake_answer(r) if own is None or own.initialized is None
                      else own.initialized.with_id(r.id))
            return await respond(send, 200, answer, [JSON, *header])
        if r.kind == "notification":
            self._legacy_notification(session, r)
            return await respond(send, 202, b"", header)
        if r.kind == "response":  # to a request no shared child sends a client: dropped
            if session.own is not None:  # to its own child's request: its answer
                own_requests.answered(session.own, session, r)
            return await respond(send, 202, b"", header)
        if r.method == "logging/setLevel" and session.own is None:
            return await self._set_level(session, r, send, header)
        if r.method == "resources/unsubscribe" and session.own is None:
            session.subscriptions.discard(param(body, "uri"))
            if self.sessions.subscribed(param(body, "uri")):  # others still want it
                return await respond(send, 200, _empty_result(r), [JSON, *header])

        async def forward(send: Send) -> Call:
            deadline = self._deadline()
            return await self._call(await self._ready(session.pool, deadline), r, receive, send,
                                    header, None, session, deadline=deadline)

        call = await self._limited(scope, session, r, send, header, forward)
        if call is not None and r.method == "resources/subscribe" and _succeeded(call):
            uri = param(body, "uri")  # recorded once the child accepted it
            if type(uri) is str:
                session.subscriptions.add(uri)

    async def _initialize(self, r: rpcline.Route, receive: Receive, send: Send,
                          owner: tuple[str, str | None, str | None] | None) -> None:
        """A new session: answered from the handshake the bridge made with a legacy child."""
        answer = await self._handshake_answer(r)
        if self.initialized is None:  # no child answered: the failure, and no session
            return await respond(send, 200, answer, [JSON])
        session = self.sessions.new(version=self._version(self.initialized))
        if session is None:
            return await refuse(send, 503, "Too many open sessions", code=-32603)
        session.owner = owner
        header = [(SESSION_HEADER, session.id.encode())]
        await respond(send, 200, answer, [JSON, *header])

    async def _handshake_answer(self, r: rpcline.Route) -> bytes:
        """The answer to an ``initialize``: a legacy child's handshake result (the child
        started first when none runs yet) with the caller's id, or the -32000 failure."""
        assert r.id is not None  # a request
        line = r.line
        assert type(line) is bytes
        asked = param(line, "protocolVersion")
        if self.initialized is None and asked in HANDSHAKE_PROTOCOL_VERSIONS:
            self._handshake_params["protocolVersion"] = asked
        child = await self.legacy.pick()
        if self.initialized is None:
            message = child.gone or "the server did not answer the handshake"
            return failure(r.id, "Connection closed", message)
        return self.initialized.with_id(r.id)

    async def _handshake(self, child: SharedChild) -> None:
        """The bridge's own ``initialize`` with a new legacy child (``Pool.prepare``)."""
        call = child.ask("initialize", self._handshake_params)
        await asyncio.wait_for(call.wait(), HANDSHAKE_TIMEOUT)
        assert call.answer is not None
        answer = rpcline.route(call.answer)
        if answer.kind != "response" or answer.result_span is None:
            said = call.answer[:200].decode("utf-8", "replace")
            raise RuntimeError(f"the server refused the handshake; it answered {said}")
        self.initialized = answer
        child.write(lines.notification("notifications/initialized"))
        if self._child_level is not None:
            child.ask("logging/setLevel", {"level": self._child_level})

    async def _legacy_get(self, session: Session, headers: Headers, receive: Receive,
                          send: Send) -> None:
        if not accepts(headers)[1]:
            return await refuse(send, 406, "Not Acceptable: Client must accept text/event-stream")
        if session.streaming:
            return await refuse(send, 409, "Conflict: Only one SSE stream is allowed per session")
        session.streaming = True
        try:
            await stream(session.mailbox, receive, send, [(SESSION_HEADER, session.id.encode())])
        finally:
            session.streaming = False
            if session.id in self.sessions.open:
                session.mailbox = Call(None)  # a new stream starts afresh

    def _legacy_notification(self, session: Session, r: rpcline.Route) -> None:
        """``notifications/cancelled`` names the session's own id: the child is told its
        own. ``initialized`` was the bridge's to send; the rest concern the shared child
        alone and are not forwarded (roots changes: no shared child asks for roots). A child
        of one's own is sent them all, as the client sent them."""
        if session.own is not None and r.method != "notifications/cancelled":
            return self._own_notification(session.own, r)
        if r.method == "notifications/cancelled":
            line = r.line
            assert type(line) is bytes
            call = session.calls.get(lines.cancelled_request(line))
            if call is not None and call.owner is not None:
                call.owner.cancel(call, "the client cancelled it")
                call.finish(b"")

    async def _set_level(self, session: Session, r: rpcline.Route, send: Send,
                         header: Headers) -> None:
        line = r.line
        assert type(line) is bytes
        level = param(line, "level")
        if level not in LEVELS:
            return await respond(send, 200, lines.error(r.id, -32602, f"Invalid level: {level!r}"),
                                 [JSON, *header])
        session.level = level
        wanted = self.sessions.child_level()
        if wanted != self._child_level:
            self._child_level = wanted
            for child in self.legacy.children:
                if child.running:
                    child.ask("logging/setLevel", {"level": wanted})
        await respond(send, 200, _empty_result(r), [JSON, *header])

    def _from_legacy(self, child: SharedChild, r: rpcline.Route) -> None:
        method = r.method
        assert method is not None and type(r.line) is bytes
        self.sessions.deliver(method, r.line)

    def _restarted(self, child: SharedChild) -> None:
        """``Pool.on_restart``: told to the hooks."""
        assert self.hooks is not None
        self.hooks.tell(self.hooks.on_child_restart, ChildRestarted(child.name, self.name))

    def _version(self, initialized: rpcline.Route) -> str | None:
        """The protocol version a handshake answer names, for the hooks (None: no hooks)."""
        if self.hooks is None:
            return None
        return otel_lines.protocol_version(initialized, initialized.result_span)

    def _end(self, session: Session, error_type: str | None = None) -> None:
        self.sessions.close(session, error_type)
        for call in list(session.calls.values()):
            if call.owner is not None:
                call.owner.cancel(call, "the client ended its session")
            call.finish(b"")

    # --- one call, either era -----------------------------------------------------------------------

    def _deadline(self) -> float | None:
        """When a call that arrives now must be answered by (``request_timeout``)."""
        timeout = self.request_timeout
        return None if timeout is None else asyncio.get_running_loop().time() + timeout

    async def _ready(self, pool: Pool, deadline: float | None) -> SharedChild | None:
        """A child of ``pool`` to call (it may have to start first), or None when
        ``deadline`` comes first."""
        child = pool.ready()  # the usual case: no wait, and no timeout to arm
        if child is not None:
            return child
        fair.check_waiting(self._waiting, self.max_waiting)
        self._waiting += 1
        try:
            async with asyncio.timeout_at(deadline):
                return await pool.pick()
        except TimeoutError:
            return None
        finally:
            self._waiting -= 1

    async def _limited(self, scope: Scope, session: Session | None, r: rpcline.Route,
                       send: Send, headers: Headers,
                       forward: Callable[[Send], Awaitable[Call | None]],
                       watched: bool = False) -> Call | None:
        """``forward(send)``, counted as one of its client's calls in flight (the ``session``'s;
        without one, the request's bearer token or address) until it ends, however it ends.
        Past ``max_in_flight_per_client`` it is answered 429 instead; one that would wait
        for a child past ``max_waiting``, 503. Both are sent nothing, and carry
        ``Retry-After`` and a JSON-RPC error with the caller's id. With ``hooks``, told to
        them first (``_watched``; ``watched``: it was)."""
        assert r.id is not None  # a request
        if self.hooks is not None and not watched:
            return await self._watched(self.hooks, scope, session, r, send, headers, forward)
        per_client = self.per_client
        if per_client.bound is None:  # the usual case: nobody to count, no digest to take
            try:
                return await forward(send)
            except fair.Full:
                await self._full(r.id, send, headers)
                return None
        if session is not None:
            client = fair.session(session.id)
        else:  # one shared token (token=) names nobody: then the address tells clients apart
            client = fair.stateless(scope, self._token is None)
        if not per_client.admit(client.key):
            assert per_client.bound is not None
            answer = fair.too_many(r.id, client, per_client.bound)
            await respond(send, 429, answer, [JSON, fair.RETRY_AFTER, *headers])
            return None
        try:
            return await forward(send)
        except fair.Full:
            await self._full(r.id, send, headers)
            return None
        finally:
            per_client.release(client.key)

    async def _watched(self, hooks: Hooks, scope: Scope, session: Session | None,
                       r: rpcline.Route, send: Send, headers: Headers,
                       forward: Callable[[Send], Awaitable[Call | None]]) -> Call | None:
        """``_limited``, told to ``hooks`` (``observe.Watch``)."""
        verdict = scope.get(VERDICT)
        w = watch(hooks, scope, r, "2025" if session is not None else "2026",
                  None if session is None else session.id, self.name,
                  None if verdict is None else verdict.name)
        token = WATCH.set(w)

        async def noted(message: MutableMapping[str, Any]) -> None:
            w.noted(message)
            await send(message)

        call = None
        try:
            call = await self._limited(scope, session, r, noted, headers, forward, True)
        finally:
            WATCH.reset(token)
            called = w.call if call is None else call
            w.end(None if called is None else called.answer,
                  None if called is None or not called.child_id else called.child_id)
        return call

    async def _full(self, id: rpcline.RequestId, send: Send, headers: Headers) -> None:
        assert self.max_waiting is not None
        answer = fair.too_many_waiting(id, self.max_waiting)
        await respond(send, 503, answer, [JSON, fair.RETRY_AFTER, *headers])

    async def _call(self, child: SharedChild | None, r: rpcline.Route, receive: Receive,
                    send: Send, headers: Headers, status_of: Callable[[bytes], int] | None,
                    session: Session | None = None,
                    translate: Callable[[bytes], bytes] | None = None,
                    deadline: float | None = None) -> Call:
        """``r`` through ``child``, answered; ``child`` None: none was ready by the call's
        ``deadline`` (``request_timeout`` from now when not given). The deadline bounds the
        whole call: the wait for room in the child's stdin, then for its answer."""
        assert r.id is not None  # a request
        call = Call(r.id, self._deadline() if deadline is None else deadline)
        if child is None:
            return await self._unsent(call, "no server was ready to take it", "", send,
                                      headers, status_of)
        if child.congested is not None:
            fair.check_waiting(self._waiting, self.max_waiting)
            self._waiting += 1
            try:
                async with asyncio.timeout_at(call.deadline):
                    await child.writable()
            except TimeoutError:
                return await self._unsent(call, "the server took no input", f"{child.name}: ",
                                          send, headers, status_of)
            finally:
                self._waiting -= 1
        if session is not None:
            session.calls[r.id] = call
        if self.hooks is not None and (w := WATCH.get()) is not None:
            w.call = call
            r = w.to_child(child.name, r)  # ChildRequest told; child_meta spliced in
        try:
            child.forward(r, call)
            await answer_call(child, call, receive, send, headers, status_of, translate)
        finally:
            if session is not None and session.calls.get(r.id) is call:
                del session.calls[r.id]
        return call

    async def _unsent(self, call: Call, why: str, where: str, send: Send, headers: Headers,
                      status_of: Callable[[bytes], int] | None) -> Call:
        """A call whose time ran out before a child took it: -32000, as any timeout."""
        data = f"{why} within {self.request_timeout:g} s; it was not sent"
        self.log(f"{where}{data} ({str(call.caller_id)[:80]!r})")
        self.unsent += 1
        call.finish(failure(call.caller_id, "Request timed out", data))
        assert call.answer is not None
        status = 200 if status_of is None else status_of(call.answer)
        await respond(send, status, call.answer, [JSON, *headers])
        return call


def _route_path(scope: Scope) -> str:
    """The request's path below where the app is mounted: a Starlette ``Mount`` keeps
    ``path`` whole and extends ``root_path`` (as uvicorn's ``--root-path`` does), so a
    bridge mounted at ``/github`` serves ``/github/mcp``."""
    path, root = scope["path"], scope.get("root_path", "")
    return path[len(root):] if root and path.startswith(root) else path


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _succeeded(call: Call) -> bool:
    """Whether the child answered ``call`` with a result (not an error, not a failure)."""
    answer = call.answer
    return answer is not None and rpcline.route(answer).result_span is not None


def _empty_result(r: rpcline.Route) -> bytes:
    return lines.result(r.id, {})


def _named(log: Callable[[str], None], name: str, message: str) -> None:
    log(f"{name}: {message}")


def _stderr(message: str) -> None:
    print(f"rpcline serve: {message}", file=sys.stderr, flush=True)
