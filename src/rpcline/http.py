"""MCP 2026-07-28 Streamable HTTP: one call decides what to do with a POST.

``check_request(body, headers)`` runs the official SDK's validation ladder (parse error,
notification, envelope, duplicated routing headers, the ``_meta`` envelope, the mirrored
``MCP-Protocol-Version`` / ``Mcp-Method`` / ``Mcp-Name`` headers, the version,
``Mcp-Param-*``) on the body's bytes, decoding only what the rungs read, and returns a
``Verdict`` with the HTTP status and the error response to send. ``ParamHeaders`` compiles
a tool's ``x-mcp-header`` annotations once; ``param_headers`` compiles a ``tools/list``
result. ``Guard`` is the ASGI middleware that puts the ladder in front of an app. The Cython core is used when it was built and
``RPCLINE_NO_EXTENSIONS`` is unset, as for ``rpcline`` itself.
"""

from __future__ import annotations

# The implementation rpcline itself picked (rpcline._core): the verdict's route and errors
# are the classes rpcline exports (isinstance(verdict.error, rpcline.ProtocolError) holds).
from rpcline._core.http import HeaderMismatch, UnsupportedProtocolVersion, Verdict, check_request
from rpcline._core.http_schema import ParamHeaders
from rpcline._gateway.guard import Guard, param_headers

__all__ = (
    "Guard",
    "HeaderMismatch",
    "ParamHeaders",
    "UnsupportedProtocolVersion",
    "Verdict",
    "check_request",
    "param_headers",
)


def __dir__() -> list[str]:
    """The public names only, as ``dir(rpcline)`` gives them (imports stay out of sight)."""
    return sorted(__all__)
