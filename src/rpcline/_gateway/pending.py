"""The relay's table of requests without an answer yet, one direction's."""

from __future__ import annotations

import sys
from typing import Any


def request_id(value: Any) -> Any:
    """``value`` if it can name a request (an exact int or str, the card's ids), else None.

    A ``notifications/cancelled`` may carry anything in ``params.requestId``: an array or
    an object cannot be a key, and ``1.0`` or ``true`` would equal the id ``1``.
    """
    return value if type(value) is int or type(value) is str else None


class Pending:
    """Ids as they came (``1`` and ``"1"`` apart), each with how many requests carry it.

    Two requests in flight with one id are two callers: each gets its own answer when the
    server goes. At most ``limit`` requests are held, and their ids take at most
    ``max_bytes`` (each counted at its size in memory, once per request: JSON-RPC puts
    no bound on a string id), so a peer that never answers costs a bounded amount of memory.
    """

    def __init__(self, limit: int, max_bytes: int) -> None:
        self.limit = limit
        self.max_bytes = max_bytes
        self._counts: dict[Any, int] = {}
        self._total = 0
        self._bytes = 0

    def __len__(self) -> int:
        return self._total

    def __contains__(self, id: Any) -> bool:
        return id in self._counts

    def add(self, id: Any) -> str | None:
        """Hold one more request with ``id``; None, or the bound it would pass
        (``"max_pending"`` or ``"max_pending_bytes"``), holding nothing."""
        if self._total >= self.limit:
            return "max_pending"
        size = sys.getsizeof(id)
        if self._bytes + size > self.max_bytes:
            return "max_pending_bytes"
        self._counts[id] = self._counts.get(id, 0) + 1
        self._total += 1
        self._bytes += size
        return None

    def answered(self, id: Any) -> bool:
        """Forget one request with ``id``; whether there was one."""
        count = self._counts.get(id)
        if count is None:
            return False
        if count == 1:
            del self._counts[id]
        else:
            self._counts[id] = count - 1
        self._total -= 1
        self._bytes -= sys.getsizeof(id)
        return True

    def take_all(self) -> list[Any]:
        """Every request held, an id once per request, and forget them."""
        ids = [id for id, count in self._counts.items() for _ in range(count)]
        self._counts.clear()
        self._total = self._bytes = 0
        return ids
