"""Server-Sent Events in, classified messages out: ``sse_c`` or its twin ``sse_py``."""

from __future__ import annotations

from rpcline._core import IMPLEMENTATION

TYPE_CHECKING = False  # typing's, without importing typing (see rpcline/__init__.py)

__all__ = ("Event", "EventStreamParser")

if TYPE_CHECKING or IMPLEMENTATION == "python":
    from rpcline._core.sse_py import Event, EventStreamParser
else:
    from rpcline._core.sse_c import Event, EventStreamParser
