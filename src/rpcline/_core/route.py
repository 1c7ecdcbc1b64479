"""``route``: the card's rules without decoding params or result; ``route_c`` or its twin."""

from __future__ import annotations

from rpcline._core import IMPLEMENTATION

TYPE_CHECKING = False  # typing's, without importing typing (see rpcline/__init__.py)

__all__ = ("Route", "prefix_refusal", "route")

if TYPE_CHECKING or IMPLEMENTATION == "python":
    from rpcline._core.route_py import Route, prefix_refusal, route
else:
    from rpcline._core.route_c import Route, prefix_refusal, route
