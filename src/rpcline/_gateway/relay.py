"""One relay session of ``rpcline.proxy``: the pending requests, each direction, the end.

The server is a ``child.Child`` (its process, pipes, framing, record and end, as in
``rpcline.bridge``), and this session is its ``ChildEvents``: the one caller, whose ids
the server sees as they are. Both sides are driven by callbacks where they can be: each
chunk of the server's stdout, and of the client's input when it is a pipe of ``open_stdio``'s
(``Consumer``), is classified and written on in the callback that received it, with no
task to wake: every wakeup is latency that a sequential caller pays on each call. Any
other ``Reader`` is read by a task.

Backpressure either way: when a peer's input is congested (the client's writer holds
more than its high-water mark, or the server's stdin pipe is full), whatever wrote what is
queued stops being read until it drains: the other peer, and the congested peer itself
when the relay answers it (a refused request, one past the pending bounds).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from rpcline._core.message import Refused, error_response
from rpcline._core.route import Route, route
from rpcline._core.shared import RequestId
from rpcline._core.stream import StreamParser
from rpcline._gateway.child import EXIT_GRACE, Child, Pauses
from rpcline._gateway.observe import Hooks
from rpcline._gateway.pending import Pending
from rpcline._gateway.record import Recorder
from rpcline._gateway.relay_lines import (CANCELLED, answered_id, cancelled_id, failure,
                                          is_null_id_error, shape, write_lines)
from rpcline._gateway.relay_observe import PipeWatches
from rpcline._gateway.relay_types import READ_BYTES, Attachable, Reader, Summary, Unbuffered, Writer


def _congested(writer: Writer) -> bool:
    """Whether the client's writer holds more than it should before it drains."""
    transport = getattr(writer, "transport", None)
    if transport is None:
        return not isinstance(writer, Unbuffered)  # an unknown writer: always drain
    high = transport.get_write_buffer_limits()[1]
    return bool(transport.get_write_buffer_size() > high)


class RelaySession:
    def __init__(self, command: Sequence[str], reader: Reader, writer: Writer,
                 max_line_bytes: int, max_pending: int, max_pending_bytes: int,
                 drain_timeout: float, kill_after: float, log: Callable[[str], None],
                 summary: Summary, recorder: Recorder, hooks: Hooks | None = None) -> None:
        loop = asyncio.get_running_loop()
        self.loop = loop
        self.client_in, self.client_out = reader, writer
        self.drain_timeout = drain_timeout
        self.kill_after = kill_after
        self.log = log
        self.summary = summary
        self.recorder = recorder
        # The server stays in the proxy's process group and environment (see proxy.relay);
        # the record keeps what the client sent, so the child records only its output.
        self.child = Child("server", command, self, max_line_bytes=max_line_bytes,
                           recorder=recorder, log=log, record_input=False)
        # Requests without an answer yet, each way.
        self.client_pending = Pending(max_pending, max_pending_bytes)
        self.server_pending = Pending(max_pending, max_pending_bytes)
        self.server_gone: str | None = None  # why the server can take no more, once it can't
        self.client_gone = False  # the client's output broke: nothing more reaches it
        self.answered_all = asyncio.Event()  # set whenever client_pending empties
        self.client_parser = StreamParser(max_line_bytes, classify=route)
        self.client_reader: Attachable | None = None
        self.client_paused = Pauses(self._pause_client, self._resume_client)  # why not read
        self.client_unpaused = asyncio.Event()
        self.client_done: asyncio.Task[None] | None = None
        self.server_silent: asyncio.Future[None] = loop.create_future()  # no more server lines
        self.client_draining: asyncio.Task[None] | None = None
        self.received_since_exit = False
        self.client_drained_at = 0.0  # when the client last took what was written to it
        # The hooks' view of the client's calls (None: no hooks, nothing to tell).
        self.watches = PipeWatches(hooks) if hooks is not None else None

    async def run(self) -> int:
        """Relay until the server has said all it will; its exit status (128 + N for signal N)."""
        if isinstance(self.client_in, Attachable):  # a pipe of open_stdio's, say
            self.client_reader = self.client_in
            self.client_in.attach(self)
        else:
            self.client_done = asyncio.create_task(self._client_to_server())
        await self.server_silent
        returncode = await self.child.stop(self.drain_timeout, self.kill_after)
        if self.client_reader is not None:
            self.client_reader.pause()  # the session is over: what comes next is not ours
        for task in (self.client_done, self.client_draining):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        return returncode if returncode >= 0 else 128 - returncode

    # --- client to server -------------------------------------------------------------------

    def client_data(self, data: bytes) -> None:
        """A chunk from the client, by callback (``Consumer``)."""
        self.recorder.write(self.recorder.client, data)
        self._from_client(self.client_parser.feed(data))

    def client_eof(self) -> None:
        self._from_client(self.client_parser.close())
        self.client_done = self.loop.create_task(self._after_client_eof())

    async def _client_to_server(self) -> None:
        """The client's side for any ``Reader``: a task that reads it."""
        parser = self.client_parser
        try:
            while chunk := await self.client_in.read(READ_BYTES):
                self.recorder.write(self.recorder.client, chunk)
                self._from_client(parser.feed(chunk))
                while self.client_paused:  # the server's stdin or the client's output is full
                    self.client_unpaused.clear()
                    await self.client_unpaused.wait()
            self._from_client(parser.close())
        except (ConnectionError, OSError) as error:  # the client's side broke
            self.log(f"client input failed: {error}")
        await self._after_client_eof()

    async def _after_client_eof(self) -> None:
        # The client is done sending: its requests in flight still deserve their answers.
        if self.client_pending and self.server_gone is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.answered_all.wait(), self.drain_timeout)
        self.child.close_input()
        await self.child.stop(self.drain_timeout, self.kill_after)

    def _from_client(self, routes: list[Any]) -> None:
        forward: list[bytes] = []
        answers: list[bytes] = []
        for r in routes:
            self.summary.client_lines += 1
            kind = r.kind
            if kind == "request":
                if self.server_gone is not None:
                    answers.append(failure(r.id, "Connection closed", self.server_gone))
                    self.summary.failed += 1
                    continue
                bound = self.client_pending.add(r.id)
                if bound is not None:
                    answers.append(self._too_many(r.id, bound))
                    self.summary.failed += 1
                    continue
                self.answered_all.clear()
                if self.watches is not None:
                    forward.append(self.watches.sent(r))
                    continue
            elif kind == "response":
                self.server_pending.answered(r.id)
            elif kind == "refused":
                self._client_refused(r, answers, forward)
                continue
            elif r.method == CANCELLED:
                self._answered(cancelled_id(r))  # the server will not answer it now
            forward.append(r.line)
        if forward and self.server_gone is None:
            self.child.write_lines(forward)
        if answers:
            self._to_client(answers)
            if self.client_draining is not None:  # our own answers congest it: wait
                self.pause_client("answers")

    def pause_client(self, reason: str) -> None:
        """Stop reading the client until ``reason`` is over (``resume_client``)."""
        self.client_paused.add(reason)

    def resume_client(self, reason: str) -> None:
        self.client_paused.discard(reason)

    def _pause_client(self) -> None:
        if self.client_reader is not None:
            self.client_reader.pause()

    def _resume_client(self) -> None:
        if self.client_reader is not None:
            self.client_reader.resume()
        self.client_unpaused.set()

    def child_input_full(self, full: bool) -> None:
        """The server's stdin pipe is full (or takes more again): its writers wait."""
        if full:
            self.pause_client("server input")
        else:
            self.resume_client("server input")
            self.child.resume("answers")

    def _client_refused(self, r: Route, answers: list[bytes], forward: list[bytes]) -> None:
        self.summary.client_refused += 1
        error = r.error
        assert error is not None
        answered = answered_id(r, self.server_pending)
        if answered is not None:  # a server request's
            self.log(f"client sent a refused answer to {answered!r} ({error.reason}); failed it")
            self.server_pending.answered(answered)
            forward.append(failure(answered, "Invalid response from the client",
                                    f"the client's answer was refused: {error.reason}"))
            self.summary.failed += 1
            return
        if shape(r) == "response":
            self.log(f"client sent a refused response ({error.reason}); not answered")
            return
        self.log(f"client sent a refused line ({error.reason}); answered")
        answers.append(error_response(Refused(r.id, error)))
        self.summary.answered += 1

    def child_input_closed(self) -> None:
        if self.server_gone is None:
            self.server_gone = "the server closed its input"
        self.child_input_full(False)  # nothing waits for a pipe that is gone

    # --- server to client (the child's events) ------------------------------------------------

    def child_lines(self, routes: list[Any]) -> None:
        self.received_since_exit = True
        self._from_server(routes)

    def child_output_closed(self) -> None:
        self.server_done("the server closed its output")

    def _from_server(self, routes: list[Any]) -> None:
        forward: list[bytes] = []
        for r in routes:
            self.summary.server_lines += 1
            kind = r.kind
            if kind == "response":
                self._answered(r.id, r.line)
            elif kind == "request":
                bound = self.server_pending.add(r.id)
                if bound is not None:
                    self._to_server(self._too_many(r.id, bound))
                    continue
            elif kind == "refused":
                self._server_refused(r, forward)
                continue
            elif r.method == CANCELLED:
                self.server_pending.answered(cancelled_id(r))
            forward.append(r.line)
        if forward:
            self._to_client(forward)

    def _server_refused(self, r: Route, forward: list[bytes]) -> None:
        if is_null_id_error(r):
            assert type(r.line) is bytes
            forward.append(r.line)  # JSON-RPC 2.0 §5: the client's line was unreadable
            return
        self.summary.server_refused += 1
        error = r.error
        assert error is not None
        answered = answered_id(r, self.client_pending)
        if answered is not None:
            self.log(f"server sent a refused answer to {answered!r} ({error.reason}); failed it")
            answer = failure(answered, "Invalid response from the server",
                             f"the server's answer was refused: {error.reason}")
            self._answered(answered, answer)
            forward.append(answer)
            self.summary.failed += 1
        elif shape(r) != "response" and r.id is not None:
            # A request the client would refuse: answered here, so the server does not wait.
            self.log(f"server sent a refused request ({error.reason}); answered")
            self._to_server(error_response(Refused(r.id, error)))
        else:
            self.log(f"server sent a refused line ({error.reason}); not forwarded")

    def _answered(self, id: Any, answer: bytes | None = None) -> None:
        """A client request is answered (``answer``: the line it gets; None: cancelled)."""
        if self.client_pending.answered(id):
            if self.watches is not None:
                self.watches.ended(id, answer)
            if not self.client_pending:
                self.answered_all.set()

    def _too_many(self, id: RequestId, bound: str) -> bytes:
        """The answer to a request past a pending bound: it is not forwarded."""
        pending = self.client_pending
        if bound == "max_pending":
            held = f"{pending.limit} requests without an answer"
        else:
            held = f"pending ids of {pending.max_bytes} bytes in all"
        self.log(f"the proxy holds {held}; {str(id)[:80]!r} answered with an error")
        return failure(id, "Too many pending requests", f"the proxy holds {held} ({bound})")

    def _to_server(self, line: bytes) -> None:
        """A line of the proxy's own to the server, while it still takes input. The server's
        output is what makes these: while its input is full, it is not read."""
        if self.server_gone is None:
            self.child.write(line)
            if self.child.input_congested:
                self.child.pause("answers")

    def _to_client(self, lines: Iterable[bytes]) -> None:
        """Write to the client; if its writer is congested, stop reading the server."""
        if self.client_gone:
            return
        try:
            write_lines(self.client_out.write, lines)
        except (ConnectionError, OSError):
            self.client_gone = True
            return
        if self.client_draining is None and _congested(self.client_out):
            self.child.pause("client output")
            self.client_draining = self.loop.create_task(self._drain_client())

    async def _drain_client(self) -> None:
        try:
            await self.client_out.drain()
        except (ConnectionError, OSError):
            self.client_gone = True  # what the server says now goes nowhere, but is read
        self.client_draining = None
        self.client_drained_at = self.loop.time()
        self.child.resume("client output")
        self.resume_client("answers")

    # --- the end ------------------------------------------------------------------------------

    def server_done(self, cause: str) -> None:
        """The server will say no more: answer every client request still pending."""
        if self.server_silent.done():
            return
        if self.server_gone is None:
            self.server_gone = cause
        pending = self.client_pending.take_all()
        self.answered_all.set()
        if pending:
            self.summary.failed += len(pending)
            if self.watches is not None:
                for id in pending:
                    self.watches.ended(id, failure(id, "Connection closed", cause))
            # One at a time: each id's answer is as long as the id (a bounded budget in all).
            self._to_client(failure(id, "Connection closed", cause) for id in pending)
        self.server_silent.set_result(None)

    def child_exited(self) -> None:
        self.received_since_exit = False
        self.client_drained_at = max(self.client_drained_at, self.loop.time())
        self.loop.call_later(EXIT_GRACE, self._after_exit_grace)

    def _after_exit_grace(self) -> None:
        """Still no EOF: something else holds the server's stdout. Stop waiting for it."""
        if self.server_silent.done():
            return
        stalled = self.loop.time() - self.client_drained_at
        if "client output" in self.child.paused and stalled > self.drain_timeout:
            # The server is gone and the client has read nothing for that long: what the
            # server said last goes nowhere, but its end must be read for the session to end.
            self.log(f"the client has read nothing for {self.drain_timeout:g} s after the "
                     "server exited; not waiting for it")
            self.client_gone = True
            self.child.resume("client output")
            self.received_since_exit = True  # now listening: give its end a grace of its own
        if self.received_since_exit or self.child.paused:
            self.received_since_exit = False  # it is still talking, or we are not listening
            self.loop.call_later(EXIT_GRACE, self._after_exit_grace)
            return
        self.log("the server exited but its output stays open (a child of its own?); "
                 "not waiting for it")
        self._from_server(self.child.parser.close())  # a last line cut short, if any
        self.server_done(f"the server exited with status {self.child.returncode}")
        if self.child.stdout is not None:
            self.child.stdout.close()

    def forward_signal(self, signum: signal.Signals) -> None:
        """Pass a signal sent to the proxy on to the server; SIGTERM, ``kill_after`` s later,
        becomes SIGKILL if the server is still there, as supervisors expect of a process
        they stop."""
        self.child.signal(signum)
        if signum == signal.SIGTERM:
            self.loop.call_later(self.kill_after, self._kill)

    def _kill(self) -> None:
        if self.child.returncode is None:
            self.log(f"server still running {self.kill_after:g} s after SIGTERM: killing it")
            self.child.signal(signal.SIGKILL)
