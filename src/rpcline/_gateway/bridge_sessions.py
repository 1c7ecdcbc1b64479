"""The 2025-era sessions of ``rpcline.bridge``, and what a shared child's notifications
concern: each session sees what a child of its own would send it, as far as docs/serve.md
says.

- ``list_changed`` goes to every session; ``notifications/resources/updated`` to the
  sessions subscribed to its ``uri``; ``notifications/message`` to each session at or above
  the level it set (``logging/setLevel`` is answered by the bridge, which keeps the child
  at the most verbose level any session asked for); anything else to every session.
- Progress goes to the call whose token it names (``child``), never here.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Final

from rpcline._gateway.auth_identity import IDENTITY
from rpcline._gateway.bridge_lines import param
from rpcline._gateway.observe import Hooks, SessionEnded, SessionStarted
from rpcline._gateway.shared_child import Call

if TYPE_CHECKING:
    from rpcline._gateway.own_children import Owner
    from rpcline._gateway.pool import Pool

ENDED_KEPT: Final = 100_000  # ended ids a keyed bridge remembers, to refuse them again
LEVELS: Final = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class Session:
    """One ``Mcp-Session-Id``: its GET stream's mailbox, its calls, what it asked for, the
    children its calls go to (``pool``) and, when they are its own, their ``own``er."""

    __slots__ = ("id", "mailbox", "streaming", "calls", "subscriptions", "level", "owner",
                 "pool", "own", "began", "version")

    def __init__(self, id: str, pool: Pool, version: str | None = None) -> None:
        self.id = id
        self.pool = pool
        self.began = time.perf_counter()
        self.version = version  # the protocol version its initialize was answered with
        self.own: Owner | None = None
        # Who opened it, when a resource server named the caller (``owner_of``): only that
        # caller may use it, as the SDK binds a session to the credential that created it.
        self.owner: tuple[str, str | None, str | None] | None = None
        self.mailbox = Call(None)  # notifications for its GET stream, bounded as progress is
        self.streaming = False  # a GET stream is open (one at most, as the SDK allows)
        self.calls: dict[Any, Call] = {}  # in flight, by the session's own id
        self.subscriptions: set[str] = set()
        self.level: str | None = None  # None: every log message

    def wants_log(self, level: object) -> bool:
        if self.level is None or level not in LEVELS:
            return True
        return LEVELS.index(level) >= LEVELS.index(self.level)


def owner_of(scope: Any) -> tuple[str, str | None, str | None] | None:
    """The caller ``rpcline.auth`` named in ``scope`` (issuer, subject, client), or None."""
    identity = scope.get(IDENTITY)
    return None if identity is None else (identity.issuer, identity.subject, identity.client_id)


def owned_by(session: Session, scope: Any) -> bool:
    """Whether the request of ``scope`` may use ``session``: its owner's, or a session this
    bridge did not open (another instance with the key did), bound now to this caller."""
    caller = owner_of(scope)
    if session.owner is None:
        session.owner = caller
        return True
    return session.owner == caller


class Sessions:
    """Every open 2025-era session, and the subscriptions and log levels they share.

    With a ``key``, a session id carries its own signature (HMAC-SHA256), so every bridge
    sharing the key takes a session another one opened: a load balancer may then send a
    session wherever a hash of its id says, from its second request on. Without one, an
    id this bridge did not give out is unknown (404), as in the SDK.

    At most ``limit`` sessions are open: one more ends the session used least recently
    that has no GET stream and no call in flight (its client gets 404 and opens a new one,
    as the spec says), so sessions opened and abandoned cost a bounded amount of memory.
    """

    def __init__(self, key: bytes | None = None, limit: int = 10_000, pool: Pool | None = None,
                 on_close: Callable[[Session], None] | None = None) -> None:
        self.key = key
        self.limit = limit
        self.pool = pool  # where a session's calls go (None: the bridge sets each one's)
        self.on_close = on_close  # told of each session that ends, however it ends
        self.open: OrderedDict[str, Session] = OrderedDict()  # least recently used first
        self.ended: OrderedDict[str, None] = OrderedDict()
        self.opened = 0  # sessions opened here, in all
        self.hooks: Hooks | None = None  # told of each session's start and end
        self.server: str | None = None  # the bridge's name, for the hooks

    def new(self, pool: Pool | None = None, version: str | None = None) -> Session | None:
        """A new session whose calls go to ``pool`` (by default the bridge's), its
        initialize answered with protocol ``version``, or None when ``limit`` are open and
        every one is in use."""
        pool = self.pool if pool is None else pool
        assert pool is not None
        if len(self.open) >= self.limit and not self._evict():
            return None
        id = secrets.token_hex(16)
        if self.key is not None:
            id = f"{id}.{self._signature(id)}"
        session = self.open[id] = Session(id, pool, version)
        self.opened += 1
        if self.hooks is not None:
            self._started(self.hooks, session)
        return session

    def find(self, id: str) -> Session | None:
        """The open session ``id``, or one another bridge with the key opened (not when
        each session has children of its own: those of a session opened elsewhere are
        there, and it is unknown here)."""
        session = self.open.get(id)
        if session is not None:
            self.open.move_to_end(id)
        elif self.key is not None and id not in self.ended and self.pool is not None:
            nonce, _, signature = id.partition(".")
            # As bytes: compare_digest refuses a str that is not ASCII, and an id is the
            # client's (its header's bytes, read as latin-1).
            if hmac.compare_digest(signature.encode("latin-1"), self._signature(nonce).encode()):
                if len(self.open) < self.limit or self._evict():
                    session = self.open[id] = Session(id, self.pool)
                    if self.hooks is not None:
                        self._started(self.hooks, session)
        return session

    def _evict(self) -> bool:
        """End the least recently used idle session; whether there was one."""
        for session in self.open.values():
            if not session.streaming and not session.calls:
                self.close(session, "evicted")
                return True
        return False

    def close(self, session: Session, error_type: str | None = None) -> None:
        """End ``session`` (``error_type``: why, when its client did not end it: the
        hooks' ``SessionEnded``)."""
        if self.open.pop(session.id, None) is not None:
            if self.hooks is not None:
                self.hooks.tell(self.hooks.on_session_end, SessionEnded(
                    session.id, session.version, self.server,
                    time.perf_counter() - session.began, error_type))
            if self.on_close is not None:
                self.on_close(session)
        session.mailbox.finish(b"")
        if self.key is not None:
            self.ended[session.id] = None
            if len(self.ended) > ENDED_KEPT:
                self.ended.popitem(last=False)

    def _started(self, hooks: Hooks, session: Session) -> None:
        hooks.tell(hooks.on_session_start, SessionStarted(session.id, session.version,
                                                          self.server))

    def _signature(self, nonce: str) -> str:
        assert self.key is not None
        return hmac.new(self.key, nonce.encode(), hashlib.sha256).hexdigest()

    def subscribed(self, uri: str) -> bool:
        """Whether any session is subscribed to ``uri``."""
        return any(uri in s.subscriptions for s in self.open.values())

    def child_level(self) -> str | None:
        """The most verbose level any session asked for (None: none asked)."""
        asked = [LEVELS.index(s.level) for s in self.open.values() if s.level is not None]
        return LEVELS[min(asked)] if asked else None

    def deliver(self, method: str, line: bytes) -> None:
        """A child's notification to the sessions it concerns."""
        targets: Iterable[Session] = self.open.values()
        if method == "notifications/resources/updated":
            uri = param(line, "uri")
            targets = [s for s in targets if uri in s.subscriptions]
        elif method == "notifications/message":
            level = param(line, "level")
            targets = [s for s in targets if s.wants_log(level)]
        for session in targets:
            session.mailbox.note(line)
