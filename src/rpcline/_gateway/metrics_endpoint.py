"""``GET /metrics`` in front of an ASGI app: a metrics app (Prometheus's), behind the token.

The token (``rpcline serve --token-env``) guards it as it guards ``/healthz``, unless
``public`` (``--health-public``); every other path goes to the app.
"""

from __future__ import annotations

from typing import Any, Final

from rpcline._gateway.asgi import Receive, Scope, Send, respond
from rpcline._gateway.bridge_http import bearer_matches

PATH: Final = "/metrics"


class MetricsEndpoint:
    """``metrics`` at ``/metrics``, ``app`` elsewhere."""

    def __init__(self, app: Any, metrics: Any, *, token: str | None = None,
                 public: bool = False) -> None:
        self.app = app
        self.metrics = metrics
        self._token = None if token is None or public else token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != PATH:
            return await self.app(scope, receive, send)
        if scope["method"] not in ("GET", "HEAD"):
            return await respond(send, 405, b"", [(b"allow", b"GET, HEAD")])
        if self._token is not None and not bearer_matches(scope["headers"], self._token):
            return await respond(send, 401, b"Unauthorized", [
                (b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")])
        await self.metrics(scope, receive, send)
