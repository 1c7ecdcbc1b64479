"""The issuer's signing keys (its JWKS), fetched once, kept, and fetched again only when
asked for a key it lacks, when they grow old, or after a failure: never more often than an
interval, so that a flood of tokens naming unknown keys is not a flood of fetches.

Only asymmetric signing keys are kept (RSA, EC, OKP; never ``oct``: a key published for
anyone to read can sign nothing a resource server may trust).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any, Final

import httpx
import jwt

from rpcline._gateway.auth_fetch import discover, get_json
from rpcline._gateway.auth_identity import Refused, Unavailable

__all__ = ("ASYMMETRIC", "Key", "Keys", "allowed_algorithms")

ASYMMETRIC: Final = frozenset({"RSA", "EC", "OKP"})
_FAMILY: Final = {"RSA": ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"),
                  "OKP": ("EdDSA", "Ed25519")}  # fmt: skip
_CURVE: Final = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512", "secp256k1": "ES256K"}
Key = tuple[jwt.PyJWK, tuple[str, ...]]  # a key and the algorithms it may verify


class Keys:
    """``issuer``'s keys by ``kid``: found through its metadata's ``jwks_uri``.

    ``refetch_interval``: the least time between two fetches of a set that was fetched
    well (an unknown ``kid`` within it is refused 401); ``retry_after``: the least time after
    a failed fetch (the requests meanwhile are 503 with that ``Retry-After``); ``max_age``:
    keys older than this are fetched again before use (a key the issuer withdrew stops
    being accepted), and refused (503) when that fails."""

    def __init__(self, issuer: str, client: httpx.AsyncClient, *, refetch_interval: float = 60.0,
                 retry_after: float = 5.0, max_age: float = 3600.0,
                 log: Callable[[str], None] | None = None) -> None:
        self.issuer = issuer
        self.client = client
        self.refetch_interval = refetch_interval
        self.retry_after = retry_after
        self.max_age = max_age
        self.log = log
        self.fetches = 0  # JWKS documents fetched (or tried), for tests and operators
        self._keys: dict[str | None, Key] = {}
        self._jwks_uri: str | None = None
        self._fetched: float | None = None  # when the keys in hand were fetched
        self._tried: float | None = None  # when a fetch was last tried
        self._failure: Unavailable | None = None  # the last try's, while it stands
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> Key:
        """The key ``kid`` names (None: the only key), or Refused / Unavailable."""
        found = self._fresh(kid)
        if found is not None:
            return found
        async with self._lock:  # one fetch at a time; the waiters then look again
            found = self._fresh(kid)
            if found is not None:
                return found
            now = time.monotonic()
            if self._tried is not None:
                wait = (self.retry_after if self._failure else self.refetch_interval)
                left = self._tried + wait - now
                if left > 0:  # too soon to ask the issuer again
                    if self._failure is not None or not self._young(now):
                        raise Unavailable(self._failure.description if self._failure else
                                          "the issuer's keys are too old", max(left, 1.0))
                    raise Refused("the token is signed with a key the issuer does not publish")
            self._tried = now
            try:
                await self._fetch()
            except Unavailable as failure:
                self._failure = failure
                if self.log is not None:
                    self.log(f"auth: {failure.description}; 503 for {self.retry_after:g} s")
                raise
            self._failure = None
        found = self._fresh(kid)
        if found is None:
            raise Refused("the token is signed with a key the issuer does not publish")
        return found

    def _young(self, now: float) -> bool:
        return self._fetched is not None and now - self._fetched < self.max_age

    def _fresh(self, kid: str | None) -> Key | None:
        if not self._young(time.monotonic()):
            return None
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))
        return self._keys.get(kid)

    async def _fetch(self) -> None:
        self.fetches += 1
        if self._jwks_uri is None:
            metadata = await discover(self.client, self.issuer, self.retry_after)
            uri = metadata.get("jwks_uri")
            if not isinstance(uri, str):
                raise Unavailable(f"the metadata of {self.issuer} has no jwks_uri",
                                  self.retry_after)
            self._jwks_uri = uri
        document = await get_json(self.client, self._jwks_uri, self.retry_after)
        keys = _usable(document.get("keys"))
        if not keys:
            raise Unavailable(f"{self._jwks_uri} publishes no usable signing key",
                              self.retry_after)
        self._keys = keys
        self._fetched = time.monotonic()


def _usable(entries: Any) -> dict[str | None, Key]:
    """The asymmetric signature keys of a JWKS ``keys`` list, by ``kid``."""
    keys: dict[str | None, Key] = {}
    if not isinstance(entries, list):
        return keys
    for entry in entries:
        if (not isinstance(entry, dict) or entry.get("kty") not in ASYMMETRIC
                or entry.get("use", "sig") != "sig"):
            continue
        try:
            key = jwt.PyJWK(entry)
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
            continue
        algorithms = allowed_algorithms(entry)
        if algorithms:
            kid = entry.get("kid")
            keys[kid if isinstance(kid, str) else None] = (key, algorithms)
    return keys


def allowed_algorithms(entry: dict[str, Any]) -> tuple[str, ...]:
    """The algorithms a JWK may verify: its ``alg`` when it names one of its type's, else
    its type's family (RSA: RS* and PS*; EC: its curve's ECDSA; OKP: EdDSA). Never
    ``none``, never an HMAC."""
    kty = entry.get("kty")
    if kty == "EC":
        crv = entry.get("crv")
        family: tuple[str, ...] = (_CURVE[crv],) if isinstance(crv, str) and crv in _CURVE else ()
    else:
        family = _FAMILY.get(str(kty), ())
    named = entry.get("alg")
    if isinstance(named, str):
        return (named,) if named in family else ()
    return family
