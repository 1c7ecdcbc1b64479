"""tests/sdk_server.py with the OpenTelemetry SDK on: its spans as JSON lines in a file.

    OTEL_CHILD_SPANS=PATH python tests/otel_sdk_server.py

The SDK 2.x server traces every message it serves (a SERVER span, its parent the W3C
context in ``params._meta``); each span ends as one line of PATH: its name, kind, trace
id, span id and parent span id (hex), for tests/test_otel.py.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class FileExporter(SpanExporter):
    def __init__(self, path: str) -> None:
        self.path = path

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        with open(self.path, "a") as out:
            for span in spans:
                context = span.get_span_context()
                assert context is not None
                out.write(json.dumps({
                    "name": span.name, "kind": span.kind.name,
                    "trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}",
                    "parent_id": None if span.parent is None else f"{span.parent.span_id:016x}",
                    "attributes": dict(span.attributes or {})}) + "\n")
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(FileExporter(os.environ["OTEL_CHILD_SPANS"])))
trace.set_tracer_provider(provider)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sdk_server import server  # noqa: E402

server.run("stdio")
