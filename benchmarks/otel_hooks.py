"""Instructions of one call's OpenTelemetry hooks, by callgrind: the part tracing adds.

    python benchmarks/otel_hooks.py [--calls 2000] [--variants telemetry sdk]

In process and without a bridge: one 2026-07-28 ``tools/call`` (its ``Route``, its
``CallStarted`` with the headers ``rpcline serve`` sees, its answer) goes through
``observe.Watch`` as the bridge drives it: start, ``to_child`` (the CLIENT span's
traceparent spliced into the request), end. Variants, each in a process of its own under
``valgrind --tool=callgrind``, at ``--calls`` and twice as many calls, the difference per
call printed:

- ``none``: ``Watch`` with no hooks (the records, the splice skipped, the answer's outcome).
- ``telemetry``: ``rpcline.otel.Telemetry``'s hooks on the OpenTelemetry SDK as ``rpcline
  serve --otel`` sets it up with ``OTEL_TRACES_EXPORTER=none OTEL_METRICS_EXPORTER=none``
  (every span recorded, none exported).
- ``sdk``: the SDK calls alone that ``telemetry`` makes a call, with everything rpcline
  computes given in advance: two spans started (the CLIENT one under the SERVER one) with
  their attributes, ended, two histogram records; the floor under ``telemetry``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from types import SimpleNamespace
from typing import Any

import orjson

VERSION = "2026-07-28"
LINE = orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
    "name": "echo", "arguments": {"text": "x"}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {}}}})
ANSWER = b'{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"x"}]}}'
HEADERS = [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/json"),
           (b"accept", b"application/json, text/event-stream"),
           (b"mcp-protocol-version", VERSION.encode()), (b"mcp-method", b"tools/call"),
           (b"mcp-name", b"echo")]  # fmt: skip


def providers() -> None:
    os.environ.update(OTEL_TRACES_EXPORTER="none", OTEL_METRICS_EXPORTER="none")


def run(variant: str, calls: int) -> None:
    import rpcline
    from rpcline._gateway.observe import CallStarted, Hooks, Watch

    r = rpcline.route(LINE)
    if variant == "sdk":
        return sdk(calls)
    hooks = Hooks()
    if variant == "telemetry":
        providers()
        from rpcline._cli.serve_otel import setup

        hooks = setup(True, False).hooks
    for _ in range(calls):
        started = CallStarted("tools/call", "echo", 7, "2026", None, VERSION, None,
                              "127.0.0.1", 1, "tcp", HEADERS, r,
                              time.perf_counter())
        w = Watch(hooks, started)
        w.status = 200
        w.to_child("2026-1", r)
        w.end(ANSWER, 3)
    return None


def sdk(calls: int) -> None:
    providers()
    from opentelemetry import trace
    from opentelemetry.metrics import get_meter

    from rpcline._cli.serve_otel import setup
    from rpcline._gateway.otel_hooks import BUCKETS

    setup(True, False)
    tracer, meter = trace.get_tracer("floor"), get_meter("floor")
    server_duration, client_duration = (meter.create_histogram(
        name, unit="s", explicit_bucket_boundaries_advisory=BUCKETS)
        for name in ("mcp.server.operation.duration", "mcp.client.operation.duration"))
    measured: dict[str, Any] = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo",
                "gen_ai.operation.name": "execute_tool", "mcp.protocol.version": VERSION,
                "network.transport": "tcp"}
    outward = {**measured, "network.transport": "pipe"}
    full = {**measured, "jsonrpc.request.id": "7", "client.address": "127.0.0.1",
            "client.port": 1}
    ctx = SimpleNamespace()
    for _ in range(calls):
        ctx.server = tracer.start_span("tools/call echo", kind=trace.SpanKind.SERVER,
                                       attributes=full)
        ctx.client = tracer.start_span("tools/call echo", trace.set_span_in_context(
            ctx.server), kind=trace.SpanKind.CLIENT, attributes=outward)
        server_duration.record(0.001, measured)
        client_duration.record(0.001, outward)
        ctx.client.end()
        ctx.server.end()


def instructions(variant: str, calls: int) -> int:
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={folder}/out",
             sys.executable, __file__, "--run", variant, str(calls)],
            capture_output=True, text=True, timeout=3600, check=False,
            env={**os.environ, "PYTHONHASHSEED": "0"})  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert done.returncode == 0 and found, done.stderr[-2000:]
    return int(found.group(1))


def main() -> int:
    if sys.argv[1:2] == ["--run"]:
        run(sys.argv[2], int(sys.argv[3]))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--variants", nargs="+", default=["none", "telemetry", "sdk"],
                        choices=["none", "telemetry", "sdk"])
    args = parser.parse_args()
    print(f"instructions a call's hooks, in process (callgrind, {args.calls} calls differenced)")
    for variant in args.variants:
        count = (instructions(variant, 2 * args.calls)
                 - instructions(variant, args.calls)) / args.calls
        print(f"{variant:10} {count:10.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
