"""What the Guard and the bridge share of ASGI 3: the types, the era of a request, a body read
with a bound, a whole response sent, and the key under which the Guard hands its verdict on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Final

__all__ = ("HANDSHAKE_PROTOCOL_VERSIONS", "MAX_BODY_BYTES", "TOO_LARGE", "VERDICT", "ASGIApp",
           "Message", "Receive", "Scope", "Send", "is_modern", "read_body", "respond")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# The SDK's bound on a POST body (its 413 beyond it).
MAX_BODY_BYTES: Final = 4 * 1024 * 1024
# The SDK's plain-text refusal of a body past the bound (mcp/server/transport_security.py).
TOO_LARGE: Final = (413, b"Request body too large")
# Where the Guard leaves the Verdict of a 2026-07-28 POST it let through, for the app (as
# Starlette's AuthenticationMiddleware leaves scope["auth"]): the body is classified once.
VERDICT: Final = "rpcline.verdict"

# mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS of mcp 2.3 (tests/test_guard.py holds them
# equal): the versions reached through the initialize handshake, served by the 2025-era
# paths. rpcline does not import the SDK at run time, so it keeps its own copy.
HANDSHAKE_PROTOCOL_VERSIONS: Final = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_HANDSHAKE: Final = frozenset(v.encode("ascii") for v in HANDSHAKE_PROTOCOL_VERSIONS)
_VERSION_HEADER: Final = b"mcp-protocol-version"  # ASGI gives header names in lowercase


def is_modern(headers: Iterable[tuple[bytes, bytes]]) -> bool:
    """The SDK's era test: the first version header is present and not a handshake version
    (a 2026-07-28 request); no header, or a handshake version, is the 2025 era."""
    for key, value in headers:
        if key == _VERSION_HEADER:
            return value not in _HANDSHAKE
    return False


async def read_body(receive: Receive, bound: int) -> bytes | tuple[int, bytes] | None:
    """The whole body, ``TOO_LARGE`` the moment it passes ``bound`` (nothing more is read),
    or None when the client disconnected first.

    Chunks are gathered into one ``bytearray``, as the SDK's limit middleware does: kept as
    objects of their own, a body sent two bytes at a time cost some 20 times its bound.
    """
    body: bytes | bytearray = b""
    while True:
        message = await receive()
        if message["type"] != "http.request":  # http.disconnect
            return None
        chunk = message.get("body", b"")
        if len(body) + len(chunk) > bound:
            return TOO_LARGE
        if not body:  # the first chunk (the usual case: the only one) is kept as it came
            body = chunk
        else:
            if type(body) is bytes:
                body = bytearray(body)
            body += chunk
        if not message.get("more_body", False):
            return body if type(body) is bytes else bytes(body)


async def respond(send: Send, status: int, body: bytes,
                  headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A whole response: ``headers``, its ``content-length``, then ``body``, in two sends."""
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", b"%d" % len(body))]})
    await send({"type": "http.response.body", "body": body, "more_body": False})
