"""What a ``StdioBridge`` is told beyond its command: one frozen object, checked once.

``rpcline serve`` builds one ``Options`` from its flags and gives each server a copy with
its own differences (``dataclasses.replace``: a config entry's ``env``, ``cwd``, name,
isolation), as httpx's ``Limits`` and uvicorn's ``Config`` hold theirs; a user's own app
does the same, or passes the same names as keywords to ``StdioBridge``. A value that cannot
be served is a ``ValueError`` here, at construction, never on the first request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from rpcline._gateway import fair
from rpcline._gateway.asgi import MAX_BODY_BYTES
from rpcline._gateway.child_stderr import check as check_stderr
from rpcline._gateway.observe import Hooks
from rpcline._gateway.own_children import check_mode
from rpcline._gateway.relay_types import (
    DEFAULT_KILL_AFTER,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PENDING,
    DEFAULT_MAX_PENDING_BYTES,
)

# The SDK's DNS-rebinding defaults for a server bound to localhost.
LOCALHOST_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOCALHOST_ORIGINS: Final = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
# Seconds the calls in flight have to be answered once the bridge stops (a tool call of a
# few seconds gets through; a stuck one does not hold the stop for long: with the children's
# own stop, well within the 10 s a container manager gives before SIGKILL).
DEFAULT_SHUTDOWN_GRACE: Final = 5.0


@dataclass(frozen=True, kw_only=True)
class Options:
    """A bridge's options.

    ``children`` copies of the command per era share the calls (the fewest in flight
    first); ``request_timeout`` seconds (None: none) bound each call, from its arrival to its
    answer; the line, pending and body bounds are the proxy's and the Guard's, per child.
    ``env`` names the environment variables passed to children (beyond ``PATH``, ``HOME``
    and the locale), or maps names to the values they get; ``pass_environment`` passes
    this process's whole environment instead (values in ``env`` still win). ``name``: the
    server's name, at the start of the bridge's log lines and in its children's stderr
    prefix (a router of several bridges names each). ``token``: a bearer token every
    request must carry. ``session_key``: bridges that share it take each other's 2025-era
    sessions (for scale-out, docs/serve.md); past ``max_sessions`` open, the least
    recently used idle one ends.
    ``max_in_flight_per_client``: calls one client (a session; a bearer token; an address)
    may have in flight, 429 past it; ``max_waiting``: calls that may wait for a child to
    start or take input, 503 past it (None: no bound; docs/serve.md, "Fair limits").
    ``allowed_hosts`` / ``allowed_origins``: the DNS-rebinding allow-lists, localhost by
    default (``None`` turns them off). ``shutdown_grace``: seconds ``aclose`` gives the calls
    in flight to be answered before it fails them. ``child_stderr``: where the children's
    stderr goes: ``prefix`` (the bridge's stderr, each line ``[NAME ERA-N PID] ...``),
    ``inherit``, ``discard`` or ``file:PATH``. ``log`` takes the bridge's own lines,
    ``access_log`` one line per HTTP request (None: none). ``hooks``: callables told of
    each forwarded call (``rpcline.otel``; None: nothing is done for them).
    ``isolation``: ``shared`` (one pool of children for every client), ``session`` (a
    child for each 2025-era session, and one for each authenticated caller's 2026-07-28
    requests) or ``identity`` (a child for each authenticated caller); with children of
    one's own, ``max_children`` bounds them (503 past it), a child sent nothing for
    ``session_idle_timeout`` seconds ends with its sessions, and ``prestart`` warm
    children wait for new sessions (docs/serve.md, "Isolation").
    """

    children: int = 1
    request_timeout: float | None = None
    env: Iterable[str] | Mapping[str, str] = ()
    pass_environment: bool = False
    cwd: str | None = None
    name: str | None = None
    path: str = "/mcp"
    token: str | None = None
    session_key: str | None = None
    max_sessions: int = 10_000
    max_in_flight_per_client: int | None = None
    max_waiting: int | None = None
    allowed_hosts: Iterable[str] | None = LOCALHOST_HOSTS
    allowed_origins: Iterable[str] | None = LOCALHOST_ORIGINS
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_pending: int = DEFAULT_MAX_PENDING
    max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES
    max_body_bytes: int = MAX_BODY_BYTES
    kill_after: float = DEFAULT_KILL_AFTER
    shutdown_grace: float = DEFAULT_SHUTDOWN_GRACE
    record: str | None = None
    log: Callable[[str], None] | None = None
    access_log: Callable[[str], None] | None = None
    child_stderr: str = "prefix"
    hooks: Hooks | None = None
    isolation: str = "shared"
    max_children: int | None = None
    session_idle_timeout: float | None = 600.0
    prestart: int = 0

    def __post_init__(self) -> None:
        if type(self.children) is not int or self.children < 1:
            raise ValueError(f"children must be an int >= 1, not {self.children!r}")
        if not self.shutdown_grace >= 0:
            raise ValueError(f"shutdown_grace must be >= 0 seconds, not "
                             f"{self.shutdown_grace!r}")
        check_mode(self.isolation)
        if self.isolation != "shared" and self.children != 1:
            raise ValueError("children is for isolation='shared': a child of one's own is one")
        fair.check_bound("max_children", self.max_children, 1)
        fair.check_bound("prestart", self.prestart, 0)
        fair.check_bound("max_waiting", self.max_waiting, 0)
        fair.check_bound("max_in_flight_per_client", self.max_in_flight_per_client, 1)
        if self.session_idle_timeout is not None and not self.session_idle_timeout > 0:
            raise ValueError("session_idle_timeout must be > 0 seconds or None, not "
                             f"{self.session_idle_timeout!r}")
        check_stderr(self.child_stderr)
