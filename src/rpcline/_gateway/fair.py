"""Fair limits of ``rpcline.bridge``: who a caller is, and how many calls each may hold.

A shared child serves every client, so one client must not take it all: past
``max_in_flight_per_client`` calls in flight, a client's next call is answered 429 (its
others, and everyone else's, go on). A client is a 2025-era session; for a 2026-07-28
request, the caller an access token named (``rpcline.auth``'s identity), the bearer token it
carries, or else its address. Past ``max_waiting`` calls
waiting for a child (to start, or to take input), one more is answered 503: the bound that
keeps a stuck server from gathering every request that comes.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import Final

from rpcline._core.shared import RequestId
from rpcline._gateway.asgi import Scope
from rpcline._gateway.auth_identity import IDENTITY
from rpcline._gateway.relay_lines import failure

# Whole seconds, as HTTP wants them: a call in flight usually ends within one.
RETRY_AFTER: Final = (b"retry-after", b"1")
# Tokens are held only as a digest keyed per process: what memory or a core dump holds
# cannot be checked against a guessed token, nor matched across processes.
_KEY: Final = os.urandom(32)


@dataclass(frozen=True, slots=True)
class Client:
    """Whose call it is: ``key`` to count by, ``shown`` to name it in the refusal (the
    client's own address at most, never a token)."""

    key: bytes
    shown: str


def session(session_id: str) -> Client:
    return Client(b"s" + session_id.encode(), "this session")


def stateless(scope: Scope, by_token: bool) -> Client:
    """A 2026-07-28 request's client: the caller an access token named (the resource
    server's identity: its issuer, subject and client), else its ``Authorization`` value when
    ``by_token`` and present (a digest of it), else its peer's host (any port: one client,
    many sockets)."""
    identity = scope.get(IDENTITY)
    if identity is not None:
        named = "\0".join((identity.issuer, identity.subject or "", identity.client_id or ""))
        return Client(b"i" + hashlib.blake2b(named.encode(), key=_KEY, digest_size=16).digest(),
                      "this caller")
    if by_token:
        value = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        if value:
            return Client(b"t" + hashlib.blake2b(value, key=_KEY, digest_size=16).digest(),
                          "this bearer token")
    peer = scope.get("client")
    host = str(peer[0]) if peer else "-"
    return Client(b"a" + host.encode(), f"this address ({host[:64]})")


class InFlight:
    """Calls in flight per client, at most ``bound`` each (None: no bound).

    Counted exactly: ``admit`` when a call is taken, ``release`` in a ``finally`` when it
    ends, however it ends. A client with none in flight has no entry, so the table holds
    only the clients with calls, whatever the number that came and went.
    """

    __slots__ = ("bound", "counts")

    def __init__(self, bound: int | None) -> None:
        self.bound = check_bound("max_in_flight_per_client", bound, 1)
        self.counts: dict[bytes, int] = {}

    def admit(self, key: bytes) -> bool:
        """Count one more call for ``key``; False (nothing counted) past the bound."""
        n = self.counts.get(key, 0)
        if self.bound is not None and n >= self.bound:
            return False
        self.counts[key] = n + 1
        return True

    def release(self, key: bytes) -> None:
        n = self.counts[key] - 1
        if n:
            self.counts[key] = n
        else:
            del self.counts[key]


def too_many(id: RequestId, client: Client, bound: int) -> bytes:
    """The JSON-RPC answer (HTTP 429) to a call past its client's bound."""
    return failure(id, "Too many requests in flight", f"{client.shown} has {bound} calls in "
                   f"flight (--max-in-flight-per-client {bound}); retry when one ends")


def too_many_waiting(id: RequestId, bound: int) -> bytes:
    """The JSON-RPC answer (HTTP 503) to a call past the bound on calls waiting for a child."""
    return failure(id, "Too many requests waiting for the server", f"{bound} calls are "
                   "waiting for a server to start or to take input (--max-waiting "
                   f"{bound}); retry later")


class Full(Exception):
    """No room to wait for a child (``max_waiting``): the call is answered 503, unsent."""


def check_waiting(waiting: int, bound: int | None) -> None:
    """Raise ``Full`` when ``waiting`` calls already fill ``bound`` (None: no bound; 0: a
    call that would wait is refused at once, for a balancer to try another instance)."""
    if bound is not None and waiting >= bound:
        raise Full


def check_bound(name: str, bound: int | None, least: int) -> int | None:
    if bound is not None and (type(bound) is not int or bound < least):
        raise ValueError(f"{name} must be an int >= {least} or None, not {bound!r}")
    return bound
