"""Who an access token says the caller is, and why a token is refused.

``Identity`` is what the resource server puts in the ASGI scope under ``IDENTITY`` once a
token passed every check (as Starlette's AuthenticationMiddleware leaves ``scope["user"]``);
the token itself is not kept, so nothing downstream can pass it on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ("IDENTITY", "Identity", "Refused", "Unavailable")

IDENTITY: Final = "rpcline.identity"


@dataclass(frozen=True)
class Identity:
    """The caller an access token names: ``subject`` (``sub``, the resource owner, unique
    per issuer), ``client_id`` (``client_id``, else ``azp``), the ``scopes`` granted, the
    ``issuer`` that vouched for it and when the token expires (``exp``, epoch seconds)."""

    subject: str | None
    client_id: str | None
    scopes: frozenset[str]
    issuer: str
    expires_at: float | None = None


class Refused(Exception):
    """A token not accepted: 401 ``invalid_token`` (or 403 ``insufficient_scope``).
    ``description`` is a fixed text of ours, never the token or a piece of it."""

    def __init__(self, description: str, error: str = "invalid_token", status: int = 401) -> None:
        super().__init__(description)
        self.description = description
        self.error = error
        self.status = status


class Unavailable(Exception):
    """The authorization server (its metadata, its keys, its introspection) cannot be
    reached or answered nonsense: no token can be judged, so the answer is 503."""

    def __init__(self, description: str, retry_after: float) -> None:
        super().__init__(description)
        self.description = description
        self.retry_after = retry_after
