"""rpcline: classify one line of JSON-RPC 2.0 / MCP input, fast and by the rules.

``parse(line)`` returns a ``Request``, a ``Notification``, a ``ClientResponse`` or a
``Refused`` carrying the protocol error to answer with. The Cython core is used when it
was built; ``RPCLINE_NO_EXTENSIONS=1`` (or a missing extension) selects the pure-Python
twin, which behaves identically (``rpcline._core`` makes that choice, once).
"""

from __future__ import annotations

from importlib import import_module as _import_module

# typing's TYPE_CHECKING without importing typing (orjson does not, and `import rpcline`
# stays within 1.5x `import orjson`); mypy gives this name the same meaning.
TYPE_CHECKING = False

__all__ = (
    "IMPLEMENTATION",
    "ClientResponse",
    "Incoming",
    "InvalidParams",
    "InvalidRequest",
    "Notification",
    "ParseError",
    "ProtocolError",
    "Refused",
    "Request",
    "RequestId",
    "Route",
    "StreamParser",
    "error_response",
    "id_json",
    "parse",
    "parse_lines",
    "read_messages",
    "route",
)

from rpcline._core import IMPLEMENTATION as IMPLEMENTATION
from rpcline._core.message import (
    ClientResponse,
    Incoming,
    InvalidParams,
    InvalidRequest,
    Notification,
    ParseError,
    ProtocolError,
    Refused,
    Request,
    error_response,
    id_json,
    parse,
)
from rpcline._core.readers import read_messages
from rpcline._core.route import Route, route
from rpcline._core.shared import RequestId
from rpcline._core.stream import StreamParser, parse_lines
from rpcline._version import __version__ as __version__

# Submodules with their own dependencies or import cost, imported on first attribute
# access (PEP 562): ``import rpcline`` stays cheap, ``rpcline.aio.messages`` just works.
# A new one is one line here.
_SUBMODULES: frozenset[str] = frozenset(
    {
        "aio",
        "auth",
        "bridge",
        "corpus",
        "http",
        "otel",
        "proxy",
        "sdk",
        "sse",
    }
)

if TYPE_CHECKING:  # mypy sees the submodules as attributes, and no __getattr__ hiding typos
    from rpcline import aio as aio
    from rpcline import auth as auth
    from rpcline import bridge as bridge
    from rpcline import corpus as corpus
    from rpcline import http as http
    from rpcline import otel as otel
    from rpcline import proxy as proxy
    from rpcline import sdk as sdk
    from rpcline import sse as sse
else:

    def __getattr__(name: str) -> object:
        if name in _SUBMODULES:
            return _import_module(f"rpcline.{name}")  # the import sets the attribute too
        raise AttributeError(f"module 'rpcline' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names only: ``__all__``, the lazy submodules and ``__version__``."""
    return sorted({*__all__, *_SUBMODULES, "__version__"})
