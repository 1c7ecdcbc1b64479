"""The children of one protocol era: started when first needed, prepared, restarted.

A stdio child speaks the era of its first message for good (the SDK's
``serve_dual_era_loop``), so a bridge keeps one pool per era. A handshake-era child is
initialized once by the bridge itself (``prepare``); its result answers every session's
``initialize``. Calls go to the running child with the fewest in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

from rpcline._core.route import Route
from rpcline._gateway.shared_child import Limits, SharedChild

HANDSHAKE_TIMEOUT: Final = 30.0  # seconds a child has to answer the bridge's own handshake


class Pool:
    def __init__(self, era: str, command: Sequence[str], size: int, *, limits: Limits,
                 env: dict[str, str] | None, cwd: str | None, log: Callable[[str], None],
                 on_notification: Callable[[SharedChild, Route], None],
                 prepare: Callable[[SharedChild], Awaitable[None]] | None = None,
                 record: str | None = None, stderr: str = "inherit",
                 label: str | None = None,
                 on_request: Callable[[SharedChild, Route], None] | None = None,
                 first: int = 1,
                 on_restart: Callable[[SharedChild], None] | None = None) -> None:
        self.era = era
        self.on_restart = on_restart  # told of each start of a child that ran before
        self.log = log
        self.prepare = prepare
        self.children = [SharedChild(f"{era}-{n}", command, limits=limits, env=env, cwd=cwd,
                                     log=log, on_notification=on_notification, record=record,
                                     stderr=stderr, label=label, on_request=on_request)
                         for n in range(first, first + size)]
        self.starting: dict[SharedChild, asyncio.Task[None]] = {}
        # Why a child's last start came to nothing (it could not run, or its handshake
        # failed), until it starts well: what a readiness probe reports as down.
        self.failed: dict[SharedChild, str] = {}
        self.closed = False  # stopped: no child starts again

    def ready(self) -> SharedChild | None:
        """The running child with the fewest calls in flight, at once (None: none runs);
        every child that is down and past its backoff is started meanwhile."""
        best: SharedChild | None = None
        for child in self.children:
            if child.running and child not in self.starting:
                if best is None or len(child.calls) < len(best.calls):
                    best = child
            elif child not in self.starting and child.restart_in() == 0 and not self.closed:
                self.starting[child] = asyncio.create_task(self._start(child))
        return best

    async def pick(self) -> SharedChild:
        """``ready``'s child; with none running, the first to be started and prepared; with
        none starting either, the one to restart soonest (its ``forward`` then answers
        why)."""
        while (best := self.ready()) is None:
            if not self.starting:
                return min(self.children, key=SharedChild.restart_in)
            await asyncio.wait(set(self.starting.values()), return_when=asyncio.FIRST_COMPLETED)
        return best

    def prestart(self) -> None:
        """Start the first child now, its ``prepare`` left for ``handed`` (a warm child,
        for a session not yet there)."""
        child = self.children[0]
        if child not in self.starting and not child.running:
            self.starting[child] = asyncio.create_task(self._start(child, prepare=False))

    async def handed(self) -> SharedChild:
        """``pick``'s child for a prestarted pool: the running child prepared now, with
        what its new owner brings (a start that failed meanwhile starts it afresh)."""
        if self.starting:
            await asyncio.wait(set(self.starting.values()))
        child = self.children[0]
        if child.running and not self.closed:
            self.starting[child] = asyncio.create_task(self._start(child, start=False))
        return await self.pick()

    async def _start(self, child: SharedChild, start: bool = True, prepare: bool = True) -> None:
        try:
            if start:
                again = child.generation > 0
                await child.start()
                if again and self.on_restart is not None:
                    self.on_restart(child)
            if self.prepare is not None and prepare:
                await self.prepare(child)
            self.failed.pop(child, None)
        except OSError as error:
            self.failed[child] = f"cannot run the command: {error.strerror or error}"
            self.log(f"{child.name}: {self.failed[child]}")
        except Exception as error:  # a handshake refused or unanswered: the child is no use
            self.failed[child] = str(error) or type(error).__name__
            self.log(f"{child.name}: {error}{'; stopping it' if child.running else ''}")
            await child.stop(grace=0, cause=str(error))
        finally:
            del self.starting[child]

    async def stop(self, grace: float = 2.0) -> None:
        """Stop every child (``SharedChild.stop``); none is started after."""
        self.closed = True
        for task in list(self.starting.values()):
            task.cancel()
        await asyncio.gather(*(child.stop(grace) for child in self.children))

    @property
    def in_flight(self) -> int:
        return sum(len(child.calls) for child in self.children)
