"""A JWT access token (RFC 9068) judged against the issuer's keys, with PyJWT.

The algorithm is the key's, never the token's word alone: a key that names its ``alg``
allows that one; otherwise its type allows its own family (RSA: RS* and PS*; EC: the one
ECDSA algorithm of its curve; OKP: EdDSA). ``none`` and the HMAC algorithms are never
allowed (an HMAC "signed" with a public key is the classic forgery). Then ``iss`` must be the
issuer, ``aud`` must hold this resource (RFC 8707: a token minted for another server is
refused), ``exp`` must not be past and ``nbf``/``iat`` not ahead, by at most ``skew`` seconds.
"""

from __future__ import annotations

from typing import Any, Final

import jwt

from rpcline._gateway.auth_identity import Identity, Refused
from rpcline._gateway.auth_keys import Keys

__all__ = ("DEFAULT_SKEW", "identity_of", "validate")

DEFAULT_SKEW: Final = 30.0  # seconds of clock difference tolerated on exp, nbf and iat
_REASONS: Final = (  # PyJWT's refusals, most specific first, told in our own words
    (jwt.ExpiredSignatureError, "the token has expired"),
    (jwt.ImmatureSignatureError, "the token is not valid yet"),
    (jwt.InvalidAudienceError, "the token is not for this resource (aud)"),
    (jwt.InvalidIssuerError, "the token is from another issuer (iss)"),
    (jwt.MissingRequiredClaimError, "the token lacks a required claim (exp, iss, aud)"),
    (jwt.InvalidAlgorithmError, "the token's algorithm is not allowed for its key"),
    (jwt.InvalidSignatureError, "the token's signature does not verify"),
)


async def validate(token: str, keys: Keys, audience: str, skew: float = DEFAULT_SKEW) -> Identity:
    """``token``'s Identity, or Refused (401) / Unavailable (503, from ``keys``)."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.InvalidTokenError:
        raise Refused("the token is not a JWT") from None
    alg, kid = header.get("alg"), header.get("kid")
    if not isinstance(alg, str) or alg == "none" or alg.startswith("HS"):
        raise Refused("the token's algorithm is not allowed")
    if kid is not None and not isinstance(kid, str):
        raise Refused("the token's key id is not a string")
    key, allowed = await keys.key(kid)
    if alg not in allowed:
        raise Refused("the token's algorithm is not allowed for its key")
    try:
        claims = jwt.decode(token, key, algorithms=list(allowed), audience=audience,
                            issuer=keys.issuer, leeway=skew,
                            options={"require": ["exp", "iss", "aud"]})
    except jwt.InvalidTokenError as error:
        raise Refused(next((text for kind, text in _REASONS if isinstance(error, kind)),
                           "the token is not valid")) from None
    return identity_of(claims, keys.issuer)


def identity_of(claims: dict[str, Any], issuer: str) -> Identity:
    """The caller as a token's claims (or an introspection answer) name it: ``scope`` (a
    space-separated string) or ``scp`` (a list, as Entra ID and Okta write it)."""
    scope = claims.get("scope", claims.get("scp", ""))
    if isinstance(scope, str):
        scopes = scope.split()
    else:
        scopes = [s for s in scope if isinstance(s, str)] if isinstance(scope, list) else []
    sub = claims.get("sub")
    client = claims.get("client_id", claims.get("azp"))
    exp = claims.get("exp")
    return Identity(subject=sub if isinstance(sub, str) else None,
                    client_id=client if isinstance(client, str) else None,
                    scopes=frozenset(scopes), issuer=issuer,
                    expires_at=float(exp) if isinstance(exp, (int, float)) else None)
