"""Accepted tokens, kept so that a client's next call with the same token costs a digest and
a lookup instead of a signature check or an introspection request.

An entry is kept until the token's ``exp`` (plus the skew), at most ``max_age`` seconds, for
the audience it was accepted for only; at most ``max_entries`` of them (the least recently
used goes first). The key is a keyed BLAKE2b digest of the ``Authorization`` value (the key
drawn per process): the token itself is not kept, and a digest in memory cannot be checked
against a guessed token. It is taken of the header as it came, so a token seen before
costs one digest and one lookup, its format not parsed again.
Refusals are never kept: a token that becomes valid (``nbf``) is not held up, and a flood of
made-up tokens cannot fill the cache.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import OrderedDict
from typing import Final

from rpcline._gateway.auth_identity import Identity

__all__ = ("DEFAULT_MAX_AGE", "DEFAULT_MAX_ENTRIES", "TokenCache")

DEFAULT_MAX_ENTRIES: Final = 10_000
DEFAULT_MAX_AGE: Final = 300.0  # seconds: a withdrawn key or a revocation counts after this
_KEY: Final = os.urandom(32)


def digest(authorization: bytes) -> bytes:
    """The cache's key for an ``Authorization`` value."""
    return hashlib.blake2b(authorization, key=_KEY, digest_size=32).digest()


class TokenCache:
    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES,
                 max_age: float = DEFAULT_MAX_AGE) -> None:
        self.max_entries = max_entries
        self.max_age = max_age
        self._entries: OrderedDict[bytes, tuple[float, str, Identity]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: bytes, audience: str) -> Identity | None:
        """The identity kept under ``key`` (``digest``) for ``audience``, if still valid."""
        kept = self._entries.get(key)
        if kept is None:
            return None
        until, for_audience, identity = kept
        if time.time() >= until:
            del self._entries[key]
            return None
        if for_audience != audience:
            return None
        self._entries.move_to_end(key)
        return identity

    def put(self, key: bytes, audience: str, identity: Identity, skew: float) -> None:
        until = time.time() + self.max_age
        if identity.expires_at is not None:
            until = min(until, identity.expires_at + skew)
        self._entries[key] = (until, audience, identity)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
