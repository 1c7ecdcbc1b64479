"""Instructions a call through the bridge, by callgrind: deterministic where timing is noise.

    python benchmarks/serve_instructions.py [--calls 800]
        [--variants open named auth legacy session otel]

Each variant runs in a process of its own under ``valgrind --tool=callgrind``, in process
(no HTTP server: the ASGI app is called directly, 16 calls at a time, ``tools/call``
requests to benchmarks/fast_child.py, whose own instructions are not counted: another
process, which valgrind does not follow), once with ``--calls`` calls and once with twice as
many; the difference divided by ``--calls`` is the cost of one call, start-up, sessions'
opening and shutdown cancelled out. Variants:

- ``open``: a ``StdioBridge`` at ``/mcp``, 2026-07-28 requests.
- ``named``: the same bridge as one of ten behind a ``Router`` (``/servers/s5/mcp``).
- ``auth``: the bridge behind ``rpcline.auth.ResourceServer`` with the caller's token
  already accepted (a cached JWT: what every call after a client's first costs).
- ``legacy``: the bridge in shared mode, 16 2025-era sessions, a call on each at a time.
- ``session``: the same 16 sessions with ``isolation="session"``: a child each.
- ``otel``: the bridge of ``open`` with ``rpcline serve --otel``'s hooks (the OpenTelemetry
  SDK's providers as ``OTEL_TRACES_EXPORTER=none OTEL_METRICS_EXPORTER=none`` set them up:
  every span recorded, none exported; the SDK's own share: ``benchmarks/otel_hooks.py``).

Printed: instructions a call and the ratio to its base, ``open`` for the first three and
``otel``, ``legacy`` for ``session`` (targets: named <= 1.05x, issue 38; auth <= 1.3x, issue 40;
session <= 1.1x, issue 39; otel <= 1.5x, issue 41, of the whole gateway call, which HTTP
makes larger than ``open`` here). Linux with valgrind only.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

HERE = Path(__file__).resolve().parent
CHILD = [sys.executable, str(HERE / "fast_child.py")]
VERSION = "2026-07-28"
TOKEN = "eyJ" + "a" * 650  # a JWT's length; accepted in advance, never parsed
RESOURCE = "http://127.0.0.1:8000"
HEADERS = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
           (b"accept", b"application/json, text/event-stream"),
           (b"mcp-protocol-version", VERSION.encode()), (b"mcp-method", b"tools/call"),
           (b"mcp-name", b"echo")]  # fmt: skip


LEGACY = "2025-11-25"
# What each is compared with.
BASE = {"named": "open", "auth": "open", "session": "legacy", "otel": "open"}
LEGACY_HEADERS = [*HEADERS[:3], (b"mcp-protocol-version", LEGACY.encode())]


def body(id: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "x"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {}}}})


def legacy_body(id: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                         "params": {"name": "echo", "arguments": {"text": "x"}}})


async def open_session(app: Any) -> list[tuple[bytes, bytes]]:
    """A 2025-era session's headers: ``initialize`` answered, ``initialized`` sent."""
    opened = await call(app, "/mcp", 0, LEGACY_HEADERS, orjson.dumps({
        "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}))
    session = dict(opened["headers"])[b"mcp-session-id"]
    headers = [*LEGACY_HEADERS, (b"mcp-session-id", session)]
    await call(app, "/mcp", 0, headers, b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
               status=202)
    return headers


async def call(app: Any, path: str, id: int, headers: list[tuple[bytes, bytes]],
               content: bytes | None = None, status: int = 200) -> dict[str, Any]:
    """One POST through the app; its response's start."""
    scope = {"type": "http", "method": "POST", "path": path, "root_path": "",
             "headers": list(headers), "client": ("127.0.0.1", 1), "query_string": b""}
    messages = [{"type": "http.request", "body": body(id) if content is None else content,
                 "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.sleep(3600)  # no disconnect: the answer comes first
        raise AssertionError

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    assert sent[0]["status"] == status, sent
    return sent[0]


async def sessions(variant: str, calls: int) -> None:
    """``legacy`` and ``session``: 16 sessions, each with one call at a time."""
    from rpcline.bridge import StdioBridge

    isolation = "session" if variant == "session" else "shared"
    bridge = StdioBridge(CHILD, log=lambda line: None, isolation=isolation)
    each = [await open_session(bridge) for _ in range(16)]
    for id in range(1, 4):  # every child started, the first calls' one-time work done
        await asyncio.gather(*(call(bridge, "/mcp", id, h, legacy_body(id)) for h in each))
    for batch in range(calls // 16):
        id = 4 + batch
        await asyncio.gather(*(call(bridge, "/mcp", id, h, legacy_body(id)) for h in each))
    await bridge.aclose()


async def serve(variant: str, calls: int) -> None:
    from rpcline.bridge import Router, StdioBridge

    if variant in ("legacy", "session"):
        return await sessions(variant, calls)

    log = lambda line: None  # noqa: E731  # the bridges' lines are not what is measured
    bridge = StdioBridge(CHILD, log=log, hooks=hooks(variant))
    closing: list[Any] = [bridge]
    app: Any = bridge
    path, headers = "/mcp", HEADERS
    if variant == "named":
        others = {f"s{n}": StdioBridge(CHILD, name=f"s{n}", log=log) for n in range(1, 11)
                  if n != 5}
        app = Router({**others, "s5": bridge}, warm=False)
        path, closing = "/servers/s5/mcp", [app]
    elif variant == "auth":
        from rpcline._gateway.auth_cache import digest
        from rpcline.auth import Identity, ResourceServer

        app = ResourceServer(bridge, "http://127.0.0.1:9", RESOURCE, scopes=["mcp"])
        authorization = f"Bearer {TOKEN}".encode()
        app.accepted.put(digest(authorization), RESOURCE + path, Identity(
            subject="bench", client_id="bench", scopes=frozenset({"mcp"}),
            issuer="http://127.0.0.1:9", expires_at=time.time() + 3600), 30)
        headers = [*HEADERS, (b"authorization", authorization)]
    for id in range(50):  # the child started, the first calls' one-time work done
        await call(app, path, id, headers)
    for batch in range(calls // 16):
        await asyncio.gather(*(call(app, path, batch * 16 + n, headers) for n in range(16)))
    for each in closing:
        await each.aclose()


def hooks(variant: str) -> Any:
    """``rpcline serve --otel``'s hooks for ``otel``, else None."""
    if variant != "otel":
        return None
    import os

    os.environ.update(OTEL_TRACES_EXPORTER="none", OTEL_METRICS_EXPORTER="none")
    from rpcline._cli.serve_otel import setup

    return setup(True, False).hooks


def instructions(variant: str, calls: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/out",
             sys.executable, __file__, "--run", variant, str(calls)],
            capture_output=True, text=True, timeout=3600)  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert done.returncode == 0 and found, done.stderr[-2000:]
    return int(found.group(1))


def main() -> int:
    if sys.argv[1:2] == ["--run"]:
        asyncio.run(serve(sys.argv[2], int(sys.argv[3])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=800)
    variants = ["open", "named", "auth", "legacy", "session", "otel"]
    parser.add_argument("--variants", nargs="+", default=variants[:5], choices=variants)
    args = parser.parse_args()
    per_call = {}
    for variant in args.variants:
        per_call[variant] = (instructions(variant, 2 * args.calls)
                             - instructions(variant, args.calls)) / args.calls
    print(f"instructions a call, in process, tools/call (callgrind, {args.calls} calls "
          "differenced)")
    for variant, count in per_call.items():
        base = per_call.get(BASE.get(variant, variant))
        ratio = f"{count / base:.3f}x of {BASE.get(variant, variant)}" if base else "-"
        print(f"{variant:8} {count:10.0f}  {ratio}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
