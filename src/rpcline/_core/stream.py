"""Many lines at a time, from buffers and streams: ``stream_c`` or its twin ``stream_py``."""

from __future__ import annotations

from rpcline._core import IMPLEMENTATION

TYPE_CHECKING = False  # typing's, without importing typing (see rpcline/__init__.py)

__all__ = ("StreamParser", "parse_lines")

if TYPE_CHECKING or IMPLEMENTATION == "python":
    from rpcline._core.stream_py import StreamParser, parse_lines
else:
    from rpcline._core.stream_c import StreamParser, parse_lines
