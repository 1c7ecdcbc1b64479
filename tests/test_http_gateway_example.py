"""examples/http_gateway.py answers as a gateway when its upstream fails: 502 when the
connection is refused, 504 when upstream does not answer in time (issue 31 item 6)."""

from __future__ import annotations

import importlib.util
import socket
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

anyio = pytest.importorskip("anyio")
pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

EXAMPLE = Path(__file__).parents[1] / "examples" / "http_gateway.py"
pytestmark = pytest.mark.skipif(not EXAMPLE.exists(), reason="needs a clone's examples")


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("http_gateway", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def answer(upstream: str, timeout: float = 30) -> tuple[int, dict[bytes, bytes], bytes]:
    """One POST through ``Forward`` in process: the status, headers and body sent back."""
    sent: list[dict[str, Any]] = []
    incoming = [{"type": "http.request", "body": b"{}", "more_body": False}]

    async def receive() -> dict[str, Any]:
        if incoming:
            return incoming.pop()
        await anyio.sleep_forever()

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    async def run() -> None:
        forward = example().Forward(upstream, timeout)
        scope = {"type": "http", "method": "POST", "query_string": b"",
                 "headers": [(b"content-length", b"2"), (b"content-type", b"application/json")]}
        with anyio.fail_after(30):
            await forward(scope, receive, send)
        await forward.client.aclose()

    anyio.run(run)
    start, *bodies = sent
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in bodies)


def test_connection_refused_is_502_bad_gateway():
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    status, headers, body = answer(f"http://127.0.0.1:{port}/mcp")
    assert status == 502 and body.startswith(b"Bad Gateway")
    assert headers[b"content-type"].startswith(b"text/plain")


def test_an_upstream_that_never_answers_is_504_gateway_timeout():
    with socket.socket() as silent:  # connections complete in its backlog, never answered
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        status, _, body = answer(f"http://127.0.0.1:{silent.getsockname()[1]}/mcp", timeout=0.5)
    assert status == 504 and body.startswith(b"Gateway Timeout")


def test_the_docstring_says_how_to_install_from_a_clone():
    text = EXAMPLE.read_text()
    assert "pip install '.[interop]'" in text
