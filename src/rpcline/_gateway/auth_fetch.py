"""What the resource server reads from its authorization server over HTTP: a JSON document
of bounded size, and the server's metadata found by RFC 8414 or OpenID Connect discovery.

Any failure to get a document (refused connection, timeout, a 5xx, a body that is not a
JSON object) is ``Unavailable``: the gateway answers 503 and asks again later. A 4xx other
than 404 on a discovery URL, or metadata naming another issuer, is a configuration error,
reported the same way (the operator reads it in the log) but never passed over.
"""

from __future__ import annotations

import base64
from typing import Any, Final
from urllib.parse import quote, urlsplit

import httpx
import orjson

from rpcline._gateway.auth_identity import Unavailable

__all__ = ("MAX_DOCUMENT_BYTES", "discover", "get_json", "metadata_urls")

MAX_DOCUMENT_BYTES: Final = 1024 * 1024  # a JWKS or a metadata document is a few KiB


class NotFound(Unavailable):
    """A 4xx: on a discovery URL the next one is tried; elsewhere, ``Unavailable``."""


async def get_json(client: httpx.AsyncClient, url: str, retry_after: float, *,
                   data: dict[str, str] | None = None,
                   auth: tuple[str, str] | None = None) -> dict[str, Any]:
    """The JSON object at ``url`` (a POST of the form ``data`` when given)."""
    try:
        request = client.build_request(
            "GET" if data is None else "POST", url, data=data,
            headers={"accept": "application/json"})
        if auth is not None:
            request.headers["authorization"] = basic(*auth)
        response = await client.send(request, stream=True)
        try:
            if 400 <= response.status_code < 500:
                raise NotFound(f"{url} answered {response.status_code}", retry_after)
            if response.status_code != 200:
                raise Unavailable(f"{url} answered {response.status_code}", retry_after)
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > MAX_DOCUMENT_BYTES:
                    raise Unavailable(f"{url} answered more than {MAX_DOCUMENT_BYTES} bytes",
                                      retry_after)
        finally:
            await response.aclose()
    except httpx.HTTPError as error:
        raise Unavailable(f"{url} cannot be reached ({type(error).__name__})",
                          retry_after) from None
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise Unavailable(f"{url} answered something not JSON", retry_after) from None
    if type(document) is not dict:
        raise Unavailable(f"{url} answered JSON that is not an object", retry_after)
    return document


def basic(client_id: str, secret: str) -> str:
    """HTTP Basic client authentication as RFC 6749 section 2.3.1 writes it: each part
    form-urlencoded first."""
    pair = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(pair.encode()).decode("ascii")


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order the SDK's client tries them: RFC 8414
    (the well-known name inserted before the path), then OpenID Connect's two forms."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server",
                f"{origin}/.well-known/openid-configuration"]
    return [f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration"]


async def discover(client: httpx.AsyncClient, issuer: str, retry_after: float) -> dict[str, Any]:
    """The issuer's metadata (RFC 8414 / OpenID discovery); its ``issuer`` must be ours
    (RFC 8414 section 3.3), or another server could hand us its keys."""
    tried = []
    for url in metadata_urls(issuer):
        try:
            metadata = await get_json(client, url, retry_after)
        except NotFound as error:
            tried.append(str(error))
            continue
        said = metadata.get("issuer")
        if not isinstance(said, str) or said.rstrip("/") != issuer.rstrip("/"):
            raise Unavailable(f"the metadata at {url} names issuer {str(said)[:200]!r}, not "
                              f"{issuer!r}", retry_after)
        return metadata
    raise Unavailable("no authorization server metadata found: " + "; ".join(tried),
                      retry_after)
