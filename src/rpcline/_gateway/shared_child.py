"""A stdio child shared by many callers (``rpcline.bridge``), and the calls waiting on it.

The process and its pipes are a ``child.Child``, as in ``rpcline proxy``; a
``SharedChild`` is its ``ChildEvents``, with many callers where the proxy has one.

Each request is written with an id of the child's own, so callers that chose the same id
never meet; the answer goes back to its ``Call`` with the caller's id put back, the rest of
its bytes as the child wrote them. The relay's rules hold per child: lines bounded by
``max_line_bytes``, calls in flight by ``max_pending`` and their ids by
``max_pending_bytes``; a broken answer fails its call (``answered_id``, the proxy's rule);
a child that exits fails every call on it with -32000 naming why, and is started again, after
a backoff, for the calls after; so does one that closes its stdin or its stdout and lives
on, which is stopped (SIGTERM, then SIGKILL); a call past its deadline (``request_timeout``
from its arrival) is answered -32000 and cancelled on the child. A call's progress waits
for its caller, bounded: past ``NOTE_BYTES`` it is dropped (progress is advisory; the
answer is never dropped).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from rpcline._core.message import Refused, error_response
from rpcline._core.route import Route
from rpcline._core.shared import RequestId
from rpcline._gateway import bridge_lines as lines
from rpcline._gateway.pending import Pending
from rpcline._gateway.record import Recorder
from rpcline._gateway.relay_types import (
    DEFAULT_KILL_AFTER, DEFAULT_MAX_LINE_BYTES, DEFAULT_MAX_PENDING, DEFAULT_MAX_PENDING_BYTES)
from rpcline._gateway.child import EXIT_GRACE, Child
from rpcline._gateway.child_stderr import ChildStderr
from rpcline._gateway.relay_lines import CANCELLED, answered_id, failure, is_null_id_error

NOTE_BYTES: Final = 1024 * 1024  # progress held for one caller that does not read it
MAX_BACKOFF: Final = 30.0  # seconds between restarts of a child that keeps dying
STABLE_AFTER: Final = 10.0  # a child that ran this long starts its backoff afresh


def ended(returncode: int | None) -> str:
    """How a child's process ended, from its status: a negative one names the signal."""
    if returncode is not None and returncode < 0:
        try:
            return f"the server was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"the server was killed by signal {-returncode}"
    return f"the server exited with status {returncode}"


@dataclass(frozen=True)
class Limits:
    """The bounds every child of a bridge keeps (the proxy's, per child)."""

    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_pending: int = DEFAULT_MAX_PENDING
    max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES
    request_timeout: float | None = None
    kill_after: float = DEFAULT_KILL_AFTER


class Call:
    """One request forwarded to a child: its answer, and the progress that came first."""

    __slots__ = ("caller_id", "child_id", "owner", "token", "notes", "note_bytes", "dropped",
                 "answer", "deadline", "_waiter", "_timer")

    def __init__(self, caller_id: RequestId | None, deadline: float | None = None) -> None:
        self.caller_id = caller_id
        self.deadline = deadline  # the loop time its answer is due by (None: no bound)
        self.child_id = 0
        self.owner: SharedChild | None = None  # the child it was forwarded to
        self.token: Any = None  # the caller's progress token, when it asked for progress
        self.notes: deque[bytes] = deque()
        self.note_bytes = 0
        self.dropped = 0  # notes past the bound, never delivered
        self.answer: bytes | None = None
        self._waiter: asyncio.Future[None] | None = None
        self._timer: asyncio.TimerHandle | None = None

    def note(self, line: bytes) -> None:
        """A notification for this caller, held until it reads it (bounded, see above)."""
        if self.answer is not None:
            return
        if self.note_bytes + len(line) > NOTE_BYTES:
            self.dropped += 1
            return
        self.notes.append(line)
        self.note_bytes += len(line)
        self._wake()

    def finish(self, line: bytes) -> None:
        """The answer (the caller's id in it): the last thing this call receives."""
        if self.answer is None:
            self.answer = line
            if self._timer is not None:
                self._timer.cancel()
            self._wake()

    async def wait(self) -> None:
        """Until there is a note or the answer to read."""
        while not self.notes and self.answer is None:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    def take_notes(self) -> list[bytes]:
        taken = list(self.notes)
        self.notes.clear()
        self.note_bytes = 0
        return taken

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class SharedChild:
    """One copy of the command: its ``Child``, the calls in flight on it, its restarts.

    ``on_notification(child, route)`` receives each notification that is not a call's
    progress (the bridge sends it to the sessions it concerns); ``on_request(child, route)``
    each request of the child's own (None: ``ping`` is answered, the rest -32601, as a
    shared child cannot say which client it asks).
    """

    def __init__(self, name: str, command: Sequence[str], *, limits: Limits,
                 env: dict[str, str] | None, cwd: str | None, log: Callable[[str], None],
                 on_notification: Callable[[SharedChild, Route], None],
                 record: str | None = None, stderr: str = "inherit",
                 label: str | None = None,
                 on_request: Callable[[SharedChild, Route], None] | None = None) -> None:
        self.name = name
        self.limits = limits
        self.log = log
        self.on_notification = on_notification
        self.on_request = on_request
        self.recorder = Recorder(None if record is None else f"{record}.{name}", log)
        # Its own process group: a terminal's Ctrl-C is the bridge's to act on, and the
        # bridge stops its children itself.
        self.child = Child(name, command, self, max_line_bytes=limits.max_line_bytes,
                           recorder=self.recorder, log=log, env=env, cwd=cwd, new_session=True,
                           stderr=ChildStderr(stderr, f"{label or os.path.basename(command[0])} "
                                                      f"{name}"))
        self.calls: dict[int, Call] = {}  # by the child's id for them
        self.bounds = Pending(limits.max_pending, limits.max_pending_bytes)  # the callers' ids
        self.next_id = 0
        self.gone: str | None = "not started"  # why the child takes no calls now, or None
        self.started_at = 0.0
        self.restart_at = 0.0  # not before this loop time
        self.failures = 0  # exits in a row, each doubling the backoff
        self.down_for = 0  # the last process whose end was counted (its backoff, its cause)
        self.stopping = False  # the bridge is stopping the process: its end is no news
        self.congested: asyncio.Future[None] | None = None  # while its stdin pipe is full
        self.forwarded = self.failed = 0

    # --- life ---------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.gone is None

    def restart_in(self) -> float:
        """Seconds until this child may be started again (0: now)."""
        return max(0.0, self.restart_at - asyncio.get_running_loop().time())

    @property
    def generation(self) -> int:
        return self.child.generation

    async def start(self) -> None:
        """Start the command (``OSError`` when it cannot be run). What the process before
        left is ended first: the process itself if it still runs (it closed a pipe a moment
        ago: ``_useless``), and calls whose failure waited for its output's end."""
        loop = asyncio.get_running_loop()
        self._useless(self.generation, self.gone or "the server was started again")
        if self.calls:
            self._fail_all(self.gone or "the server was started again")
        if self.recorder.prefix is not None and self.recorder.client is None:
            self.recorder.__enter__()
        # Set before it runs: its exit may come before we resume.
        self.gone, self.started_at, self.stopping = None, loop.time(), False
        try:
            await self.child.start()
        except OSError as error:
            self.gone = f"cannot run {self.child.command[0]}: {error.strerror or error}"
            self.restart_at = loop.time() + MAX_BACKOFF
            raise
        self.log(f"{self.name}: started {self.child.command[0]} (pid {self.child.pid})")

    async def stop(self, grace: float = 2.0, cause: str = "the bridge is stopping") -> None:
        """Fail its calls (``cause``), close its input, give it ``grace`` seconds, then
        SIGTERM, then SIGKILL."""
        self._fail_all(cause)
        self.gone = cause
        self.child_input_full(False)  # whoever waits to write learns it is over
        if self.child.transport is None or self.child.returncode is not None:
            return
        self.stopping = True
        self.child.close_input()
        await self.child.stop(grace, self.limits.kill_after)
        if self.child.stdout is not None:  # its reader's descriptor, whoever holds the pipe
            self.child.stdout.close()
        self.recorder.__exit__()

    # --- the child's events ------------------------------------------------------------------------

    def child_exited(self) -> None:
        """The process is gone. What it wrote before is still read (``output_closed`` comes
        within a loop iteration or two); a grandchild holding its stdout open cannot keep
        the calls waiting past ``EXIT_GRACE``."""
        cause = ended(self.child.returncode)
        if self.stopping:
            self._count_down()
        else:
            self._down(cause)
        if self.child.output_done:
            self._fail_all(cause)
        else:
            asyncio.get_running_loop().call_later(EXIT_GRACE, self._fail_generation,
                                                  self.generation, cause)

    def child_output_closed(self) -> None:
        if self.gone is not None:
            if self.child.returncode is not None:  # its exit came first
                self._fail_all(self.gone)
        else:  # usually exiting: its exit is reported within a moment (``exited``)
            asyncio.get_running_loop().call_later(
                EXIT_GRACE, self._useless, self.generation, "the server closed its output")

    def child_input_closed(self) -> None:
        self.child_input_full(False)
        if self.gone is None:  # not the bridge's doing: usually exiting, as above
            self.gone = "the server closed its input"  # nothing more can be written
            asyncio.get_running_loop().call_later(
                EXIT_GRACE, self._useless, self.generation, self.gone)

    def _useless(self, generation: int, cause: str) -> None:
        """It closed its stdout, or its stdin, ``EXIT_GRACE`` ago (or before a new one
        starts) and still runs: it can answer nothing more, or be asked nothing more. Its
        calls fail, and it is stopped (SIGTERM, then SIGKILL); the next call starts a new
        one."""
        child = self.child
        if (generation != child.generation or child.transport is None
                or child.returncode is not None or self.down_for == generation):
            return  # not this process, or not running, or stopped already
        self._down(cause, "stopping it")
        self._fail_all(cause)
        self.child.terminate(self.limits.kill_after)

    def _down(self, cause: str, then: str | None = None) -> None:
        """The process serves no more, for ``cause``: said once a process."""
        backoff = self._count_down()
        if backoff is not None:
            self.gone = cause
            self.log(f"{self.name}: {cause}; "
                     f"{then or f'started again for the next call in {backoff:g} s'}")

    def _count_down(self) -> float | None:
        """The backoff before the next start, once a process (None: counted already)."""
        if self.down_for == self.generation:
            return None
        self.down_for = self.generation
        loop = asyncio.get_running_loop()
        if loop.time() - self.started_at > STABLE_AFTER:
            self.failures = 0
        self.failures += 1
        backoff = min(MAX_BACKOFF, 0.25 * 2 ** (self.failures - 1))
        self.restart_at = loop.time() + backoff
        return backoff

    def child_input_full(self, full: bool) -> None:
        loop = asyncio.get_running_loop()
        if full and self.congested is None:
            self.congested = loop.create_future()
        elif not full and self.congested is not None:
            self.congested.set_result(None)
            self.congested = None

    # --- calls ----------------------------------------------------------------------------------

    def forward(self, r: Route, call: Call) -> bool:
        """Write the request ``r`` for ``call``; False when it is answered here instead (the
        child is gone, or a bound is reached: ``call.answer`` says which)."""
        if self.gone is None and self.child.output_done:
            self.gone = "the server closed its output"
        if self.gone is not None:
            cause, wait = self.gone, self.restart_in()
            if wait > 0 and self.down_for == self.generation and not self.stopping:
                cause += f"; restarting in {wait:.2g} s"  # in its backoff: when to retry
            call.finish(failure(call.caller_id, "Connection closed", cause))
            return False
        prepared = lines.with_child_ids(r, self.next_id + 1)
        if prepared is None:
            call.finish(lines.error(call.caller_id, lines.INVALID_PARAMS, lines.BAD_TOKEN))
            return False
        bound = self.bounds.add(call.caller_id)
        if bound is not None:
            call.finish(failure(call.caller_id, "Too many pending requests",
                                f"the bridge holds {self.limits.max_pending} requests or "
                                f"{self.limits.max_pending_bytes} bytes of ids on one server "
                                f"({bound})"))
            return False
        self.next_id += 1
        call.child_id = self.next_id
        call.owner = self
        line, call.token = prepared
        self.calls[call.child_id] = call
        deadline, timeout = call.deadline, self.limits.request_timeout
        if deadline is None and timeout is not None:  # a call that came with none: from now
            deadline = asyncio.get_running_loop().time() + timeout
        if deadline is not None:
            call._timer = asyncio.get_running_loop().call_at(deadline, self._time_out, call)
        self.forwarded += 1
        self.write(line)
        return True

    def ask(self, method: str, params: dict[str, Any]) -> Call:
        """A request of the bridge's own to this child (its handshake)."""
        call = Call(None)
        self.next_id += 1
        call.child_id = self.next_id
        self.calls[call.child_id] = call
        self.bounds.add(None)
        self.write(lines.request(call.child_id, method, params))
        return call

    def cancel(self, call: Call, reason: str) -> None:
        """The caller no longer waits: the child is told, as the spec says, and forgets it."""
        if self._drop(call.child_id) is not None and self.gone is None:
            self.write(lines.cancelled(call.child_id, reason))

    def rearm(self, call: Call, caller_id: RequestId, deadline: float | None) -> None:
        """``call``, in flight on this child, answers ``caller_id`` now, by ``deadline``
        (a 2026-07-28 caller's retry that resumes it: ``input_rounds``)."""
        self.bounds.answered(call.caller_id)
        self.bounds.add(caller_id)
        call.caller_id, call.deadline = caller_id, deadline
        if call._timer is not None:
            call._timer.cancel()
        timeout = self.limits.request_timeout
        if deadline is None and timeout is not None:
            deadline = asyncio.get_running_loop().time() + timeout
        if deadline is not None:
            call._timer = asyncio.get_running_loop().call_at(deadline, self._time_out, call)

    def write(self, line: bytes) -> None:
        """A line to the child (its LF added), while it takes input."""
        if self.gone is None:
            self.child.write(line)

    async def writable(self) -> None:
        """Until the child's stdin pipe takes more (its backpressure on every caller), or it
        takes nothing more (``forward`` then answers why)."""
        while self.congested is not None:
            await asyncio.shield(self.congested)

    def _drop(self, child_id: int) -> Call | None:
        call = self.calls.pop(child_id, None)
        if call is not None:
            self.bounds.answered(call.caller_id)
            if call._timer is not None:
                call._timer.cancel()
        return call

    def _time_out(self, call: Call) -> None:
        if self.calls.get(call.child_id) is not call:
            return
        timeout = self.limits.request_timeout
        self.log(f"{self.name}: no answer to {str(call.caller_id)[:80]!r} in {timeout:g} s; "
                 "cancelled")
        self.cancel(call, f"rpcline: no answer in {timeout:g} s")
        self.failed += 1
        call.finish(failure(call.caller_id, "Request timed out",
                            f"the server did not answer within {timeout:g} s"))

    def _fail_generation(self, generation: int, cause: str) -> None:
        if generation == self.generation:  # not a later process's calls
            self._fail_all(cause)

    def _fail_all(self, cause: str) -> None:
        for child_id in list(self.calls):
            call = self._drop(child_id)
            assert call is not None
            self.failed += 1
            call.finish(failure(call.caller_id, "Connection closed", cause))

    # --- from the child -------------------------------------------------------------------------

    def child_lines(self, routes: list[Any]) -> None:
        for r in routes:
            kind = r.kind
            if kind == "response":
                call = self._drop(r.id) if type(r.id) is int else None
                if call is not None:
                    call.finish(r.line if call.caller_id is None else r.with_id(call.caller_id))
                continue
            if kind == "notification":
                # Progress is about one call: its caller's, or (that call gone) nobody's. A
                # cancellation names a request of the child's own, which the bridge answered.
                if r.method == lines.PROGRESS:
                    self._progress(r)
                elif r.method != CANCELLED:
                    self.on_notification(self, r)
            elif kind == "request":
                if self.on_request is None:
                    self.write(lines.answer_child_request(r))
                else:
                    self.on_request(self, r)
            else:
                self._refused(r)

    def _progress(self, r: Route) -> None:
        """Progress for a call in flight goes to its caller, with the caller's token; any
        other (its call timed out, was cancelled or answered) is dropped."""
        line = r.line
        assert type(line) is bytes
        token = lines.progress_token(line)
        call = self.calls.get(token) if type(token) is int else None
        if call is not None and call.token is not None:
            call.note(lines.with_token(line, call.token))

    def _refused(self, r: Route) -> None:
        error = r.error
        assert error is not None
        if is_null_id_error(r):
            self.log(f"{self.name}: the server could not read a line ({error.reason})")
            return
        answered = answered_id(r, self.calls)
        call = self._drop(answered) if type(answered) is int else None
        if call is not None:
            self.log(f"{self.name}: the server sent a refused answer ({error.reason}); "
                     "failed its call")
            self.failed += 1
            call.finish(failure(call.caller_id, "Invalid response from the server",
                                f"the server's answer was refused: {error.reason}"))
        elif r.id is not None and r.method_span is not None:
            self.write(error_response(Refused(r.id, error)))
        else:
            self.log(f"{self.name}: the server sent a refused line ({error.reason}); dropped")
