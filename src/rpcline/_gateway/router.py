"""Many servers behind one gateway: a router of bridges, each served at ``/servers/NAME/mcp``.

The router is an ASGI app that owns its bridges' lifespan (a bridge mounted elsewhere never
hears of the shutdown): on startup it may start each server at once (``warm``), on
shutdown it closes them all together. Each bridge sees a request as a Starlette ``Mount``
would hand it on: ``root_path`` extended by ``/servers/NAME``, so a bridge keeps its own
path (``/mcp``) and knows nothing of the router. ``GET /healthz`` says the process serves;
``GET /readyz`` whether every server is ready, with a small JSON body per server. ``replace``
swaps the servers for others (a reload): the ones that go drain, the ones that stay are not
touched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol

import orjson

from rpcline._gateway.asgi import Receive, Scope, Send, respond
from rpcline._gateway.bridge_http import JSON, bearer_matches

PREFIX: Final = "/servers/"
TEXT: Final = (b"content-type", b"text/plain")


class Served(Protocol):
    """What the router asks of a server: ``rpcline.bridge.StdioBridge`` is one."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...
    async def aclose(self) -> None: ...
    def abort(self) -> None: ...
    async def warm(self) -> None: ...
    def health(self) -> dict[str, Any]: ...


class Router:
    """``servers`` by name at ``/servers/NAME/...``; ``default`` (if any) at the root,
    where a single server is (``/mcp``). ``token``: the bearer token the health endpoints
    ask for too, unless ``health_public``. ``warm``: start every server on startup."""

    def __init__(self, servers: Mapping[str, Served], default: Served | None = None, *,
                 token: str | None = None, health_public: bool = False, warm: bool = True,
                 log: Callable[[str], None] | None = None) -> None:
        self.servers = dict(servers)
        self.default = default
        self._token = None if token is None or health_public else token.encode()
        self._warm = warm
        self.log = log
        self._tasks: set[asyncio.Task[None]] = set()  # warming up, or draining
        self._draining: set[Served] = set()
        self.closing = False

    # --- ASGI ---------------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            return await self._lifespan(receive, send)
        if scope["type"] != "http":
            return None
        root = scope.get("root_path", "")
        path = scope["path"]
        below = path[len(root):] if root and path.startswith(root) else path
        if below.startswith(PREFIX):
            name, slash, _ = below[len(PREFIX):].partition("/")
            server = self.servers.get(name)
            if server is None or not slash:
                return await respond(send, 404, b"Not Found: no server of that name", [TEXT])
            scope["root_path"] = f"{root}{PREFIX}{name}"  # in place, as Starlette's Mount does
            return await server(scope, receive, send)
        if below in ("/healthz", "/readyz"):
            return await self._health(below, scope, send)
        if self.default is None:
            return await respond(send, 404, b"Not Found", [TEXT])
        return await self.default(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self._warm:
                    for server in self._all():
                        self._spawn(server.warm())
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # --- health --------------------------------------------------------------------------------

    async def _health(self, which: str, scope: Scope, send: Send) -> None:
        if scope["method"] not in ("GET", "HEAD"):
            return await respond(send, 405, b"", [(b"allow", b"GET, HEAD")])
        if self._token is not None and not bearer_matches(scope["headers"], self._token):
            return await respond(send, 401, b"Unauthorized",
                                 [TEXT, (b"www-authenticate", b"Bearer")])
        if which == "/healthz":  # the process serves: nothing more is asked
            return await respond(send, 200, b'{"status":"ok"}', [JSON])
        body, ready = self.readiness()
        await respond(send, 200 if ready else 503, body, [JSON])

    def readiness(self) -> tuple[bytes, bool]:
        """``/readyz``'s body and whether every server is ready (and the router runs)."""
        servers = {name: server.health() for name, server in self.servers.items()}
        default = None if self.default is None else self.default.health()
        every = [*servers.values(), *([] if default is None else [default])]
        ready = not self.closing and all(health["ready"] for health in every)
        shown: dict[str, Any] = {"ready": ready, "servers": servers}
        if default is not None:
            shown["default"] = default  # the server at /mcp
        return orjson.dumps(shown), ready

    # --- servers come and go -------------------------------------------------------------------

    def replace(self, servers: Mapping[str, Served]) -> tuple[list[str], list[str], list[str]]:
        """Serve ``servers`` from now on: a name whose server is not the same object drains
        (its calls in flight answered, its sessions ended, its children stopped: ``aclose``),
        a new one starts (``warm``). Names added, removed and changed; RuntimeError once
        the router is closing (a server started then would outlive it)."""
        if self.closing:
            raise RuntimeError("the gateway is stopping")
        old, new = self.servers, dict(servers)
        added = [name for name in new if name not in old]
        removed = [name for name in old if name not in new]
        changed = [name for name in new if name in old and new[name] is not old[name]]
        self.servers = new
        for name in (*removed, *changed):
            self._drain(old[name])
        if self._warm:
            for name in (*added, *changed):
                self._spawn(new[name].warm())
        return added, removed, changed

    def _drain(self, server: Served) -> None:
        self._draining.add(server)

        async def drain() -> None:
            try:
                await server.aclose()
            finally:
                self._draining.discard(server)

        self._spawn(drain())

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None and self.log is not None:
            self.log(f"a server's start or drain failed: {task.exception()!r}")

    def _all(self) -> list[Served]:
        return [*self.servers.values(), *([] if self.default is None else [self.default])]

    # --- the end -------------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Close every server, the draining ones too, together (``StdioBridge.aclose``)."""
        self.closing = True
        await asyncio.gather(*(server.aclose() for server in
                               (*self._all(), *self._draining)))
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def abort(self) -> None:
        """Stop at once (an operator's second signal): every server's children killed."""
        for server in (*self._all(), *self._draining):
            server.abort()
