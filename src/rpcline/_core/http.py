"""``check_request``, the MCP 2026-07-28 HTTP ladder: ``http_c`` or its twin ``http_py``."""

from __future__ import annotations

from rpcline._core import IMPLEMENTATION

TYPE_CHECKING = False  # typing's, without importing typing (see rpcline/__init__.py)

__all__ = ("HeaderMismatch", "UnsupportedProtocolVersion", "Verdict", "check_request")

if TYPE_CHECKING or IMPLEMENTATION == "python":
    from rpcline._core.http_py import (HeaderMismatch, UnsupportedProtocolVersion, Verdict,
                                       check_request)
else:
    from rpcline._core.http_c import (HeaderMismatch, UnsupportedProtocolVersion, Verdict,
                                      check_request)
