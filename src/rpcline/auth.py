"""``rpcline serve`` as an OAuth 2.1 resource server: ASGI middleware for any app.

    from rpcline.auth import ResourceServer
    app = ResourceServer(bridge, "https://auth.example.com", "https://mcp.example.com",
                         scopes=["mcp"])

``ResourceServer`` publishes the Protected Resource Metadata of RFC 9728, answers a request
without a valid access token 401 with the MCP challenge (403 ``insufficient_scope`` when a
scope is missing, 503 when the authorization server cannot be reached), checks JWT access
tokens against the issuer's JWKS (or asks its RFC 7662 introspection endpoint), removes the
``Authorization`` header, and hands the app the caller as an ``Identity`` under
``scope[IDENTITY]``. docs/auth.md says what is checked and what is not.

Needs the ``auth`` extra (PyJWT with cryptography, and httpx): ``pip install 'rpcline[auth]'``.
"""

from __future__ import annotations

try:
    import httpx as _httpx  # noqa: F401
    import jwt as _jwt  # noqa: F401
except ImportError as _missing:  # pragma: no cover - the extra is installed in CI
    raise ImportError(f"rpcline.auth needs the auth extra ({_missing.name} is missing): "
                      "pip install 'rpcline[auth]'") from _missing

from rpcline._gateway.auth import MAX_AUTHORIZATION_BYTES, WELL_KNOWN, ResourceServer
from rpcline._gateway.auth_identity import IDENTITY, Identity

__all__ = ("IDENTITY", "MAX_AUTHORIZATION_BYTES", "WELL_KNOWN", "Identity", "ResourceServer")


def __dir__() -> list[str]:
    return sorted(__all__)
