"""A child process started by ``subprocess.Popen``, as a subprocess transport on any loop.

The loops' own ``subprocess_exec`` do not start a child alike: uvloop's (uvicorn's loop
when it is installed) makes each of the child's pipes an inheritable duplicate before it
forks, and libuv closes no descriptor that it did not create, so the child keeps a second
descriptor of its own stdin and stdout, and every inheritable descriptor of the gateway. A
child that closes its stdin or its stdout then gives the gateway no end to see. ``Popen``
(``close_fds``) gives the child its three standard descriptors and nothing else, whatever
loop runs; its stdin is then written by the loop's own pipe transport
(``connect_write_pipe``, with its flow control and its notice of the read end's close),
and its exit is waited for by a thread of its own (``Popen.wait``), as asyncio's
``ThreadedChildWatcher`` does, so no loop needs to know of the process.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import Any


class _Input(asyncio.Protocol):
    """The child's stdin, reported to its subprocess protocol as asyncio does (fd 0)."""

    def __init__(self, protocol: asyncio.SubprocessProtocol) -> None:
        self.protocol = protocol

    def pause_writing(self) -> None:
        self.protocol.pause_writing()

    def resume_writing(self) -> None:
        self.protocol.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.protocol.pipe_connection_lost(0, exc)


class Process(asyncio.SubprocessTransport):
    """``command`` running, its stdin a pipe written by the loop, its stdout ``stdout`` (a
    descriptor, the child's fd 1), its stderr ``stderr`` (None: the gateway's). ``protocol`` hears
    ``connection_made``, ``pause_writing`` / ``resume_writing`` and
    ``pipe_connection_lost(0, ...)`` of its stdin, and ``process_exited``."""

    def __init__(self, protocol: asyncio.SubprocessProtocol, command: Sequence[str], *,
                 stdout: int, stderr: int | None = None, env: dict[str, str] | None = None,
                 cwd: str | None = None, start_new_session: bool = False) -> None:
        super().__init__()
        self._loop = asyncio.get_running_loop()
        self._protocol = protocol
        self._stdin: asyncio.WriteTransport | None = None
        self._returncode: int | None = None
        self._connected = self._closed = False
        read_end, self._write_end = os.pipe()  # neither inheritable: Popen dups read_end
        try:
            self._popen = subprocess.Popen(
                list(command), stdin=read_end, stdout=stdout, stderr=stderr, env=env, cwd=cwd,
                start_new_session=start_new_session, close_fds=True)
        except BaseException:
            os.close(self._write_end)
            raise
        finally:
            os.close(read_end)
        # Reaped by this thread whatever happens next (no zombie is left behind).
        threading.Thread(target=self._wait, name=f"rpcline-wait-{self._popen.pid}",
                         daemon=True).start()

    async def connect(self) -> None:
        """Attach its stdin to the loop and tell the protocol (its exit comes after)."""
        os.set_blocking(self._write_end, False)
        pipe = open(self._write_end, "wb", buffering=0)  # noqa: SIM115
        try:
            stdin, _ = await self._loop.connect_write_pipe(lambda: _Input(self._protocol), pipe)
        except BaseException:
            pipe.close()
            self.kill()
            raise
        self._stdin = stdin
        self._connected = True
        self._protocol.connection_made(self)
        if self._returncode is not None:  # it exited before
            self._protocol.process_exited()

    def _wait(self) -> None:  # in a thread of its own
        returncode = self._popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
            self._loop.call_soon_threadsafe(self._exited, returncode)

    def _exited(self, returncode: int) -> None:
        self._returncode = returncode
        if self._connected:
            self._protocol.process_exited()

    # --- asyncio.SubprocessTransport ------------------------------------------------------------

    def get_pid(self) -> int:
        return self._popen.pid

    def get_returncode(self) -> int | None:
        """Its exit status once the loop has seen it exit (-N for signal N)."""
        return self._returncode

    def get_pipe_transport(self, fd: int) -> Any:
        return self._stdin if fd == 0 else None

    def send_signal(self, signal: int) -> None:
        """Not to a process already reaped (``Popen.send_signal`` checks): its pid may be
        another's by now."""
        with contextlib.suppress(ProcessLookupError):
            self._popen.send_signal(signal)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def is_closing(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Close its stdin and, as asyncio's transports do, kill it if it still runs."""
        if self._closed:
            return
        self._closed = True
        if self._stdin is not None:
            self._stdin.close()
        if self._returncode is None:
            self.kill()

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._protocol

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        assert isinstance(protocol, asyncio.SubprocessProtocol)
        self._protocol = protocol
