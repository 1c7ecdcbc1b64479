"""``rpcline.otel.Telemetry`` through a ``StdioBridge``: spans and metrics by the MCP conventions.

The OpenTelemetry SDK's in-memory exporter and reader take what the bridge makes for an SDK
2.x client's calls in both eras: one SERVER span per call (its parent the client's own
CLIENT span, from ``params._meta``) and under it one CLIENT span toward the child, named
``{mcp.method.name} {target}``, with the conventions' attributes; the duration histograms.
The child (``otel_sdk_server.py``, the SDK's own tracing on) writes its spans to a file: its
SERVER span is a child of the bridge's CLIENT span, in the client's trace.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed")
pytest.importorskip("uvicorn", reason="uvicorn (the interop extra) is not installed")
pytest.importorskip("opentelemetry.sdk", reason="the otel extra is not installed")

from _asgi import serving
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind
from test_bridge import V

from rpcline.bridge import StdioBridge
from rpcline.otel import Telemetry

pytestmark = pytest.mark.anyio
HERE = Path(__file__).parent
CHILD = [sys.executable, str(HERE / "otel_sdk_server.py")]


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    """The SDK client's spans and the bridge's, one provider (the global one, set once)."""
    found = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(found))
    trace.set_tracer_provider(provider)
    return found


def by_kind(spans: list[ReadableSpan], kind: SpanKind, prefix: str = "") -> list[ReadableSpan]:
    return [s for s in spans if s.kind == kind and s.name.startswith(prefix)]


@pytest.mark.parametrize("mode", ["legacy", V])
async def test_spans_and_metrics_of_calls_in_both_eras(
        mode: str, exporter: InMemorySpanExporter, tmp_path: Path, monkeypatch: Any) -> None:
    exporter.clear()
    child_spans = tmp_path / "child.jsonl"
    monkeypatch.setenv("OTEL_CHILD_SPANS", str(child_spans))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(sys.path))
    reader = InMemoryMetricReader()
    telemetry = Telemetry(meter_provider=MeterProvider(metric_readers=[reader]))
    app = StdioBridge(CHILD, name="demo", hooks=telemetry.hooks(),
                      env=["OTEL_CHILD_SPANS", "PYTHONPATH"])
    try:
        async with serving(app, timeout=60) as url, mcp.Client(url, mode=mode) as client:
            await client.call_tool("echo", {"text": "hi"})
            await client.call_tool("fail", {"message": "nope"})
    finally:
        await app.aclose()
    spans = list(exporter.get_finished_spans())
    [mine] = [s for s in by_kind(spans, SpanKind.CLIENT, "MCP send tools/call")
              if "echo" in s.name]  # the SDK client's own span
    [server] = [s for s in by_kind(spans, SpanKind.SERVER) if s.name == "tools/call echo"]
    [client] = [s for s in by_kind(spans, SpanKind.CLIENT) if s.name == "tools/call echo"]
    assert server.parent is not None and server.parent.span_id == mine.context.span_id
    assert client.parent is not None and client.parent.span_id == server.context.span_id
    assert server.context.trace_id == client.context.trace_id == mine.context.trace_id
    attributes = dict(server.attributes or {})
    era = "2025" if mode == "legacy" else "2026"
    assert attributes["mcp.method.name"] == "tools/call"
    assert attributes["gen_ai.tool.name"] == "echo"
    assert attributes["gen_ai.operation.name"] == "execute_tool"
    assert attributes["jsonrpc.request.id"] == mine.attributes["jsonrpc.request.id"]
    assert attributes["network.transport"] == "tcp" and attributes["client.address"] == "127.0.0.1"
    assert ("mcp.session.id" in attributes) == (era == "2025")
    assert "mcp.protocol.version" in attributes and "error.type" not in attributes
    outward = dict(client.attributes or {})
    assert outward["network.transport"] == "pipe"
    assert int(outward["jsonrpc.request.id"]) > 0  # the child's id, not the caller's
    [failed] = [s for s in by_kind(spans, SpanKind.SERVER) if s.name == "tools/call fail"]
    assert failed.attributes["error.type"] == "tool_error"
    assert not failed.status.is_ok

    # The child's own SERVER span nests under the bridge's CLIENT span: one trace.
    theirs = [json.loads(line) for line in child_spans.read_text().splitlines()]
    [echo] = [s for s in theirs if s["name"] == "tools/call echo"]
    assert echo["kind"] == "SERVER"
    assert echo["trace_id"] == f"{mine.context.trace_id:032x}"
    assert echo["parent_id"] == f"{client.context.span_id:016x}"

    data = reader.get_metrics_data()
    assert data is not None
    points = {metric.name: metric.data.data_points
              for rm in data.resource_metrics for sm in rm.scope_metrics for metric in sm.metrics}
    calls = [p for p in points["mcp.server.operation.duration"]
             if p.attributes.get("gen_ai.tool.name") == "echo"]
    assert sum(p.count for p in calls) == 1
    assert calls[0].explicit_bounds[:3] == (0.01, 0.02, 0.05)
    assert any(p.attributes.get("error.type") == "tool_error"
               for p in points["mcp.client.operation.duration"])
    assert "rpcline.calls.in_flight" in points and "rpcline.bytes.relayed" in points


async def test_the_http_traceparent_header_is_the_parent_without_meta(
        exporter: InMemorySpanExporter) -> None:
    httpx = pytest.importorskip("httpx")
    from test_bridge import call_tool

    exporter.clear()
    app = StdioBridge([sys.executable, str(HERE / "sdk_server.py")],
                      hooks=Telemetry().hooks())
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    body, headers = call_tool(3, "echo", {"text": "x"})
    try:
        async with serving(app, timeout=30) as url, httpx.AsyncClient(timeout=10) as http:
            answer = await http.post(url, content=body, headers={**headers,
                                                                 "traceparent": parent})
    finally:
        await app.aclose()
    assert answer.json()["id"] == 3
    [server] = by_kind(list(exporter.get_finished_spans()), SpanKind.SERVER, "tools/call")
    assert f"{server.context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
    assert server.parent is not None and f"{server.parent.span_id:016x}" == "b7ad6b7169203331"
