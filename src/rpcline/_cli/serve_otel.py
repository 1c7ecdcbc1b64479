"""``rpcline serve --otel`` and ``--metrics`` (and ``rpcline proxy --otel``): the
OpenTelemetry SDK, set up from ``OTEL_*``.

``--otel``: a tracer provider and a meter provider, their exporters named by
``OTEL_TRACES_EXPORTER`` and ``OTEL_METRICS_EXPORTER`` (``otlp``, the default: OTLP over
HTTP, its endpoint and headers from the ``OTEL_EXPORTER_OTLP_*`` variables; ``console``:
stderr; ``none``), the resource from ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``
(service name ``rpcline`` unless they name one). ``--metrics``: the same instruments read
by Prometheus at ``/metrics`` (``MetricsEndpoint``). Both: ``rpcline.otel.Telemetry``'s
hooks on every bridge (on the proxy's relay).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import rpcline
from rpcline._gateway.observe import Hooks

TRACES_VAR, METRICS_VAR = "OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER"
EXPORTERS = ("otlp", "console", "none")


class Setup:
    """The hooks for the bridges, the ``/metrics`` app (or None), and the providers' flush."""

    def __init__(self, hooks: Hooks, metrics_app: Any | None,
                 shutdown: Callable[[], None]) -> None:
        self.hooks = hooks
        self.metrics_app = metrics_app
        self.shutdown = shutdown


def refused(otel: bool, metrics: bool) -> str | None:
    """Why the flags cannot be served (an extra missing, an exporter unknown), or None."""
    try:
        import opentelemetry.sdk  # noqa: F401
    except ImportError:
        extra = "otel" if otel else "metrics"
        return (f"--{extra} needs the {extra} extra (opentelemetry-sdk is missing): pip install "
                f"'rpcline[{extra}]'")
    if otel:
        for var in (TRACES_VAR, METRICS_VAR):
            for name in _names(var):
                if name not in EXPORTERS:
                    return f"{var}={name}: rpcline knows {', '.join(EXPORTERS)}"
        if "otlp" in (*_names(TRACES_VAR), *_names(METRICS_VAR)):
            try:
                import opentelemetry.exporter.otlp.proto.http  # noqa: F401
            except ImportError:
                return ("--otel with the otlp exporter needs opentelemetry-exporter-otlp-proto-"
                        "http: pip install 'rpcline[otel]'")
    if metrics:
        try:
            import opentelemetry.exporter.prometheus  # noqa: F401
            import prometheus_client  # noqa: F401
        except ImportError as missing:
            return (f"--metrics needs the metrics extra ({missing.name} is missing): pip "
                    "install 'rpcline[metrics]'")
    return None


def setup(otel: bool, metrics: bool) -> Setup:
    """The providers (global, so a library's spans join the same traces) and the hooks."""
    from opentelemetry import metrics as otel_metrics
    from opentelemetry import trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider

    from rpcline._gateway.otel_hooks import Telemetry

    named = "OTEL_SERVICE_NAME" in os.environ or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", "")
    resource = Resource.create({} if named else {"service.name": "rpcline"})
    readers: list[Any] = []
    tracer_provider = None
    if otel:
        tracer_provider = TracerProvider(resource=resource)
        for processor in _span_processors():
            tracer_provider.add_span_processor(processor)
        trace.set_tracer_provider(tracer_provider)
        readers += _metric_readers()
    metrics_app = None
    if metrics:
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from prometheus_client import REGISTRY, make_asgi_app

        readers.append(PrometheusMetricReader())
        metrics_app = make_asgi_app(REGISTRY)
    meter_provider = MeterProvider(resource=resource, metric_readers=readers)
    otel_metrics.set_meter_provider(meter_provider)
    telemetry = Telemetry(tracer_provider, meter_provider, rpcline.__version__, tracing=otel)

    def shutdown() -> None:
        if tracer_provider is not None:
            tracer_provider.shutdown()
        meter_provider.shutdown()

    return Setup(telemetry.hooks(), metrics_app, shutdown)


def _names(var: str) -> list[str]:
    return [name.strip() for name in os.environ.get(var, "otlp").split(",") if name.strip()]


def _span_processors() -> list[Any]:
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter

    processors = []
    for name in _names(TRACES_VAR):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            processors.append(BatchSpanProcessor(OTLPSpanExporter()))
        elif name == "console":
            processors.append(BatchSpanProcessor(ConsoleSpanExporter(out=sys.stderr)))
    return processors


def _metric_readers() -> list[Any]:
    from opentelemetry.sdk.metrics.export import (ConsoleMetricExporter,
                                                  PeriodicExportingMetricReader)

    readers = []
    for name in _names(METRICS_VAR):
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import (
                OTLPMetricExporter)

            readers.append(PeriodicExportingMetricReader(OTLPMetricExporter()))
        elif name == "console":
            readers.append(PeriodicExportingMetricReader(ConsoleMetricExporter(out=sys.stderr)))
    return readers
