"""A stdio child process and its pipes: what every relay of rpcline has in common.

``rpcline proxy`` relays one client to one child (``relay``); ``rpcline.bridge`` shares
children among many callers (``shared_child``). Both are a ``Child``: the process, its
stdin written in lines, its stdout framed into routed lines (``StreamParser(classify=
route)``, bounded by ``max_line_bytes``), the record of both, reading paused for as many
reasons as there are, and the end: input closed, then SIGTERM, then SIGKILL. What a line
means, and who it goes to, is the ``ChildEvents`` of whoever owns the child.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Protocol, cast

from rpcline._core.route import route
from rpcline._core.stream import StreamParser
from rpcline._gateway.child_stderr import ChildStderr
from rpcline._gateway.pipes import spawn
from rpcline._gateway.record import Recorder
from rpcline._gateway.relay_lines import write_lines

# Variables a child gets whatever it is told: what finding programs and text needs.
# After a child exits, how long its stdout may stay open and silent: a grandchild that
# inherited it must not keep the callers waiting. What the child wrote before it exited is
# in the pipe already and is read within a loop iteration or two.
EXIT_GRACE: Final = 0.5
BASE_ENVIRONMENT: Final = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT")


class Pauses:
    """Why a reader is paused: ``pause`` runs when the first reason comes, ``resume`` when
    the last one goes (each reason is over on its own: a full pipe, a congested peer)."""

    def __init__(self, pause: Callable[[], None], resume: Callable[[], None]) -> None:
        self._pause, self._resume = pause, resume
        self.reasons: set[str] = set()

    def __bool__(self) -> bool:
        return bool(self.reasons)

    def __contains__(self, reason: str) -> bool:
        return reason in self.reasons

    def add(self, reason: str) -> None:
        if not self.reasons:
            self._pause()
        self.reasons.add(reason)

    def discard(self, reason: str) -> None:
        if reason in self.reasons:
            self.reasons.discard(reason)
            if not self.reasons:
                self._resume()


class ChildEvents(Protocol):
    """What the owner of a ``Child`` is told, as it happens."""

    def child_lines(self, routes: list[Any]) -> None: ...  # routed lines of its stdout

    def child_output_closed(self) -> None: ...  # its stdout's EOF, after its last lines

    def child_input_closed(self) -> None: ...  # its stdin is gone

    def child_exited(self) -> None: ...

    def child_input_full(self, full: bool) -> None: ...  # its stdin pipe is full, or not


class _Pipes(asyncio.SubprocessProtocol):
    """One process's pipes and exit, handed to its ``Child`` while it is that child's
    current process (a restarted child's old pipes, held open by a grandchild, are not)."""

    def __init__(self, child: Child) -> None:
        self.child = child
        self.generation = child.generation

    def _current(self) -> bool:
        return self.generation == self.child.generation

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A cast, not an isinstance check: uvloop's transports (uvicorn's loop when it is
        # installed) do not derive from asyncio's classes.
        if self._current():
            self.child.connected(cast(asyncio.SubprocessTransport, transport))

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if fd == 1 and self._current():
            self.child.from_child(data)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self._current():
            return
        if fd == 1:
            if exc is not None:
                self.child.log(f"{self.child.name} output failed: {exc}")
            self.child.output_closed()
        elif fd == 0:
            self.child.events.child_input_closed()

    def process_exited(self) -> None:
        if self._current():
            self.child.exited()

    def pause_writing(self) -> None:  # the child's stdin pipe is full
        if self._current():
            self.child.input_full(True)

    def resume_writing(self) -> None:
        if self._current():
            self.child.input_full(False)


class Child:
    """One command as a process: started (again, after an exit) by ``start``."""

    def __init__(self, name: str, command: Sequence[str], events: ChildEvents, *,
                 max_line_bytes: int, recorder: Recorder, log: Callable[[str], None],
                 env: dict[str, str] | None = None, cwd: str | None = None,
                 new_session: bool = False, record_input: bool = True,
                 stderr: ChildStderr | None = None) -> None:
        self.name = name
        self.stderr = stderr  # None: the gateway's own
        self.command = list(command)
        self.events = events
        self.max_line_bytes = max_line_bytes
        self.recorder = recorder
        self.log = log
        self.env, self.cwd, self.new_session = env, cwd, new_session
        self.record_input = record_input  # the record's client file: what it was sent
        self.generation = 0  # processes started so far
        self.parser = StreamParser(max_line_bytes, classify=route)
        self.transport: asyncio.SubprocessTransport | None = None
        self.stdin: asyncio.WriteTransport | None = None
        self.stdout: asyncio.ReadTransport | None = None
        self.output_done = False  # its stdout reached EOF
        self.input_congested = False  # its stdin pipe is full
        self.paused = Pauses(self._pause_reading, self._resume_reading)  # why it is not read
        self.exited_now: asyncio.Future[None] | None = None  # done when the process exits

    async def start(self) -> None:
        """Start the command (``OSError`` when it cannot be run)."""
        loop = asyncio.get_running_loop()
        # All set before it runs: its first bytes, or its exit, may come before we resume.
        self.generation += 1
        self.parser = StreamParser(self.max_line_bytes, classify=route)
        if self.stdout is not None:  # a previous process's, held open by a grandchild?
            self.stdout.close()
        self.stdin = self.stdout = None
        self.output_done = self.input_congested = False
        self.paused = Pauses(self._pause_reading, self._resume_reading)
        self.exited_now = loop.create_future()
        stderr = None if self.stderr is None else self.stderr.child_end()
        try:
            _, self.stdout = await spawn(
                lambda: _Pipes(self), self.command, env=self.env, cwd=self.cwd,
                start_new_session=self.new_session, stderr=stderr)
        finally:
            if self.stderr is not None:
                await self.stderr.started(self.pid if self.transport is not None else None)

    def connected(self, transport: asyncio.SubprocessTransport) -> None:
        self.transport = transport
        # stdout: spawn's reader, set by start; a cast: uvloop's transports are not asyncio's
        self.stdin = cast(asyncio.WriteTransport, transport.get_pipe_transport(0))

    @property
    def pid(self) -> int | None:
        return None if self.transport is None else self.transport.get_pid()

    @property
    def returncode(self) -> int | None:
        return None if self.transport is None else self.transport.get_returncode()

    # --- events, from _Pipes --------------------------------------------------------------------

    def from_child(self, data: bytes) -> None:
        self.recorder.write(self.recorder.server, data)
        self.events.child_lines(self.parser.feed(data))

    def output_closed(self) -> None:
        self.output_done = True
        self.events.child_lines(self.parser.close())
        self.events.child_output_closed()

    def exited(self) -> None:
        if self.exited_now is not None and not self.exited_now.done():
            self.exited_now.set_result(None)
        self.events.child_exited()

    def input_full(self, full: bool) -> None:
        self.input_congested = full
        self.events.child_input_full(full)

    # --- what the owner does --------------------------------------------------------------------

    def write(self, line: bytes) -> None:
        """One line (its LF added) to the child's stdin."""
        self.write_lines((line,))

    def write_lines(self, lines: Iterable[bytes]) -> None:
        if self.stdin is None or self.stdin.is_closing():
            return
        if self.record_input and self.recorder.client is not None:
            lines = list(lines)
            self.recorder.write(self.recorder.client, b"".join(line + b"\n" for line in lines))
        write_lines(self.stdin.write, lines)

    def close_input(self) -> None:
        if self.stdin is not None:
            self.stdin.close()

    def pause(self, reason: str) -> None:
        """Stop reading its stdout until ``reason`` is over (``resume``)."""
        self.paused.add(reason)

    def resume(self, reason: str) -> None:
        self.paused.discard(reason)

    def _pause_reading(self) -> None:
        if self.stdout is not None and not self.stdout.is_closing():
            self.stdout.pause_reading()

    def _resume_reading(self) -> None:
        if self.stdout is not None and not self.stdout.is_closing():
            self.stdout.resume_reading()

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the process, if it still runs."""
        if self.transport is not None:
            _send_signal(self.transport, signum)

    def terminate(self, kill_after: float) -> None:
        """SIGTERM the process if it still runs, and SIGKILL it ``kill_after`` seconds later
        if it runs still: in the background, so that a new process may start meanwhile."""
        transport = self.transport
        if transport is None or transport.get_returncode() is not None:
            return
        _send_signal(transport, signal.SIGTERM)
        asyncio.get_running_loop().call_later(kill_after, self._kill, transport, kill_after)

    def _kill(self, transport: asyncio.SubprocessTransport, after: float) -> None:
        if transport.get_returncode() is None:
            self.log(f"{self.name} (pid {transport.get_pid()}) did not exit within {after:g} s "
                     "of SIGTERM: killing it")
            _send_signal(transport, signal.SIGKILL)

    async def stop(self, grace: float, kill_after: float) -> int:
        """Give the process ``grace`` seconds to exit by itself, then SIGTERM, then, after
        ``kill_after`` more, SIGKILL; its exit status (-N for signal N)."""
        assert self.exited_now is not None
        for signum, wait in ((None, grace), (signal.SIGTERM, kill_after),
                             (signal.SIGKILL, None)):
            if signum is not None:
                if signum == signal.SIGTERM and grace > 0:  # with none, no news: it is asked to
                    self.log(f"{self.name} did not exit within {grace:g} s: terminating it")
                self.signal(signum)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(self.exited_now), wait)
                break
        returncode = self.returncode
        assert returncode is not None
        return returncode


def _send_signal(transport: asyncio.SubprocessTransport, signum: int) -> None:
    """Not to a process whose exit was seen: its pid may be another's by now (and asyncio's
    ``Popen.send_signal`` polls first, reaping a process that has just exited before its
    watcher does, which then reports status 255)."""
    if transport.get_returncode() is None:
        with contextlib.suppress(ProcessLookupError):
            transport.send_signal(signum)


def child_environment(env: Iterable[str] | Mapping[str, str] = (), *,
                      everything: bool = False) -> dict[str, str]:
    """The environment a child gets: ``BASE_ENVIRONMENT`` and only the variables named in
    ``env`` (all of them: ``everything``), from this process's; ``env`` a mapping gives
    values of its own, which win."""
    if isinstance(env, Mapping):
        keep, given = set(BASE_ENVIRONMENT), dict(env)
    else:
        keep, given = {*BASE_ENVIRONMENT, *env}, {}
    inherited = {name: value for name, value in os.environ.items()
                 if everything or name in keep}
    return {**inherited, **given}
