"""``ResourceServer``: an ASGI app behind OAuth 2.1 bearer tokens, as the MCP specification
(2026-07-28, Authorization) makes a protected HTTP server a resource server.

- ``GET /.well-known/oauth-protected-resource`` and ``.../PATH`` for each endpoint: the
  Protected Resource Metadata of RFC 9728 (``resource``, ``authorization_servers``,
  ``scopes_supported``, ``bearer_methods_supported``), as the SDK's server writes it.
- Every other request needs ``Authorization: Bearer TOKEN``: without one, or with one that
  fails a check, 401 and the SDK's challenge, ``WWW-Authenticate: Bearer
  error="invalid_token", error_description="...", resource_metadata="..."`` (with ``scope``
  when scopes are required); a valid token lacking a required scope, 403
  ``insufficient_scope`` naming it; an authorization server that cannot be reached, 503
  with ``Retry-After`` (fail closed: never a pass).
- A token that passes reaches ``app`` as an ``Identity`` under ``scope["rpcline.identity"]``,
  and the ``Authorization`` header is removed first: nothing behind sees the token.

The token's audience is the endpoint's own URL (``resource`` + its path, per RFC 8707 and
the spec), or ``audience`` for all when given. Paths in ``public`` pass without a token
(the health endpoints with ``rpcline serve --health-public``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from typing import Final

import httpx
import orjson

from rpcline._gateway.asgi import ASGIApp, Message, Receive, Scope, Send, respond
from rpcline._gateway.auth_cache import DEFAULT_MAX_AGE, TokenCache, digest
from rpcline._gateway.auth_identity import IDENTITY, Identity, Refused, Unavailable
from rpcline._gateway.auth_introspect import Introspection
from rpcline._gateway.auth_jwt import DEFAULT_SKEW, validate
from rpcline._gateway.auth_keys import Keys

__all__ = ("MAX_AUTHORIZATION_BYTES", "WELL_KNOWN", "ResourceServer", "check")

WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"
MAX_AUTHORIZATION_BYTES: Final = 16 * 1024  # a JWT is a few KiB; past this it is refused
JSON: Final = (b"content-type", b"application/json")
# RFC 6750 section 2.1: b64token
_TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_FETCH_TIMEOUT: Final = 5.0  # seconds for one request to the authorization server


class ResourceServer:
    """``app`` for callers with a valid access token of ``issuer``.

    ``resource``: the gateway's URL as clients reach it (``scheme://host[:port]``; behind a
    proxy, the public one); an endpoint's resource identifier is ``resource`` + its path,
    unless ``audience`` names one for all. ``scopes``: each one required of every token.
    ``introspection_url`` (with ``client_id`` and ``client_secret``): judge tokens by RFC
    7662 introspection instead of as JWTs against the issuer's JWKS. ``refetch_interval``:
    the least time between two JWKS fetches; ``retry_after``: how long an unreachable
    issuer is not asked again (the ``Retry-After`` of the 503). ``cache_max_age``: the
    longest an accepted token is taken again without a new check (until its ``exp``
    otherwise; 0: every request checked). ``log``: one line per failure to reach the
    issuer (never a token)."""

    def __init__(self, app: ASGIApp, issuer: str, resource: str, *, audience: str | None = None,
                 scopes: Iterable[str] = (), introspection_url: str | None = None,
                 client_id: str | None = None, client_secret: str | None = None,
                 public: Iterable[str] = (), skew: float = DEFAULT_SKEW,
                 scopes_for: Callable[[str], Iterable[str]] | None = None,
                 refetch_interval: float = 60.0, retry_after: float = 5.0,
                 cache_max_age: float = DEFAULT_MAX_AGE,
                 log: Callable[[str], None] | None = None) -> None:
        check(issuer=issuer, resource=resource, audience=audience,
              introspection_url=introspection_url, scopes=scopes)
        self.app = app
        self.issuer = issuer
        self.resource = resource.rstrip("/")
        self.audience = audience
        self.scopes = tuple(dict.fromkeys(scopes))
        self.scopes_for = scopes_for
        self.public = frozenset(public)
        self.skew = skew
        self.log = log
        self.client = httpx.AsyncClient(timeout=_FETCH_TIMEOUT, follow_redirects=False,
                                        trust_env=False)
        self.keys = Keys(issuer, self.client, refetch_interval=refetch_interval,
                         retry_after=retry_after, log=log)
        self.accepted = TokenCache(max_age=cache_max_age)
        self.introspection: Introspection | None = None
        if introspection_url is not None:
            if not client_id or not client_secret:
                raise ValueError("introspection needs the gateway's client_id and client_secret")
            self.introspection = Introspection(introspection_url, issuer, client_id,
                                               client_secret, self.client,
                                               retry_after=retry_after, skew=skew)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            return await self.app(scope, receive, self._closing(send))
        if kind != "http":  # no WebSocket is served: none passes unchecked either
            return None
        path = scope["path"]
        if path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/"):
            return await self._metadata(scope, send, path[len(WELL_KNOWN):])
        if path in self.public:
            return await self.app(scope, receive, send)
        try:
            value, headers = _authorization(scope["headers"])
            identity = await self._judge(value, self._audience(path))
        except Refused as refused:
            return await self._refuse(send, path, refused)
        except Unavailable as down:
            body = orjson.dumps({"error": "temporarily_unavailable", "error_description":
                                 "the authorization server cannot be reached; try again"})
            retry = b"%d" % max(1, math.ceil(down.retry_after))
            return await respond(send, 503, body, [JSON, (b"retry-after", retry)])
        missing = [name for name in self._required(path) if name not in identity.scopes]
        if missing:
            return await self._refuse(send, path, Refused(
                "Required scope: " + " ".join(missing), "insufficient_scope", 403))
        await self.app({**scope, "headers": headers, IDENTITY: identity}, receive, send)

    async def _judge(self, authorization: bytes, audience: str) -> Identity:
        """The caller the ``Authorization`` value names for ``audience``: kept from its last
        acceptance (the header exactly as then: no parse again), or judged now (and kept)."""
        key = digest(authorization)
        identity = self.accepted.get(key, audience)
        if identity is not None:
            return identity
        token = _bearer(authorization)
        if self.introspection is not None:
            identity = await self.introspection.validate(token, audience)
        else:
            identity = await validate(token, self.keys, audience, self.skew)
        self.accepted.put(key, audience, identity, self.skew)
        return identity

    def _required(self, path: str) -> tuple[str, ...]:
        """The scopes a token needs for the endpoint at ``path``: every endpoint's, and what
        ``scopes_for`` adds for that one (a named server's own)."""
        if self.scopes_for is None:
            return self.scopes
        return tuple(dict.fromkeys((*self.scopes, *self.scopes_for(path))))

    def _audience(self, path: str) -> str:
        return self.audience if self.audience is not None else self.resource + path

    def metadata_url(self, path: str) -> str:
        """Where the metadata of the endpoint at ``path`` is (RFC 9728 section 3.1)."""
        return f"{self.resource}{WELL_KNOWN}{'' if path == '/' else path}"

    async def _metadata(self, scope: Scope, send: Send, path: str) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            return await respond(send, 405, b"", [(b"allow", b"GET, HEAD")])
        document: dict[str, object] = {
            "resource": self._audience(path), "authorization_servers": [self.issuer],
            "bearer_methods_supported": ["header"]}
        required = self._required(path)
        if required:
            document["scopes_supported"] = list(required)
        await respond(send, 200, orjson.dumps(document),
                      [JSON, (b"cache-control", b"public, max-age=3600")])

    async def _refuse(self, send: Send, path: str, refused: Refused) -> None:
        parts = [f'error="{refused.error}"', f'error_description="{refused.description}"',
                 f'resource_metadata="{self.metadata_url(path)}"']
        required = self._required(path)
        if required:
            parts.append(f'scope="{" ".join(required)}"')
        challenge = ("Bearer " + ", ".join(parts)).encode("latin-1")
        body = orjson.dumps({"error": refused.error, "error_description": refused.description})
        await respond(send, refused.status, body, [JSON, (b"www-authenticate", challenge)])

    def _closing(self, send: Send) -> Send:
        """``send`` for the lifespan: the HTTP client is closed before shutdown completes."""

        async def closing(message: Message) -> None:
            if message["type"] == "lifespan.shutdown.complete":
                await self.aclose()
            await send(message)

        return closing

    async def aclose(self) -> None:
        """Close the connections to the authorization server."""
        await self.client.aclose()


def check(*, scopes: Iterable[str] = (), **urls: str | None) -> None:
    """ValueError unless each of ``urls`` (None aside) is an http(s) URL without query or
    fragment and each of ``scopes`` a scope token (RFC 6749 section 3.3)."""
    for name, url in urls.items():
        if url is not None and not re.fullmatch(r"https?://[^\s/?#]+(/[^\s?#]*)?", url):
            raise ValueError(f"{name} must be an http(s) URL without query or fragment: "
                             f"{url!r}")
    for scope_name in scopes:
        if not re.fullmatch(r"[\x21\x23-\x5b\x5d-\x7e]+", scope_name):
            raise ValueError(f"not a scope token (RFC 6749 section 3.3): {scope_name!r}")


def _authorization(headers: Iterable[tuple[bytes, bytes]],
                   ) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The ``Authorization`` value of ``headers`` and the headers without it; Refused when
    there is none, more than one, or one oversized."""
    values = [value for key, value in headers if key == b"authorization"]
    if not values:
        raise Refused("Authentication required")
    if len(values) > 1:
        raise Refused("more than one Authorization header")
    value = values[0]
    if len(value) > MAX_AUTHORIZATION_BYTES:
        raise Refused("the Authorization header is too long")
    return value, [(key, value) for key, value in headers if key != b"authorization"]


def _bearer(value: bytes) -> str:
    """The bearer token of an ``Authorization`` value; Refused when malformed."""
    scheme, _, token = value.decode("latin-1").strip().partition(" ")
    if scheme.lower() != "bearer":
        raise Refused("the Authorization scheme is not Bearer")
    token = token.strip(" ")
    if not _TOKEN.fullmatch(token):
        raise Refused("the bearer token is malformed")
    return token
