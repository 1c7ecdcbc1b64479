"""Observability without decoding: the MCP semantic conventions from a ``Route``, hooks.

    import rpcline, rpcline.otel
    r = rpcline.route(line)
    rpcline.otel.attributes(r)           # {"mcp.method.name": "tools/call", "gen_ai.tool.name": ...}
    rpcline.otel.span_name(r)            # "tools/call get_weather"
    rpcline.otel.splice_traceparent(line, "00-...-01")   # the same bytes, params._meta added to
    rpcline.otel.trace_context(r, headers)               # the caller's W3C context (a carrier)

    from rpcline.otel import Telemetry                   # needs opentelemetry-api
    app = StdioBridge(command, hooks=Telemetry().hooks())

``attributes`` reads ``params.name`` (or ``uri``) by walking ``params``' members, decoding
nothing else; ``splice_traceparent`` writes ``traceparent`` (and ``tracestate``) into
``params._meta`` as ``Route.with_id`` writes an id, adding ``params`` and ``_meta`` where
absent. ``Hooks`` and its records (``CallStarted``, ``ChildRequest``, ``CallEnded``) are what
``StdioBridge(hooks=...)`` calls; ``Telemetry`` makes OpenTelemetry spans and metrics of them
through the OpenTelemetry API (``pip install 'rpcline[otel]'`` brings the SDK and the OTLP
exporter too; ``rpcline serve --otel`` configures them from the ``OTEL_*`` variables).
docs/observability.md names the attributes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rpcline._core.route import Route, route
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

if TYPE_CHECKING:
    from rpcline._gateway.otel_hooks import Telemetry

__all__ = ("CallEnded", "CallStarted", "ChildRequest", "ChildRestarted", "Hooks",
           "SessionEnded", "SessionStarted", "Telemetry", "attributes", "span_name",
           "splice_traceparent", "target", "trace_context")


def __dir__() -> list[str]:
    return sorted(__all__)


def __getattr__(name: str) -> Any:
    if name == "Telemetry":  # the only name that needs opentelemetry-api
        try:
            from rpcline._gateway.otel_hooks import Telemetry
        except ImportError as missing:
            raise ImportError(f"rpcline.otel.Telemetry needs opentelemetry-api ({missing.name} "
                              "is missing): pip install 'rpcline[otel]'") from missing
        return Telemetry
    raise AttributeError(f"module 'rpcline.otel' has no attribute {name!r}")


TRACED = ("request", "notification")


def _routed(line: Route | bytes | str) -> Route:
    r = line if type(line) is Route else route(line)  # type: ignore[arg-type]
    if r.kind not in TRACED:
        raise ValueError(f"not a request or a notification: {r.kind} "
                         f"({r.error if r.error is not None else 'a response'})")
    return r


def target(r: Route) -> str | None:
    """``params.name`` of ``tools/call`` and ``prompts/get``, ``params.uri`` of the
    ``resources/*`` requests that name one (None: absent, or not a string)."""
    return otel_lines.target(_routed(r))


def span_name(r: Route) -> str:
    """The conventions' span name: ``{mcp.method.name} {target}`` (the target a tool's or
    a prompt's name only)."""
    r = _routed(r)
    assert r.method is not None
    return otel_lines.span_name(r.method, otel_lines.target(r))


def attributes(r: Route, *, protocol_version: str | None = None,
               session_id: str | None = None, transport: str | None = None,
               client_address: str | None = None) -> dict[str, str | int]:
    """The MCP semantic conventions' attributes of a request or notification:
    ``mcp.method.name``, ``jsonrpc.request.id`` (a string, as the SDK writes it),
    ``gen_ai.tool.name`` and ``gen_ai.operation.name=execute_tool``, ``gen_ai.prompt.name``,
    ``mcp.resource.uri``, and the ones given (``mcp.protocol.version``, ``mcp.session.id``,
    ``network.transport``, ``client.address``)."""
    if type(r) is not Route or r.kind not in TRACED:  # inlined _routed: the usual case
        r = _routed(r)
    return otel_lines.attributes(r.method, otel_lines.target(r), r.id,  # type: ignore[arg-type]
                                 protocol_version=protocol_version, session_id=session_id,
                                 transport=transport, client_address=client_address)


def splice_traceparent(line: Route | bytes | str, traceparent: str,
                       tracestate: str | None = None) -> bytes:
    """``line`` (a request or a notification) with ``params._meta.traceparent`` (and
    ``tracestate``, when given) set, every other byte as it was: values replaced where the
    keys are present (escaped or repeated), ``params`` and ``_meta`` added where absent. A
    ``params`` or ``_meta`` that is not an object is left as it is (the line is returned
    unchanged). ``ValueError`` for a line that is neither a request nor a notification."""
    entries = {"traceparent": traceparent}
    if tracestate is not None:
        entries["tracestate"] = tracestate
    return otel_lines.splice_meta(_routed(line), entries)


def trace_context(r: Route, headers: Iterable[tuple[bytes | str, bytes | str]] = ()
                  ) -> dict[str, str]:
    """The caller's W3C trace context as a carrier (``traceparent``, ``tracestate``):
    ``params._meta``'s, else the HTTP ``headers``' (for ``opentelemetry.propagate.extract``)."""
    found = otel_lines.trace_context(_routed(r))
    if found:
        return found
    for name, value in headers:
        key = (name.decode("latin-1") if isinstance(name, bytes) else name).lower()
        if key in otel_lines.TRACE_KEYS:
            found[key] = value.decode("latin-1") if isinstance(value, bytes) else value
    return found
