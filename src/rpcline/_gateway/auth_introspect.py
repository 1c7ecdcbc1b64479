"""An opaque (or any) access token judged by the authorization server: RFC 7662
introspection, the gateway authenticating as a confidential client (HTTP Basic).

An ``active`` answer is accepted only if its ``iss`` (when given) is the issuer, its ``aud``
holds this resource (required: an answer that names no audience may be another server's
token), and ``exp`` is not past. The resource server keeps accepted answers
(``auth_cache``).
"""

from __future__ import annotations

import time

import httpx

from rpcline._gateway.auth_fetch import get_json
from rpcline._gateway.auth_identity import Identity, Refused
from rpcline._gateway.auth_jwt import DEFAULT_SKEW, identity_of

__all__ = ("Introspection",)


class Introspection:
    """Tokens judged by ``url`` for ``issuer``, with ``client_id`` and ``secret``."""

    def __init__(self, url: str, issuer: str, client_id: str, secret: str,
                 client: httpx.AsyncClient, *, retry_after: float = 5.0,
                 skew: float = DEFAULT_SKEW) -> None:
        self.url = url
        self.issuer = issuer
        self._credentials = (client_id, secret)
        self.client = client
        self.retry_after = retry_after
        self.skew = skew
        self.calls = 0  # introspection requests made, for tests and operators

    async def validate(self, token: str, audience: str) -> Identity:
        """``token``'s Identity for ``audience``, or Refused / Unavailable."""
        self.calls += 1
        answer = await get_json(self.client, self.url, self.retry_after,
                                data={"token": token, "token_type_hint": "access_token"},
                                auth=self._credentials)
        if answer.get("active") is not True:
            raise Refused("the token is not active")
        iss = answer.get("iss")
        if iss is not None and (not isinstance(iss, str)
                                or iss.rstrip("/") != self.issuer.rstrip("/")):
            raise Refused("the token is from another issuer (iss)")
        aud = answer.get("aud")
        audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
        if audience not in audiences:
            raise Refused("the token is not for this resource (aud)")
        now = time.time()
        exp, nbf = answer.get("exp"), answer.get("nbf")
        if isinstance(exp, (int, float)) and exp + self.skew < now:
            raise Refused("the token has expired")
        if isinstance(nbf, (int, float)) and nbf - self.skew > now:
            raise Refused("the token is not valid yet")
        return identity_of(answer, self.issuer)
