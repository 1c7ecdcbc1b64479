"""The classifier: scanning, messages, routes, stream framing, SSE and the HTTP ladder.

Each family is a Cython module (``*_c.pyx``, its C headers beside it) and its pure-Python
twin (``*_py.py``), mirrored function by function, behind a module of the family's name
that picks one of the two (``message``, ``route``, ``stream``, ``sse``, ``http``), as
aiohttp's ``_websocket/reader.py`` picks ``reader_c`` or ``reader_py``. Which of the two
runs is decided here, once, for every family: ``IMPLEMENTATION``. What a core module and
its twin share lives in modules of its own (``shared``, ``http_shared``, ``sse_shared``),
so that a twin loads only where it is the implementation in use.

This wing imports nothing else of rpcline: the gateway, the command line and the public
modules build on it.
"""

from __future__ import annotations

import os
from importlib import import_module

TYPE_CHECKING = False  # typing's, without importing typing (see rpcline/__init__.py)
if TYPE_CHECKING:
    from typing import Literal

__all__ = ("IMPLEMENTATION",)


def _extension_built() -> bool:
    try:
        import_module("rpcline._core.message_c")
    except ImportError:  # pragma: no cover - the extension was not built here
        return False
    return True


# RPCLINE_NO_EXTENSIONS (any non-empty value) forces the twin; so does a missing extension.
IMPLEMENTATION: Literal["cython", "python"] = (
    "python" if TYPE_CHECKING or os.environ.get("RPCLINE_NO_EXTENSIONS")
    or not _extension_built() else "cython"
)
