"""The types and constants that ``proxy``, ``relay`` and ``stdio`` share.

They live here, importing nothing of rpcline's, so that every import among those modules
points down: ``proxy`` imports ``relay`` and ``stdio``, and both of those import this.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Protocol, runtime_checkable

# SDK sessions carry tool results of 20 MB and more; a limit is there to bound memory.
DEFAULT_MAX_LINE_BYTES: Final = 64 * 1024 * 1024
# Requests without an answer yet, each way: far more than any session keeps in flight
# (the SDK tests run 1,000 concurrent calls), and a bound on what a silent peer costs.
DEFAULT_MAX_PENDING: Final = 10_000
# What their ids may take in all, each way (each counted at its size in memory): JSON-RPC
# puts no bound on a string id, and 10,000 ids of 64 MiB would be 640 GiB. Ids of a few
# dozen bytes, as every SDK sends, fill the count long before this.
DEFAULT_MAX_PENDING_BYTES: Final = 16 * 1024 * 1024
READ_BYTES: Final = 64 * 1024
# Seconds between SIGTERM and SIGKILL for a server that stays.
DEFAULT_KILL_AFTER: Final = 2.0


class Reader(Protocol):
    async def read(self, n: int = -1, /) -> bytes: ...


class Writer(Protocol):
    def write(self, data: bytes, /) -> Any: ...
    async def drain(self) -> None: ...


class Consumer(Protocol):
    """What an ``Attachable`` reader calls: each chunk, then the end, once."""

    def client_data(self, data: bytes, /) -> None: ...
    def client_eof(self) -> None: ...


@runtime_checkable
class Attachable(Protocol):
    """A reader that can hand its chunks to a ``Consumer`` by callback, and be paused."""

    def attach(self, consumer: Consumer, /) -> None: ...
    def pause(self) -> None: ...
    def resume(self) -> None: ...


class Unbuffered:
    """A writer whose ``write`` completes the write (``drain`` waits for nothing)."""


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass
class Summary:
    """What one relay did: lines each way, refusals, and answers the proxy made up."""

    client_lines: int = 0
    server_lines: int = 0
    client_refused: int = 0
    server_refused: int = 0
    answered: int = 0  # refused client requests answered with error_response
    failed: int = 0  # pending requests answered with -32000 by the proxy
    returncode: int | None = None

    def __str__(self) -> str:
        return (f"client to server {_count(self.client_lines, 'line')} ({self.client_refused} "
                f"refused, {self.answered} answered), server to client "
                f"{_count(self.server_lines, 'line')} ({self.server_refused} refused), "
                f"{_count(self.failed, 'pending request')} failed, "
                f"server exit status {self.returncode}")
