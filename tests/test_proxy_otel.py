"""``rpcline proxy --otel``: the relay's calls as spans and metrics by the MCP conventions.

The relay with ``rpcline.otel.Telemetry``'s hooks and the OpenTelemetry SDK's in-memory
exporter and reader: a SERVER span toward the client (its parent the W3C context in the
request's ``params._meta``) and under it a CLIENT span toward the server, both over
``pipe``, with the caller's ids; the server (``otel_sdk_server.py``, an SDK 2.x server
tracing itself) nests its own SERVER span under the relay's CLIENT span, so one trace runs
from the client to the server. Then the command line: ``--otel`` with the console exporter.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not installed")
pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from _console_spans import console_spans
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from rpcline import proxy
from rpcline._gateway.relay_types import Unbuffered
from rpcline.otel import Telemetry

HERE = Path(__file__).parent
CHILD = [sys.executable, str(HERE / "otel_sdk_server.py")]
TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = f"00-{TRACE}-b7ad6b7169203331-01"
LINES = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "hi"}, "_meta": {"traceparent": PARENT}}},
    {"jsonrpc": "2.0", "id": "f", "method": "tools/call", "params": {
        "name": "fail", "arguments": {"message": "nope"}}},
]
INPUT = b"".join(orjson.dumps(line) + b"\n" for line in LINES)


class Collected(Unbuffered):
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        pass


def child_env(monkeypatch: Any, tmp_path: Path) -> Path:
    spans = tmp_path / "child.jsonl"
    monkeypatch.setenv("OTEL_CHILD_SPANS", str(spans))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))
    return spans


def test_the_relay_traces_each_call_toward_the_client_and_the_server(
        monkeypatch: Any, tmp_path: Path) -> None:
    child_spans = child_env(monkeypatch, tmp_path)
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(provider, MeterProvider(metric_readers=[reader]))

    async def run() -> bytes:
        client = asyncio.StreamReader()
        client.feed_data(INPUT)
        client.feed_eof()
        out = Collected()
        await proxy.relay(CHILD, client, out, hooks=telemetry.hooks(), log=lambda _: None)
        return out.data

    answers = {a["id"]: a for a in map(orjson.loads, asyncio.run(run()).splitlines())}
    assert answers[1]["result"]["content"][0]["text"] == "hi"
    assert answers["f"]["result"]["isError"] is True

    spans = exporter.get_finished_spans()
    named = {(s.name, s.kind): s for s in spans}
    assert set(named) == {(name, kind) for name in ("initialize", "tools/call echo",
                                                   "tools/call fail")
                          for kind in (SpanKind.SERVER, SpanKind.CLIENT)}
    server = named["tools/call echo", SpanKind.SERVER]
    client = named["tools/call echo", SpanKind.CLIENT]
    assert server.parent is not None and f"{server.parent.span_id:016x}" == PARENT[36:52]
    assert client.parent is not None and client.parent.span_id == server.context.span_id
    assert f"{server.context.trace_id:032x}" == f"{client.context.trace_id:032x}" == TRACE
    for span in (server, client):
        attributes = dict(span.attributes or {})
        assert attributes["network.transport"] == "pipe"
        assert attributes["mcp.method.name"] == "tools/call"
        assert attributes["gen_ai.tool.name"] == "echo"
        assert attributes["jsonrpc.request.id"] == "1"  # the proxy keeps the caller's ids
        assert attributes["mcp.protocol.version"] == "2025-06-18"  # the server's answer's
        assert "http.response.status_code" not in attributes and "error.type" not in attributes
    assert named["initialize", SpanKind.SERVER].parent is None  # no context: a new trace
    failed = named["tools/call fail", SpanKind.SERVER]
    assert failed.attributes["error.type"] == "tool_error"
    assert failed.attributes["jsonrpc.request.id"] == "f"
    assert not failed.status.is_ok

    # The server's own SERVER span nests under the relay's CLIENT span: one trace.
    theirs = [json.loads(line) for line in child_spans.read_text().splitlines()]
    [echo] = [s for s in theirs if s["name"] == "tools/call echo"]
    assert echo["trace_id"] == TRACE
    assert echo["parent_id"] == f"{client.context.span_id:016x}"

    data = reader.get_metrics_data()
    assert data is not None
    points = {metric.name: metric.data.data_points
              for rm in data.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics}
    for name in ("mcp.server.operation.duration", "mcp.client.operation.duration"):
        [echoed] = [p for p in points[name] if p.attributes.get("gen_ai.tool.name") == "echo"]
        assert echoed.count == 1 and echoed.attributes["network.transport"] == "pipe"


def test_otel_on_the_command_line_exports_the_spans(monkeypatch: Any, tmp_path: Path) -> None:
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http", reason="the otel extra is "
                        "not installed")
    child_env(monkeypatch, tmp_path)
    env = {**os.environ, "OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "none",
           "OTEL_SERVICE_NAME": "proxy-under-test"}
    done = subprocess.run([sys.executable, "-m", "rpcline", "proxy", "--otel", "--", *CHILD],
                          input=INPUT, capture_output=True, timeout=60, env=env, check=False)
    assert done.returncode == 0, done.stderr.decode()
    assert len(done.stdout.splitlines()) == 3
    spans = console_spans(done.stderr.decode())
    named = {(s["name"], s["kind"]): s for s in spans}
    server = named["tools/call echo", "SpanKind.SERVER"]
    client = named["tools/call echo", "SpanKind.CLIENT"]
    assert server["context"]["trace_id"] == client["context"]["trace_id"] == "0x" + TRACE
    assert client["parent_id"] == server["context"]["span_id"]
    assert server["attributes"]["network.transport"] == "pipe"
    assert server["resource"]["attributes"]["service.name"] == "proxy-under-test"


def test_without_hooks_the_relay_watches_nothing() -> None:
    async def run() -> Any:
        client = asyncio.StreamReader()
        client.feed_eof()
        session = proxy.RelaySession(["true"], client, Collected(), 1024, 1, 1024, 1.0, 1.0,
                                     lambda _: None, proxy.Summary(), None)  # type: ignore
        return session.watches

    assert asyncio.run(run()) is None
