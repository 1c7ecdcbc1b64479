"""``pipes.PipeReadTransport``: what it reads at a time, and how it ends; what ``spawn``'s
children get."""

from __future__ import annotations

import asyncio
import fcntl
import importlib.util
import os
import sys

import pytest

from rpcline._gateway.pipes import MAX_READ_BYTES, PipeReadTransport, spawn
from rpcline._gateway.relay_types import READ_BYTES


class Recorder(asyncio.Protocol):
    def __init__(self) -> None:
        self.events: list[object] = []

    def data_received(self, data: bytes) -> None:
        self.events.append(len(data))

    def eof_received(self) -> bool:
        self.events.append("eof")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.events.append(("lost", exc))


def test_reads_grow_while_they_fill_and_fall_back_when_they_do_not():
    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        read_end, write_end = os.pipe()
        fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4 * MAX_READ_BYTES)  # room for each chunk
        protocol = Recorder()
        transport = PipeReadTransport(loop, read_end, protocol, close_fd=True)
        written = 0
        for chunk in (READ_BYTES, 2 * READ_BYTES, 2 * MAX_READ_BYTES, 100):
            os.write(write_end, b"x" * chunk)
            written += chunk
            while sum(n for n in protocol.events if isinstance(n, int)) < written:
                await asyncio.sleep(0.001)
            protocol.events.append(("next read", transport._size))
        os.close(write_end)
        while ("lost", None) not in protocol.events:
            await asyncio.sleep(0.001)
        return protocol.events

    events = asyncio.run(main())
    assert events == [READ_BYTES, ("next read", 2 * READ_BYTES),  # full: read twice as much
                      2 * READ_BYTES, ("next read", 4 * READ_BYTES),
                      MAX_READ_BYTES, MAX_READ_BYTES, ("next read", MAX_READ_BYTES),  # no more
                      100, ("next read", READ_BYTES),  # a short read: back to READ_BYTES
                      "eof", ("lost", None)]


def test_close_stops_reading_and_closes_only_its_own_descriptor():
    async def main() -> list[object]:
        loop = asyncio.get_running_loop()
        events: list[object] = []
        for close_fd in (True, False):
            read_end, write_end = os.pipe()
            protocol = Recorder()
            transport = PipeReadTransport(loop, read_end, protocol, close_fd=close_fd)
            transport.pause_reading()
            os.write(write_end, b"held")
            await asyncio.sleep(0.01)
            assert protocol.events == []  # paused: nothing read
            transport.resume_reading()
            await asyncio.sleep(0.01)
            transport.close()
            assert transport.is_closing() and not transport.is_reading()
            await asyncio.sleep(0)
            events.append(protocol.events)
            try:
                os.fstat(read_end)
                events.append("open")
                os.close(read_end)
            except OSError:
                events.append("closed")
            os.close(write_end)
        return events

    assert asyncio.run(main()) == [[4, ("lost", None)], "closed", [4, ("lost", None)], "open"]


CHILD_DESCRIPTORS = """\
import os
listed = os.listdir("/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd")
def is_open(fd):
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True
print(sorted(fd for fd in map(int, listed) if is_open(fd)))  # the listing's own is closed
"""


@pytest.mark.parametrize("loop", ["asyncio", pytest.param("uvloop", marks=pytest.mark.skipif(
    importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed"))])
def test_a_child_gets_its_three_standard_descriptors_and_no_other(loop: str):
    """uvloop's spawn leaves a child a second descriptor of each of its pipes and every
    inheritable descriptor of the parent: a child that closes its stdin or stdout then
    gives the gateway no end to see. Whichever loop runs, a child gets 0, 1 and 2 only."""

    class Collect(asyncio.SubprocessProtocol):
        def __init__(self) -> None:
            self.out = b""
            self.done = asyncio.get_running_loop().create_future()

        def pipe_data_received(self, fd: int, data: bytes) -> None:
            self.out += data

        def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
            if fd == 1:
                self.done.set_result(None)

    async def main() -> bytes:
        inherited, other = os.pipe()
        os.set_inheritable(inherited, True)  # one of the parent's, inheritable
        try:
            protocol = Collect()
            transport, reader = await spawn(lambda: protocol,
                                            [sys.executable, "-c", CHILD_DESCRIPTORS])
            await asyncio.wait_for(protocol.done, 30)
            reader.close()
            transport.close()
            return protocol.out
        finally:
            os.close(inherited)
            os.close(other)

    if loop == "uvloop":
        import uvloop

        out = uvloop.run(main())
    else:
        out = asyncio.run(main())
    assert out.strip() == b"[0, 1, 2]"
