"""``Cors``: browser clients of listed origins, as ASGI 3 middleware around any app.

A browser lets a page read an answer from another origin only when the answer says that
origin may, and sends a preflight (``OPTIONS`` with ``Access-Control-Request-Method``)
before any request a plain form could not make, which every MCP POST is
(``application/json``, ``Mcp-*`` headers). ``Cors`` answers the preflights itself, before
the app's token check (a preflight carries no credentials), and marks the app's answers to
a listed origin readable: its own refusals (401 with ``WWW-Authenticate``, 429) included.

It grants; it never refuses. A request from an origin not listed reaches the app as it came
and its answer goes back untouched: the app's Origin allow-list (the Guard's, against DNS
rebinding) is what refuses it. So every origin given here must be on that list too, or the
browser is told "you may read" and then gets 403: ``rpcline serve --cors-origin`` adds each
to the allow-list. Origins are matched as that list matches them (exact, or ``host:*`` for
any port), by the same function. ``*`` is refused: it would mean "any site", which the
DNS-rebinding check exists to stop; list the sites.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from rpcline._core.http_schema import strings
from rpcline._core.http_shared import METHOD_HEADER, NAME_HEADER, VERSION_HEADER
from rpcline._gateway.asgi import ASGIApp, Message, Receive, Scope, Send, respond
from rpcline._gateway.guard import _first, _listed

__all__ = ("Cors", "checked_origin")

METHODS: Final = b"GET, POST, DELETE, OPTIONS"  # both eras' methods, and the preflight's
# What an MCP client sends (lowercase, as ASGI gives them): the CORS-safelisted four, the
# bearer token, the 2025 session and stream resumption, the 2026-07-28 routing headers
# (and ``Mcp-Param-*`` below), W3C trace context (spliced toward the child by the gateway).
REQUEST_HEADERS: Final = frozenset({
    "accept", "accept-language", "content-language", "content-type", "authorization",
    "mcp-session-id", "last-event-id", VERSION_HEADER, METHOD_HEADER, NAME_HEADER,
    "traceparent", "tracestate"})  # fmt: skip
PARAM_HEADER_PREFIX: Final = "mcp-param-"  # a tool's x-mcp-header arguments: any name
# What a page must read beyond the safelisted response headers: the session to send back,
# the version served, why a token was refused, when to retry after a 429 or 503.
EXPOSE: Final = b"Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate, Retry-After"
MAX_AGE: Final = b"600"  # seconds a browser may reuse a preflight (Starlette's default)
# A preflight's answer depends on these, so a cache must key it on them (as Starlette says).
PREFLIGHT_VARY: Final = (b"Origin, Access-Control-Request-Method, Access-Control-Request-Headers, "
                         b"Access-Control-Request-Private-Network")
_ORIGIN: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/?#\s*]+(:\*)?")
_OURS: Final = frozenset({b"access-control-allow-origin", b"access-control-expose-headers"})


class Cors:
    """``app`` for browser pages at ``origins`` too: preflights answered, answers readable.

    ``origins``: ``scheme://host[:port]``, or ``scheme://host:*`` for any port (the
    allow-list's pattern); ``ValueError`` for ``*``, ``null`` or a path (an ``Origin`` header
    never has one, so it would never match). Every other request, and every non-HTTP scope,
    reaches ``app`` as it came. No ``Access-Control-Allow-Credentials``: MCP clients send
    their token in ``Authorization``, not in cookies.
    """

    def __init__(self, app: ASGIApp, origins: Iterable[str]) -> None:
        self.app = app
        self.origins = tuple(checked_origin(origin) for origin in strings("origins", origins))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = scope["headers"]
        origin = _first(headers, b"origin")
        if not origin:  # not a browser's cross-origin request: nothing to grant
            return await self.app(scope, receive, send)
        allowed = _listed(origin, self.origins)
        requested = _first(headers, b"access-control-request-method")
        if scope["method"] == "OPTIONS" and requested is not None:
            return await self._preflight(send, origin if allowed else None, requested, headers)
        if not allowed:
            return await self.app(scope, receive, send)
        grant = (b"access-control-allow-origin", origin.encode("latin-1"))

        async def send_granted(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": _granted(message.get("headers", ()), grant)}
            await send(message)

        return await self.app(scope, receive, send_granted)

    async def _preflight(self, send: Send, origin: str | None, method: str,
                         headers: Iterable[tuple[bytes, bytes]]) -> None:
        """204 with the grant, or 400 naming what is not allowed, with no grant (as
        Starlette's: the browser refuses either way; the text tells a developer why)."""
        asked = _first(headers, b"access-control-request-headers") or ""
        names = [name.strip().lower() for name in asked.split(",") if name.strip()]
        refused = [what for what, ok in (
            ("origin", origin is not None),
            ("method", method in ("GET", "POST", "DELETE", "OPTIONS")),
            ("headers", all(name in REQUEST_HEADERS or name.startswith(PARAM_HEADER_PREFIX)
                            for name in names))) if not ok]  # fmt: skip
        if refused:
            return await respond(send, 400, b"Disallowed CORS " + ", ".join(refused).encode(),
                                 [(b"content-type", b"text/plain; charset=utf-8")])
        assert origin is not None
        granted = [(b"access-control-allow-origin", origin.encode("latin-1")),
                   (b"vary", PREFLIGHT_VARY),
                   (b"access-control-allow-methods", METHODS),
                   (b"access-control-max-age", MAX_AGE)]
        if names:  # each one checked above: echoed as the browser asked, lowercased
            granted.append((b"access-control-allow-headers", ", ".join(names).encode("latin-1")))
        if _first(headers, b"access-control-request-private-network") is not None:
            # A listed public site calling a gateway on localhost (Chrome's Private Network
            # Access): the operator listed it, so it may.
            granted.append((b"access-control-allow-private-network", b"true"))
        # Not ``respond``: a 204 carries no Content-Length (RFC 9110).
        await send({"type": "http.response.start", "status": 204, "headers": granted})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def checked_origin(origin: str) -> str:
    """``origin`` when it can match an ``Origin`` header, else ``ValueError`` saying why."""
    if not _ORIGIN.fullmatch(origin):
        raise ValueError(
            f"a CORS origin is scheme://host[:port], or scheme://host:* for any port, not "
            f"{origin!r}" + (" (list the sites: '*' would let any page through the "
                             "DNS-rebinding check)" if origin.strip() == "*" else ""))
    return origin


def _granted(headers: Iterable[tuple[bytes, bytes]],
             grant: tuple[bytes, bytes]) -> list[tuple[bytes, bytes]]:
    """The app's headers with ours in place of any it set, and ``Origin`` added to ``Vary``
    (the answer depends on it: a cache must not hand it to another origin)."""
    out = []
    vary: list[bytes] = []
    for key, value in headers:
        key = key.lower()
        if key == b"vary":
            vary.append(value)
        elif key not in _OURS:
            out.append((key, value))
    if not any(part.strip().lower() in (b"origin", b"*")
               for value in vary for part in value.split(b",")):
        vary.append(b"Origin")
    out += [grant, (b"access-control-expose-headers", EXPOSE), (b"vary", b", ".join(vary))]
    return out
