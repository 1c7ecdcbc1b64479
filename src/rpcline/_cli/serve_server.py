"""uvicorn's server for ``rpcline serve``, with the bridge's stop where uvicorn's begins.

On SIGINT or SIGTERM uvicorn stops accepting, asks each connection to close once its
response is sent, waits for every connection to close (without a bound, unless
``timeout_graceful_shutdown``), and only then runs the lifespan shutdown, where an ASGI app
learns that it stops. A GET stream (the SDK's clients keep one for a whole session) or a
call on a hung child never ends by itself, so that shutdown never came. ``Server`` begins
``StdioBridge.aclose`` as soon as uvicorn's shutdown begins: the streams end, the calls in
flight are answered, or failed after the bridge's grace, the connections then close, and
the lifespan shutdown finds the bridge stopped. A second SIGINT or SIGTERM stops at once
(uvicorn forces only a second SIGINT): the children are killed, nothing is waited for.
SIGHUP, where a config was given, reads it again (``serve_apps.Apps.reload``). ``on_stop``
runs once the bridges stopped (``--otel``: the spans and metrics not exported yet go).

Imported only once uvicorn is found (``rpcline[serve]``).
"""

from __future__ import annotations

import asyncio
import signal
import socket
from collections.abc import Callable
from types import FrameType

import uvicorn

from rpcline.bridge import Router


class Server(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, bridge: Router,
                 reload: Callable[[], None] | None = None,
                 on_stop: Callable[[], None] | None = None) -> None:
        super().__init__(config)
        self.on_stop = on_stop
        self.bridge = bridge
        self.reload = reload
        self._loop: asyncio.AbstractEventLoop | None = None
        self.stopped_by: int | None = None  # the first signal that stopped it

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        if self.reload is not None and hasattr(signal, "SIGHUP"):
            self._loop.add_signal_handler(signal.SIGHUP, self.reload)
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # A signal handler: it runs between two bytecodes of whatever the loop runs, so
        # it only sets flags and hands the rest to the loop.
        if self.should_exit and self._loop is not None:  # the second signal
            self.force_exit = True
            self._loop.call_soon_threadsafe(self.bridge.abort)
        if self.stopped_by is None:
            self.stopped_by = sig
        super().handle_exit(sig, frame)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        for server in getattr(self, "servers", ()):  # no new connection while it stops
            server.close()
        closing = asyncio.ensure_future(self.bridge.aclose())
        try:
            await super().shutdown(sockets)
        finally:
            await closing
            if self.on_stop is not None:
                self.on_stop()
