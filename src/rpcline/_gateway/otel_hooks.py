"""The OpenTelemetry adapter: ``observe.Hooks`` that make spans and metrics of each call.

A SERVER span toward the client (its parent the W3C context in ``params._meta``, else in
the HTTP headers) and a CLIENT span toward the child under it, named ``{mcp.method.name}
{target}``, with the MCP semantic conventions' attributes; the CLIENT span's context is
what ``child_meta`` gives the bridge to splice into ``params._meta``, so the child's own
spans nest under it. Metrics: ``mcp.server.operation.duration``,
``mcp.client.operation.duration`` and ``mcp.server.session.duration`` (seconds, the
conventions' buckets), and the gateway's own counters. Only the OpenTelemetry API is
used: the providers are the caller's (the global ones unless given).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from types import SimpleNamespace
from typing import Any, Final

from opentelemetry import metrics, propagate, trace
from opentelemetry.metrics import Observation
from opentelemetry.trace import SpanKind, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from rpcline._gateway import otel_lines
from rpcline._gateway.observe import (
    CallEnded,
    CallStarted,
    ChildRequest,
    ChildRestarted,
    Hooks,
    SessionEnded,
    SessionStarted,
)

# The conventions' advice for MCP operation durations (seconds).
BUCKETS: Final = (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
# What the duration histograms carry (the rest of a span's attributes are per call).
METRIC_KEYS: Final = ("mcp.method.name", "gen_ai.tool.name", "gen_ai.prompt.name",
                      "gen_ai.operation.name", "mcp.protocol.version", "network.transport",
                      "error.type", "rpc.response.status_code")
TRACE_HEADERS: Final = ((b"traceparent", "traceparent"), (b"tracestate", "tracestate"))
SCOPE: Final = "rpcline"
W3C_FIELDS: Final = {"traceparent", "tracestate", "baggage"}
W3C: Final = TraceContextTextMapPropagator()


def carrier(started: CallStarted) -> dict[str, str]:
    """The caller's W3C trace context: ``params._meta``'s, else the HTTP headers'."""
    found = otel_lines.trace_context(started.route)
    if found:
        return found
    for name, key in TRACE_HEADERS:
        for k, v in started.headers:
            if k == name:
                found[key] = v.decode("latin-1")
    return found


class Telemetry:
    """Spans and metrics of a bridge's calls; ``hooks()`` for ``StdioBridge(hooks=...)``."""

    def __init__(self, tracer_provider: trace.TracerProvider | None = None,
                 meter_provider: metrics.MeterProvider | None = None,
                 version: str = "", tracing: bool = True) -> None:
        self.tracing = tracing  # False: metrics only (``--metrics`` alone), no span work
        # With the default propagators (W3C trace context and baggage: no baggage is ever
        # current here), the W3C one alone writes the child's traceparent; any others
        # configured, the global one.
        self.inject = (W3C.inject if propagate.get_global_textmap().fields == W3C_FIELDS
                       else propagate.inject)
        self.tracer = trace.get_tracer(SCOPE, version, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, version, meter_provider=meter_provider)
        self.server_duration = meter.create_histogram(
            "mcp.server.operation.duration", unit="s",
            description="MCP request duration as observed on the receiver",
            explicit_bucket_boundaries_advisory=BUCKETS)
        self.client_duration = meter.create_histogram(
            "mcp.client.operation.duration", unit="s",
            description="MCP request duration as observed on the sender",
            explicit_bucket_boundaries_advisory=BUCKETS)
        # Counted here, read when the metrics are collected: no SDK call per call for them.
        self.in_flight: Counter[str] = Counter()
        self.relayed: Counter[str] = Counter()
        meter.create_observable_up_down_counter(
            "rpcline.calls.in_flight", [lambda _: _observed(self.in_flight)], unit="{call}",
            description="calls not answered yet")
        meter.create_observable_counter(
            "rpcline.bytes.relayed", [lambda _: _observed(self.relayed)], unit="By",
            description="bytes of answers sent to clients")
        self.refused = meter.create_counter(
            "rpcline.calls.refused", unit="{call}",
            description="calls the gateway answered itself, by HTTP status")
        self.session_duration = meter.create_histogram(
            "mcp.server.session.duration", unit="s",
            description="The duration of the MCP session as observed on the MCP server",
            explicit_bucket_boundaries_advisory=BUCKETS)
        self.sessions: Counter[str | None] = Counter()  # open, by protocol version
        meter.create_observable_up_down_counter(
            "rpcline.sessions", [lambda _: _observed(self.sessions, "mcp.protocol.version")],
            unit="{session}", description="2025-era sessions open")
        self.restarts = meter.create_counter(
            "rpcline.child.restarts", unit="{restart}",
            description="starts of a child whose process before ended")

    def hooks(self) -> Hooks:
        told: dict[str, Any] = {"on_session_start": [self.session_start],
                                "on_session_end": [self.session_end],
                                "on_child_restart": [self.restarted]}
        if not self.tracing:
            return Hooks(on_call_start=[self.start], on_call_end=[self.end], **told)
        return Hooks(on_call_start=[self.start], on_child_request=[self.child],
                     on_call_end=[self.end], child_meta=self.meta, **told)

    def session_start(self, started: SessionStarted) -> None:
        self.sessions[started.protocol_version] += 1

    def session_end(self, ended: SessionEnded) -> None:
        self.sessions[ended.protocol_version] -= 1
        attributes = {"network.protocol.name": "http", "network.transport": "tcp"}
        if ended.protocol_version is not None:
            attributes["mcp.protocol.version"] = ended.protocol_version
        if ended.error_type is not None:
            attributes["error.type"] = ended.error_type
        self.session_duration.record(ended.duration, attributes)

    def restarted(self, restarted: ChildRestarted) -> None:
        self.restarts.add(1, {} if restarted.server is None else
                          {"rpcline.server.name": restarted.server})

    def start(self, ctx: SimpleNamespace, started: CallStarted) -> None:
        attributes = otel_lines.attributes(
            started.method, started.target, started.caller_id,
            protocol_version=started.protocol_version, session_id=started.session_id,
            transport=started.transport, client_address=started.client_address,
            client_port=started.client_port)
        # What the histograms carry, once a call: the CLIENT span's attributes too.
        ctx.otel_measured = {k: v for k, v in attributes.items() if k in METRIC_KEYS}
        ctx.otel_client = ctx.otel_server = None
        if self.tracing:
            found = carrier(started)
            parent = propagate.extract(found) if found else None
            ctx.otel_name = otel_lines.span_name(started.method, started.target)
            # Never made current (a relay's callbacks share one context a side, so a
            # detach would not find its attach): log lines find the span through the
            # bridge's WATCH.
            ctx.otel_server = self.tracer.start_span(ctx.otel_name, context=parent,
                                                     kind=SpanKind.SERVER,
                                                     attributes=attributes)
        ctx.otel_method = started.method
        self.in_flight[started.method] += 1

    def child(self, ctx: SimpleNamespace, request: ChildRequest) -> None:
        ctx.otel_client = self.tracer.start_span(
            ctx.otel_name, context=trace.set_span_in_context(ctx.otel_server),
            kind=SpanKind.CLIENT, attributes={**ctx.otel_measured, "network.transport": "pipe"})

    def meta(self, ctx: SimpleNamespace) -> Mapping[str, str]:
        found: dict[str, str] = {}
        if ctx.otel_client is not None:
            self.inject(found, trace.set_span_in_context(ctx.otel_client))
        return found

    def end(self, ctx: SimpleNamespace, ended: CallEnded) -> None:
        self.in_flight[ctx.otel_method] -= 1
        measured = ctx.otel_measured
        errors: dict[str, Any] = {}
        if ended.error_type is not None:
            errors["error.type"] = ended.error_type
            if ended.error_code is not None:
                errors["rpc.response.status_code"] = str(ended.error_code)
            measured = {**measured, **errors}
        self.server_duration.record(ended.duration, measured)
        client = ctx.otel_client
        if client is not None:
            _close(client, errors if ended.child_id is None else
                   {**errors, "jsonrpc.request.id": str(ended.child_id)}, errors)
        if ended.child_duration is not None:
            self.client_duration.record(ended.child_duration, {**measured,
                                                               "network.transport": "pipe"})
        elif ended.status and ended.status != 200:
            self.refused.add(1, {"mcp.method.name": ctx.otel_method,
                                 "http.response.status_code": ended.status})
        self.relayed[ctx.otel_method] += ended.answer_bytes
        server = ctx.otel_server
        if server is not None:  # the HTTP status, but over a pipe (0)
            _close(server, {**errors, "http.response.status_code": ended.status}
                   if ended.status else errors, errors)


def _observed(counts: Counter[Any], key: str = "mcp.method.name") -> Iterable[Observation]:
    return [Observation(value, {} if label is None else {key: label})
            for label, value in counts.items()]


def _close(span: trace.Span, attributes: Mapping[str, Any], errors: Mapping[str, Any]) -> None:
    """Set the span's last ``attributes`` (one call: each takes the span's lock), its status
    ERROR when there are ``errors``, and end it."""
    if attributes:
        span.set_attributes(attributes)
    if errors:
        span.set_status(StatusCode.ERROR)
    span.end()
