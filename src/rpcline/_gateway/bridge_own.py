"""The bridge's side of children of one's own (``StdioBridge(isolation="session"|"identity")``).

``OwnBridge`` is mixed into ``StdioBridge``: the handlers a bridge in session or identity
mode puts, once at construction, where a shared bridge has its own (a new session's
``initialize``, a 2026-07-28 request), and what its owners' children need of it (their
handshake, their notifications, the end of a session or of an idle owner). Who has which
child is ``own_children``'s; a child's requests to its client are ``own_requests``'.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final

import orjson

from rpcline._core.route import Route, route
from rpcline._core.shared import RequestId
from rpcline._gateway import bridge_eras as eras
from rpcline._gateway import bridge_lines as lines
from rpcline._gateway import fair, own_requests
from rpcline._gateway.asgi import VERDICT, Receive, Scope, Send, respond
from rpcline._gateway.bridge_http import (INVALID_REQUEST, JSON, Headers, answer_call,
                                          modern_refusal, refuse)
from rpcline._gateway.input_rounds import Round, Rounds, answer_line
from rpcline._gateway.bridge_sessions import Session, Sessions, owner_of, param
from rpcline._gateway.own_children import Key, OwnChildren, Owner
from rpcline._gateway.pool import HANDSHAKE_TIMEOUT, Pool
from rpcline._gateway.relay_lines import failure
from rpcline._gateway.shared_child import Call, SharedChild

SESSION_HEADER: Final = b"mcp-session-id"
# What the bridge's own handshake with a 2026-07-28 caller's child declares: a request for
# any of these is relayed to the caller as an ``input_required`` round.
ASKABLE: Final[dict[str, Any]] = {"sampling": {}, "elicitation": {}, "roots": {}}
NO_IDENTITY: Final = ("this server gives each caller a child of its own (--isolation), and "
                      "this request names no caller: it needs an access token the gateway "
                      "checks (rpcline serve --auth-issuer)")


class OwnBridge:
    """What ``StdioBridge`` does with children of one's own (see the module)."""

    own: OwnChildren | None
    rounds: Rounds
    isolation: str
    sessions: Sessions
    handshake_only: bool
    _closing: asyncio.Future[None] | None
    _command: Any
    _child_options: dict[str, Any]
    _handshake_params: dict[str, Any]

    if TYPE_CHECKING:  # the bridge's own, which these use
        def _from_modern(self, child: SharedChild, r: Route) -> None: ...
        async def _discover(self, child: SharedChild) -> None: ...
        def _end(self, session: Session, error_type: str | None = None) -> None: ...
        def _version(self, initialized: Route) -> str | None: ...
        @staticmethod
        def _modern_status(answer: bytes) -> int: ...
        def _deadline(self) -> float | None: ...
        async def _ready(self, pool: Pool, deadline: float | None) -> SharedChild | None: ...
        async def _translated(self, r: Route, receive: Receive, send: Send,
                              source: Any = None) -> None: ...
        async def _call(self, child: SharedChild | None, r: Route, receive: Receive,
                        send: Send, headers: Headers, status_of: Callable[[bytes], int] | None,
                        session: Session | None = None,
                        translate: Callable[[bytes], bytes] | None = None,
                        deadline: float | None = None) -> Call: ...
        async def _limited(self, scope: Scope, session: Session | None, r: Route, send: Send,
                           headers: Headers, forward: Callable[[Send], Awaitable[Call | None]],
                           watched: bool = False) -> Call | None: ...

    def _new_owner(self, serial: int, identity: Key | None) -> Owner:
        """``OwnChildren``'s factory: an owner whose pools (one child each) start when first
        needed, its 2025-era child initialized with what its first session sent."""
        owner = Owner(serial, identity)
        options: Any = self._child_options
        asks = functools.partial(own_requests.ask_client, owner, self.rounds)
        owner.legacy = Pool("2025", self._command, 1, first=serial, on_request=asks,
                            on_notification=functools.partial(self._from_own, owner),
                            prepare=functools.partial(self._own_handshake, owner), **options)
        owner.modern = Pool("2026", self._command, 1, first=serial, on_request=asks,
                            on_notification=self._from_modern, prepare=self._discover,
                            **options)
        return owner

    async def _initialize_own(self, r: Route, receive: Receive, send: Send,
                              identity: Key | None) -> None:
        """A new session with a child of its own (``session``), or of its caller's
        (``identity``): the client's ``initialize`` is forwarded as sent to a new child, and
        the child's answer is the session's."""
        assert self.own is not None and r.id is not None and type(r.line) is bytes
        if self.isolation == "identity" and identity is None:
            return await respond(send, 401, lines.error(r.id, INVALID_REQUEST,
                                                        NO_IDENTITY), [JSON])
        owner = self.own.for_session(identity)
        if owner is None:
            return await self._too_many_children(r.id, send)
        if owner.params is None:
            params = orjson.loads(r.line).get("params")
            owner.params = params if type(params) is dict else {}
        if owner.warm:
            owner.warm = False
            child = await owner.legacy.handed()
        else:
            child = await owner.legacy.pick()
        initialized = owner.initialized
        session = None if initialized is None else self.sessions.new(
            owner.legacy, self._version(initialized))
        if session is None:
            if not owner.sessions:
                self.own.release(owner)
            if initialized is None:  # the child refused it, or did not answer
                answer = (failure(r.id, "Connection closed", child.gone or
                                  "the server did not answer the handshake")
                          if owner.refusal is None else route(owner.refusal).with_id(r.id))
                return await respond(send, 200, answer, [JSON])
            return await refuse(send, 503, "Too many open sessions", code=-32603)
        session.owner, session.own = identity, owner
        owner.sessions.append(session)
        assert initialized is not None
        await respond(send, 200, initialized.with_id(r.id),
                      [JSON, (SESSION_HEADER, session.id.encode())])
        self.own.warm_up()

    async def _own_handshake(self, owner: Owner, child: SharedChild) -> None:
        """``Pool.prepare`` of a child of one's own: the ``initialize`` its first session
        sent (or, for a 2026-07-28 caller's, the bridge's own); ``initialized`` follows from
        the client, or from the bridge when the client sent it already (a restart)."""
        params = owner.params
        if params is None:  # a 2026-07-28 caller's: what it may be asked, through rounds
            params = {**self._handshake_params, "capabilities": ASKABLE}
        call = child.ask("initialize", params)
        await asyncio.wait_for(call.wait(), HANDSHAKE_TIMEOUT)
        assert call.answer is not None
        answer = route(call.answer)
        if answer.kind != "response" or answer.result_span is None:
            owner.refusal = call.answer if answer.kind == "response" else None
            said = call.answer[:200].decode("utf-8", "replace")
            raise RuntimeError(f"the server refused the handshake; it answered {said}")
        owner.initialized = answer
        if owner.params is None or owner.client_initialized:
            child.write(lines.notification("notifications/initialized"))

    def _own_notification(self, owner: Owner, r: Route) -> None:
        """A session's notification, to its own child as sent (``initialized`` once)."""
        if r.method == "notifications/initialized":
            if owner.client_initialized:
                return
            owner.client_initialized = True
        line = r.line
        assert type(line) is bytes
        for child in owner.legacy.children:
            child.write(line)

    def _from_own(self, owner: Owner, child: SharedChild, r: Route) -> None:
        """A child's notification (log, list_changed, ...) to its own sessions alone."""
        line = r.line
        assert type(line) is bytes
        for session in owner.sessions:
            session.mailbox.note(line)

    def _session_closed(self, session: Session) -> None:
        """``Sessions.on_close``: the child's requests to it fail; in session mode its
        child stops (at the bridge's stop, ``aclose`` stops it, after the grace)."""
        owner = session.own
        if owner is None or self.own is None:
            return
        if session in owner.sessions:
            owner.sessions.remove(session)
        own_requests.forget(owner, session)
        if self.isolation == "session" and self._closing is None:
            self.own.release(owner)

    def _end_owner(self, owner: Owner) -> None:
        """An owner idle past ``session_idle_timeout``: its sessions end, its children stop."""
        assert self.own is not None
        for session in list(owner.sessions):
            self._end(session, "timeout")
        self.own.release(owner)

    async def _modern_own(self, scope: Scope, receive: Receive, send: Send) -> None:
        """A 2026-07-28 request, to its caller's children; without a caller, refused."""
        assert self.own is not None
        refusal = modern_refusal(scope)
        if refusal is not None:
            return await respond(send, refusal[0], b"", refusal[1])
        r = scope[VERDICT].route
        identity = owner_of(scope)
        if identity is None:
            answer = lines.error(r.id, INVALID_REQUEST, NO_IDENTITY)
            return await respond(send, self._modern_status(answer), answer, [JSON])
        owner = self.own.for_identity(identity)
        if owner is None:
            assert r.id is not None
            return await self._too_many_children(r.id, send)
        if self.handshake_only and r.method not in eras.FORWARDED:
            return await self._translated(r, receive, send, owner)
        line = r.line
        assert type(line) is bytes
        if b'"requestState"' in line and self.handshake_only:  # a retry: one of ours?
            round = self.rounds.resume(param(line, "requestState"), identity)
            if round is not None:
                return await self._resumed(scope, r, round, owner, receive, send)

        async def forward(send: Send) -> None:
            if not self.handshake_only:
                deadline = self._deadline()
                child = await self._ready(owner.modern, deadline)
                if not self.handshake_only:
                    await self._call(child, r, receive, send, [], self._modern_status,
                                     deadline=deadline)
                    return
            await self._translated(r, receive, send, owner)

        await self._limited(scope, None, r, send, [], forward)

    async def _too_many_children(self, id: RequestId, send: Send) -> None:
        assert self.own is not None
        answer = failure(id, "Too many children", f"--max-children {self.own.max_children} "
                         "children of their own run, each busy or in a session; try again")
        await respond(send, 503, answer, [JSON, fair.RETRY_AFTER])

    async def _resumed(self, scope: Scope, r: Route, round: Round, owner: Owner,
                       receive: Receive, send: Send) -> None:
        """A 2026-07-28 caller's retry of a call whose child asked it something: the
        child gets the client's response, the retry the call's answer (``input_rounds``)."""
        assert r.id is not None and r.method is not None and type(r.line) is bytes
        child, call, method = round.child, round.call, r.method
        child.write(answer_line(round, param(r.line, "inputResponses")))
        if call.answer is None:
            child.rearm(call, r.id, self._deadline())
        elif call.answer:  # it ended meanwhile (the child's end, say), under the first id
            call.answer = route(call.answer).with_id(r.id)
        stamp = None if owner.initialized is None else eras.server_info(owner.initialized)

        async def forward(send: Send) -> Call:
            await answer_call(child, call, receive, send, [], self._modern_status,
                              lambda answer: eras.completed(answer, method, stamp))
            return call

        await self._limited(scope, None, r, send, [], forward)
