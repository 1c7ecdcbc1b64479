"""Children of one's own (``rpcline serve --isolation session|identity``): who has which.

An ``Owner`` is what one session (``session``) or one authenticated caller (``identity``)
has of its own: a pool of one child per era, the handshake its first session sent, its
sessions, and the child's requests its clients have not answered yet (``own_requests``).
``OwnChildren`` hands them out and takes them back: at most ``max_children`` at once
(a new one past it is refused: nobody's child is taken from them), warm ones kept ready
(``prestart``), and an owner whose children were sent nothing for ``idle_timeout``
seconds ended (``end``: its sessions end, its children stop). Every end stops the
children and waits for their exit, so none is left behind as a zombie or a descriptor.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from rpcline._core.route import Route
from rpcline._gateway.pool import Pool

if TYPE_CHECKING:
    from rpcline._gateway.bridge_sessions import Session

Key = tuple[str, str | None, str | None]  # an identity: issuer, subject, client (owner_of)
MODES: Final = ("shared", "session", "identity")
STOP_GRACE: Final = 2.0  # seconds an ended owner's child has to exit on its own
SWEEPS: Final = 4  # idle owners are looked for this many times an idle_timeout


def check_mode(isolation: str) -> str:
    if isolation not in MODES:
        raise ValueError(f"isolation must be one of {', '.join(MODES)}, not {isolation!r}")
    return isolation


class Owner:
    """What one session or one caller has of its own (``legacy`` and ``modern`` are set
    by the bridge's factory, which knows how to start and prepare a child)."""

    legacy: Pool
    modern: Pool

    def __init__(self, serial: int, identity: Key | None) -> None:
        self.serial = serial
        self.identity = identity
        # The ``initialize`` params the first session sent, forwarded as sent (None: the
        # bridge's own, for a 2026-07-28 caller's handshake-era child).
        self.params: dict[str, Any] | None = None
        self.initialized: Route | None = None  # the child's answer to it
        self.refusal: bytes | None = None  # the child's error answer to it
        self.client_initialized = False  # the client sent notifications/initialized
        self.sessions: list[Session] = []
        self.asked: dict[int, Any] = {}  # the child's requests out to a client, by their id
        self.next_asked = 0
        self.seen = -1  # what its children were sent, at the last sweep
        self.idle_since = 0.0
        self.warm = False  # started before its session came: prepared when handed to it
        self.ended = False

    def pools(self) -> tuple[Pool, Pool]:
        return (self.legacy, self.modern)

    def activity(self) -> int:
        """A count that grows whenever its children are sent a call."""
        return sum(child.forwarded for pool in self.pools() for child in pool.children)

    def busy(self) -> bool:
        return any(pool.in_flight or pool.starting for pool in self.pools())

    async def stop(self, grace: float) -> None:
        await asyncio.gather(*(pool.stop(grace) for pool in self.pools()))


class OwnChildren:
    """The owners of a bridge in session or identity mode (see the module)."""

    def __init__(self, mode: str, new_owner: Callable[[int, Key | None], Owner], *,
                 max_children: int | None, idle_timeout: float | None, prestart: int,
                 end: Callable[[Owner], None]) -> None:
        self.mode = mode
        self.new_owner = new_owner
        self.max_children = max_children
        self.idle_timeout = idle_timeout
        self.prestart = prestart
        self.end = end  # ends an owner's sessions (the bridge's), then ``release`` it
        self.owners: set[Owner] = set()
        self.by_identity: dict[Key, Owner] = {}
        self.warm: deque[Owner] = deque()
        self.stopping: set[asyncio.Task[None]] = set()
        self.serial = 0
        self.started = 0  # owners handed out, in all
        self.past = [0, 0, 0]  # calls forwarded, failed, and child starts of owners ended
        self.closed = False
        self._sweeper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self.owners) + len(self.warm)

    def for_session(self, identity: Key | None) -> Owner | None:
        """A new session's owner: a new one (``session``), or the caller's (``identity``);
        None past ``max_children``."""
        if self.mode == "identity":
            assert identity is not None
            return self.for_identity(identity)
        return self._take(None)

    def for_identity(self, identity: Key) -> Owner | None:
        """The caller's owner, made when it has none; None past ``max_children``."""
        owner = self.by_identity.get(identity)
        if owner is None:
            owner = self._take(identity)
            if owner is not None:
                self.by_identity[identity] = owner
        return owner

    def _take(self, identity: Key | None) -> Owner | None:
        if self.closed:
            return None
        owner = self.warm.popleft() if self.warm else None
        if owner is None:
            if self.max_children is not None and len(self) >= self.max_children:
                return None
            owner = self._make(identity)
        owner.identity = identity
        owner.idle_since = asyncio.get_running_loop().time()
        self.owners.add(owner)
        self.started += 1
        if self._sweeper is None and self.idle_timeout is not None:
            self._sweeper = asyncio.create_task(self._sweep(self.idle_timeout))
        return owner

    def _make(self, identity: Key | None) -> Owner:
        self.serial += 1
        return self.new_owner(self.serial, identity)

    def _keep_warm(self) -> None:
        """Start warm children until ``prestart`` wait (within ``max_children``)."""
        while (len(self.warm) < self.prestart and not self.closed
               and (self.max_children is None or len(self) < self.max_children)):
            owner = self._make(None)
            owner.warm = True
            owner.legacy.prestart()
            self.warm.append(owner)

    def warm_up(self) -> None:
        """Start warm children until ``prestart`` wait: after a session's ``initialize`` was
        answered (a process start holds the loop for a moment: not while one waits)."""
        self._keep_warm()

    def release(self, owner: Owner) -> None:
        """Stop ``owner``'s children (in the background; ``close`` waits for them)."""
        if owner.ended:
            return
        owner.ended = True
        self._count(owner)
        self.owners.discard(owner)
        if owner.identity is not None and self.by_identity.get(owner.identity) is owner:
            del self.by_identity[owner.identity]
        task = asyncio.ensure_future(owner.stop(STOP_GRACE))
        self.stopping.add(task)
        task.add_done_callback(self.stopping.discard)
        self._keep_warm()

    async def _sweep(self, timeout: float) -> None:
        """End each owner sent nothing for ``timeout`` seconds (and none in flight)."""
        loop = asyncio.get_running_loop()
        while not self.closed:
            await asyncio.sleep(timeout / SWEEPS)
            now = loop.time()
            for owner in list(self.owners):
                activity = owner.activity()
                if activity != owner.seen or owner.busy():
                    owner.seen, owner.idle_since = activity, now
                elif now - owner.idle_since >= timeout:
                    self.end(owner)

    async def close(self, grace: float) -> None:
        """Stop every child, warm ones too, and wait for each to exit."""
        self.closed = True
        if self._sweeper is not None:
            self._sweeper.cancel()
        owners = [*self.owners, *self.warm]
        for owner in owners:
            self._count(owner)
        self.owners.clear()
        self.warm.clear()
        self.by_identity.clear()
        await asyncio.gather(*(owner.stop(grace) for owner in owners), *self.stopping)

    def _count(self, owner: Owner) -> None:
        for pool in owner.pools():
            for child in pool.children:
                self.past[0] += child.forwarded
                self.past[1] += child.failed
                self.past[2] += child.generation

    def totals(self) -> tuple[int, int, int]:
        """Calls forwarded, failed by the bridge, and child starts, of every owner."""
        live = self.children()
        return (self.past[0] + sum(c.forwarded for c in live),
                self.past[1] + sum(c.failed for c in live),
                self.past[2] + sum(c.generation for c in live))

    def everyone(self) -> list[Owner]:
        """Every owner, warm ones too."""
        return [*self.owners, *self.warm]

    def children(self) -> list[Any]:
        """Every child of every owner, for a summary or a signal."""
        return [child for owner in self.everyone() for pool in owner.pools()
                for child in pool.children]
