"""Where a child's stderr goes: the gateway's own (``inherit``), the same but each line
prefixed with the child it came from (``prefix``, ``[NAME ERA-N PID] ...``), a file
(``file:PATH``, appended to), or nowhere (``discard``).

Several children of one gateway write to one terminal or journal; unprefixed, nobody can
tell which child, era or process a traceback came from. (On Windows ``prefix`` is
``inherit``: its loop reads no anonymous pipe.)
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from typing import BinaryIO, Final

CHOICES: Final = ("inherit", "prefix", "discard", "file:PATH")
LINE_BYTES: Final = 64 * 1024  # a line longer than this is written in pieces, each prefixed


def check(choice: str) -> str:
    """``choice`` when it is one of ``CHOICES`` (``file:`` with a path), else ValueError."""
    if choice in ("inherit", "prefix", "discard") or (choice.startswith("file:") and choice[5:]):
        return choice
    raise ValueError(f"child stderr must be inherit, prefix, discard or file:PATH, "
                     f"not {choice!r}")


class ChildStderr:
    """One child's stderr, set up around each start of its process."""

    def __init__(self, choice: str, label: str, out: BinaryIO | None = None) -> None:
        self.choice = check(choice)
        self.label = label  # "NAME ERA-N"
        self.out = out  # where prefixed lines go (None: this process's stderr)
        self._read_end: int | None = None
        self._child_end: int | None = None

    def child_end(self) -> int | None:
        """The descriptor to give the process as its stderr (None: the gateway's own)."""
        if self.choice == "inherit" or (self.choice == "prefix" and os.name == "nt"):
            return None  # Windows: no pipe the loop can read by readiness; as it is
        if self.choice == "discard":
            return subprocess.DEVNULL
        if self.choice == "prefix":
            self._read_end, self._child_end = os.pipe()
        else:
            self._child_end = os.open(self.choice[5:], os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                                      0o644)
        return self._child_end

    async def started(self, pid: int | None) -> None:
        """The process runs (or failed to start: ``pid`` None): the parent's copy of its
        end is closed, so the pipe ends with the process; its lines are read from here."""
        if self._child_end is not None:
            os.close(self._child_end)
            self._child_end = None
        read_end, self._read_end = self._read_end, None
        if read_end is None:
            return
        pipe = open(read_end, "rb", buffering=0)  # noqa: SIM115  (closed by the transport)
        if pid is None:
            pipe.close()
            return
        out = self.out or sys.stderr.buffer
        await asyncio.get_running_loop().connect_read_pipe(
            lambda: _Prefixed(f"[{self.label} {pid}] ".encode(), out), pipe)


class _Prefixed(asyncio.Protocol):
    """Each line of a pipe, prefixed, as soon as it is whole (and what is left at its end)."""

    def __init__(self, prefix: bytes, out: BinaryIO) -> None:
        self.prefix = prefix
        self.out = out
        self.pending = bytearray()

    def data_received(self, data: bytes) -> None:
        self.pending += data
        lines: list[bytes] = [bytes(line) for line in self.pending.split(b"\n")]
        self.pending = bytearray(lines.pop())
        while len(self.pending) > LINE_BYTES:  # a line without end: in pieces
            lines.append(bytes(self.pending[:LINE_BYTES]))
            del self.pending[:LINE_BYTES]
        self._write(lines)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.pending:
            self._write([bytes(self.pending)])
            self.pending.clear()

    def _write(self, lines: list[bytes]) -> None:
        """Written at once, flushed: a line of the child's comes out whole or not at all."""
        if lines:
            try:
                self.out.write(b"".join(self.prefix + line + b"\n" for line in lines))
                self.out.flush()
            except (OSError, ValueError):  # our stderr is gone: the child's lines with it
                pass
