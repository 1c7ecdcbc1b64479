"""What tracing reads from a routed line and writes into it, without decoding ``params``.

A ``Route`` knows where ``params``, ``result`` and ``error`` are; the members read here
(``params.name``, ``params.uri``, ``params._meta.traceparent``, ``result.isError``,
``error.code``) are found by walking those objects' members, skipping every value but the
one wanted (the line was validated by ``route``, so the walk needs no checks). The W3C
trace context goes toward a child spliced into ``params._meta`` as ``Route.with_id``
splices an id: the rest of the line stays the bytes the caller sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

import orjson

from rpcline._core.json_walk import Span, members, string, value_end, ws
from rpcline._core.route import Route

# The members that name a call's target, by method (the span name's and the attributes').
TARGETS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri",
                  "resources/subscribe": "uri", "resources/unsubscribe": "uri"}
TRACE_KEYS: Final = ("traceparent", "tracestate")
# A params object this small is decoded (faster than walking it in Python) to learn where
# its members are; a larger one is walked.
SMALL: Final = 4096
_META_KEY: Final = re.compile(rb'(?<!\\)"_meta"[ \t\n\r]*:[ \t\n\r]*')


def member(data: bytes, span: Span | None, name: str) -> Span | None:
    """The span of the object at ``span``'s last ``name`` member (None: absent)."""
    if span is None or data[span[0]] != 0x7B:
        return None
    found = None
    for key, value in members(data, span):
        if key == name:
            found = value
    return found


def line_of(r: Route) -> bytes:
    line = r.line
    if type(line) is bytes:
        return line
    assert type(line) is str
    return line.encode()


def target(r: Route) -> str | None:
    """``params.name`` of a ``tools/call`` or ``prompts/get``, ``params.uri`` of a resource
    request, when it is a string; else None."""
    key = TARGETS.get(r.method) if r.method is not None else None
    if key is None or r.params_span is None:
        return None
    data = line_of(r)
    start, end = r.params_span
    if end - start <= SMALL:
        params = orjson.loads(memoryview(data)[start:end])  # route validated it
        value = params.get(key) if type(params) is dict else None
        return value if type(value) is str else None
    span = member(data, r.params_span, key)
    return string(data, span) if span is not None and data[span[0]] == 0x22 else None


def protocol_version(r: Route, span: Span | None) -> str | None:
    """``protocolVersion`` of the object at ``span`` (an initialize's ``params``, its
    answer's ``result``; None: absent, or not a string)."""
    data = line_of(r)
    found = member(data, span, "protocolVersion")
    return string(data, found) if found is not None and data[found[0]] == 0x22 else None


def _absent(data: bytes, span: Span, key: bytes) -> bool:
    """Whether no member named ``key`` can be in ``span``: neither its bytes nor an escape
    (a byte search, far cheaper than the walk)."""
    return data.find(key, span[0], span[1]) < 0 and data.find(b"\\u", span[0], span[1]) < 0


def trace_context(r: Route) -> dict[str, str]:
    """``traceparent`` and ``tracestate`` of ``params._meta``, those that are strings."""
    if r.params_span is None:
        return {}
    data = line_of(r)
    if _absent(data, r.params_span, b"trace"):
        return {}
    meta = member(data, r.params_span, "_meta")
    if meta is None or data[meta[0]] != 0x7B:
        return {}
    found = {}
    for key, span in members(data, meta):
        if key in TRACE_KEYS:
            if data[span[0]] == 0x22:
                found[key] = string(data, span)
            else:
                found.pop(key, None)
    return found


def error_code(r: Route) -> int | None:
    """The ``error.code`` of a response, when it is an integer."""
    if r.error_span is None:
        return None
    data = line_of(r)
    span = member(data, r.error_span, "code")
    if span is None:
        return None
    try:
        code = orjson.loads(data[span[0]:span[1]])
    except orjson.JSONDecodeError:
        return None
    return code if type(code) is int else None


def is_tool_error(r: Route) -> bool:
    """Whether a response's ``result.isError`` is ``true``."""
    data = line_of(r)
    if r.result_span is None or _absent(data, r.result_span, b"isError") or _absent(
            data, r.result_span, b"true"):
        return False
    span = member(data, r.result_span, "isError")
    return span is not None and data[span[0]:span[1]] == b"true"


def splice_meta(r: Route, entries: Mapping[str, str]) -> bytes:
    """The request's line with ``entries`` in ``params._meta`` (their values replaced where
    present, every duplicate of the key included; ``params`` and ``_meta`` added where
    absent), every other byte as it was. A ``_meta`` or ``params`` that is not an object
    is left alone (the child refuses that line either way)."""
    data = line_of(r)
    if not entries:
        return data
    if r.params_span is None:
        at = data.rindex(b"}")
        return b"".join((data[:at], b',"params":{"_meta":', _object(entries), b"}", data[at:]))
    params = r.params_span
    if data[params[0]] != 0x7B:
        return data
    # No trace key anywhere in params (the usual request): the entries go first in _meta,
    # and only where _meta starts is needed, not where it ends.
    traced = not _absent(data, params, b"trace")
    meta = None if _absent(data, params, b"_meta") else _meta_span(data, params, traced)
    if meta is None:
        return _insert(data, params, b'"_meta":' + _object(entries))
    if data[meta[0]] != 0x7B:
        return data
    if not traced or _absent(data, meta, b"trace"):  # no key to replace: entries first
        return _insert(data, meta, _object(entries)[1:-1])
    pieces: list[bytes] = []
    at = meta[0]
    new = dict(entries)
    for key, span in members(data, meta):
        if key in entries:
            pieces += (data[at:span[0]], orjson.dumps(entries[key]))
            at = span[1]
            new.pop(key, None)
    pieces.append(data[at:])
    spliced = data[:meta[0]] + b"".join(pieces)
    if not new:
        return spliced
    # The meta object starts at the same offset: insert the rest at its front.
    end = meta[0] + (len(spliced) - len(data)) + (meta[1] - meta[0])
    return _insert(spliced, (meta[0], end), _object(new)[1:-1])


def _meta_span(data: bytes, params: Span, ends: bool = True) -> Span | None:
    """Where ``params._meta``'s value is (None: absent; ``ends`` False: its end may be
    given as its start). A small params object without escapes whose only ``"_meta":``
    is its own member's needs no walk: its decoded form says the member is there, and the
    bytes where."""
    start, end = params
    if end - start <= SMALL and data.find(b"\\u", start, end) < 0:
        keys = list(_META_KEY.finditer(data, start, end))
        if len(keys) == 1:
            decoded = orjson.loads(memoryview(data)[start:end])
            if type(decoded) is dict and "_meta" in decoded:
                at = keys[0].end()
                return at, value_end(data, at) if ends else at
    return member(data, params, "_meta")


def _insert(data: bytes, span: Span, text: bytes) -> bytes:
    """``text`` (members) first in the object at ``span``."""
    inner = ws(data, span[0] + 1)
    comma = b"" if data[inner] == 0x7D else b","
    return b"".join((data[:span[0] + 1], text, comma, data[span[0] + 1:]))


def _object(entries: Mapping[str, str]) -> bytes:
    return orjson.dumps(dict(entries))


def span_name(method: str, target: str | None) -> str:
    """``{mcp.method.name} {target}``: the target a tool's or a prompt's name only."""
    return f"{method} {target}" if target is not None and method in NAMED_SPANS else method


NAMED_SPANS: Final = ("tools/call", "prompts/get")
Attributes = dict[str, "str | int"]


def attributes(method: str, target: str | None, request_id: object | None = None, *,
               protocol_version: str | None = None, session_id: str | None = None,
               transport: str | None = None, client_address: str | None = None,
               client_port: int | None = None) -> Attributes:
    """The MCP semantic conventions' attributes of one request (``jsonrpc.request.id`` as
    the SDK writes it, a string)."""
    found: Attributes = {"mcp.method.name": method}
    if request_id is not None:
        found["jsonrpc.request.id"] = str(request_id)
    if target is not None:
        if method == "tools/call":
            found["gen_ai.tool.name"] = target
        elif method == "prompts/get":
            found["gen_ai.prompt.name"] = target
        elif method.startswith("resources/"):
            found["mcp.resource.uri"] = target
    if method == "tools/call":
        found["gen_ai.operation.name"] = "execute_tool"
    if protocol_version is not None:
        found["mcp.protocol.version"] = protocol_version
    if session_id is not None:
        found["mcp.session.id"] = session_id
    if transport is not None:
        found["network.transport"] = transport
    if client_address is not None:
        found["client.address"] = client_address
    if client_port is not None:
        found["client.port"] = client_port
    return found
