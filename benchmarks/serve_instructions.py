"""Instructions a call through the bridge, by callgrind: deterministic where timing is noise.

    python benchmarks/serve_instructions.py [--calls 800] [--variants open named auth]

Each variant runs in a process of its own under ``valgrind --tool=callgrind``, in process
(no HTTP server: the ASGI app is called directly, 16 calls at a time, 2026-07-28 ``tools/call``
requests to benchmarks/fast_child.py, whose own instructions are not counted: it is another
process), once with ``--calls`` calls and once with twice as many; the difference divided by
``--calls`` is the cost of one call, start-up and shutdown cancelled out. Variants:

- ``open``: a ``StdioBridge`` at ``/mcp``.
- ``named``: the same bridge as one of ten behind a ``Router`` (``/servers/s5/mcp``).
- ``auth``: the bridge behind ``rpcline.auth.ResourceServer`` with the caller's token
  already accepted (a cached JWT: what every call after a client's first costs).

Printed: instructions a call and the ratio to ``open`` (targets: named <= 1.05x, issue 38;
auth <= 1.3x, issue 40). Linux with valgrind only.
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


def body(id: int) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "x"}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {}}}})


async def call(app: Any, path: str, id: int, headers: list[tuple[bytes, bytes]]) -> None:
    scope = {"type": "http", "method": "POST", "path": path, "root_path": "",
             "headers": list(headers), "client": ("127.0.0.1", 1), "query_string": b""}
    messages = [{"type": "http.request", "body": body(id), "more_body": False}]

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.sleep(3600)  # no disconnect: the answer comes first
        raise AssertionError

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    assert sent[0]["status"] == 200, sent


async def serve(variant: str, calls: int) -> None:
    from rpcline.bridge import Router, StdioBridge

    log = lambda line: None  # noqa: E731  # the bridges' lines are not what is measured
    bridge = StdioBridge(CHILD, log=log)
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
    parser.add_argument("--variants", nargs="+", default=["open", "named", "auth"],
                        choices=["open", "named", "auth"])
    args = parser.parse_args()
    per_call = {}
    for variant in args.variants:
        per_call[variant] = (instructions(variant, 2 * args.calls)
                             - instructions(variant, args.calls)) / args.calls
    base = per_call.get("open")
    print(f"instructions a call, in process, 2026-07-28 tools/call (callgrind, {args.calls} "
          "calls differenced)")
    for variant, count in per_call.items():
        ratio = f"{count / base:.3f}x" if base else "-"
        print(f"{variant:8} {count:10.0f} {ratio:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
