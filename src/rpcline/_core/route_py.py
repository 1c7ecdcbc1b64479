"""The pure-Python twin of ``route_c.pyx``: ``route(line)``, classification without decoding.

A gateway that forwards the raw line needs to know that the line is valid JSON, its kind,
its id and its method; decoding ``params`` or ``result`` into Python objects is most of
``parse``'s cost and is wasted there. ``route`` validates the whole line as ``orjson.loads``
would (syntax, UTF-8, escapes and surrogate pairs, control characters, numbers that are
infinite as doubles, 1024 levels of nesting, JSON whitespace only), decodes only the
top-level ``id``, ``jsonrpc`` and ``method`` members (escaped names and duplicates
included, the last one winning), and applies the card's nine rules in ``parse``'s order.
For every input it agrees with ``parse``: kind, id, method and error code; a parse
error's reason is the scanner's own (which rule of JSON broke, at which byte).

The Cython core mirrors this module function by function, with the same error offsets and
reasons; here string bodies are skipped with regular expressions and a few decoded values
come from orjson, which is exact and keeps the module short.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Final, Literal, TypeAlias

from rpcline._core.message_py import (
    InvalidParams,
    InvalidRequest,
    ParseError,
    ProtocolError,
    _build,
)
from rpcline._core.scan_py import (
    V_ARRAY,
    V_INTEGER,
    V_OBJECT,
    V_STRING,
    Data,
    Span,
    _integer,
    _Invalid,
    _is_version_2_0,
    _prefix_scan,
    _reason,
    _Scan,
    _scan,
    _text,
    prefix_id,
)

from rpcline._core.shared import (
    BAD_ID,
    BAD_JSONRPC,
    BAD_METHOD,
    BAD_PARAMS,
    BATCHING,
    KINDS,
    NO_ID,
    NOT_AN_OBJECT,
    NOT_FORWARDED,
    REPR_FIELDS,
    STR_SURROGATE,
    RequestId,
    encode_id,
)

__all__ = ("Kind", "Route", "Span", "encode_id", "prefix_id", "prefix_refusal", "refusal",
           "route")

Kind: TypeAlias = Literal["request", "notification", "response", "refused"]
# A refusal's id, params, result, error and method spans, in that order.
Spans: TypeAlias = tuple[Span | None, Span | None, Span | None, Span | None, Span | None]
_NO_SPANS: Final[Spans] = (None, None, None, None, None)

_new = tuple.__new__

# --- the result ---------------------------------------------------------------------------


class Route(tuple):  # type: ignore[type-arg]
    """Where a line goes, without its params or result decoded.

    ``kind`` is ``"request"``, ``"notification"``, ``"response"`` or ``"refused"``, as
    ``parse`` classifies the line; ``id``, ``method`` and ``error`` are what ``parse``
    gives (``method`` only for requests and notifications). The spans are ``(start,
    end)`` byte offsets of member values in the line's UTF-8 bytes, ``None`` when absent.
    """

    __slots__ = ()
    __match_args__ = ("kind", "id", "method", "error")

    def __new__(cls, *args: object, **kwargs: object) -> Route:
        raise TypeError("Route objects are made by route()")

    kind: Kind = property(itemgetter(0))  # type: ignore[assignment]
    id: RequestId | None = property(itemgetter(1))  # type: ignore[assignment]
    method: str | None = property(itemgetter(2))  # type: ignore[assignment]
    error: ProtocolError | None = property(itemgetter(3))  # type: ignore[assignment]
    id_span: Span | None = property(  # type: ignore[assignment]
        itemgetter(4), doc="The last top-level ``id`` member's value (the one ``parse`` reads)."
    )
    params_span: Span | None = property(itemgetter(5))  # type: ignore[assignment]
    result_span: Span | None = property(itemgetter(6))  # type: ignore[assignment]
    error_span: Span | None = property(  # type: ignore[assignment]
        itemgetter(7), doc="The top-level ``error`` member's value (``error`` is rpcline's own)."
    )
    method_span: Span | None = property(  # type: ignore[assignment]
        itemgetter(10), doc="The top-level ``method`` member's value, whatever its type."
    )
    line: bytes | str | None = property(  # type: ignore[assignment]
        itemgetter(8),
        doc="The line as routed (a bytes copy of a mutable buffer); ``None`` for the "
        "refusal of a stream's over-long line, whose bytes were dropped.",
    )

    def with_id(self, new_id: RequestId) -> bytes:
        """The line's bytes with every top-level ``id`` value replaced by ``new_id``'s JSON.

        Only for a request or a response that has an id; bytes are spliced, nothing is
        re-encoded. Every id member is rewritten, so that an upstream parser keeping the
        first of duplicates sees the same id as one keeping the last.
        """
        all_ids: tuple[Span, ...] = self[9]
        if self[0] not in ("request", "response"):
            raise ValueError(NOT_FORWARDED)
        if not all_ids:
            raise ValueError(NO_ID)
        value = encode_id(new_id)
        line: bytes = self[8] if type(self[8]) is bytes else self[8].encode()
        pieces: list[bytes] = []
        at = 0
        for start, end in all_ids:
            pieces += (line[at:start], value)
            at = end
        pieces.append(line[at:])
        return b"".join(pieces)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Route:
            return False if isinstance(other, tuple) else NotImplemented
        return self._fields() == other._fields()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._fields())

    def _fields(self) -> tuple[object, ...]:
        kind, id, method, error, *spans, line, _, method_span = self
        return (kind, type(id), id, method, error, *spans, method_span, type(line), line)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in REPR_FIELDS)
        return f"Route({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        if self[8] is None:
            return (refusal, (self[3], self[1], (*self[4:8], self[10])))
        return (route, (self[8],))


def _route(
    kind: Kind, id: RequestId | None, method: str | None, error: ProtocolError | None,
    line: bytes | str, s: _Scan,
) -> Route:  # fmt: skip
    return _new(
        Route,
        (kind, id, method, error, s.id, s.params, s.result, s.error_member, line,
         tuple(s.all_ids), s.method),
    )  # fmt: skip


def refusal(error: ProtocolError, id: RequestId | None, spans: Spans = _NO_SPANS) -> Route:
    """A refused Route for a line that was never routed whole (a stream's over-long line):
    ``spans`` are its id, params, result, error and method spans (``prefix_refusal``)."""
    id_span, params_span, result_span, error_span, method_span = spans
    return _new(Route, ("refused", id, None, error, id_span, params_span, result_span,
                        error_span, None, (), method_span))  # fmt: skip


def prefix_refusal(error: ProtocolError, data: Data, cut: bool) -> Route:
    """A refused Route for a line known by its first bytes: the id and the spans of the
    members complete in its valid prefix (``scan_py._prefix_scan``), and no line.

    A stream refuses an over-long line with it (``cut``); a relay asks it which call a line
    that is not JSON meant to answer, and whether it was a request (its ``method_span``).
    """
    id, s = _prefix_scan(data, cut)
    return refusal(error, id, (s.id, s.params, s.result, s.error_member, s.method))


def _refused(line: bytes | str, s: _Scan, error: ProtocolError, id: RequestId | None) -> Route:
    return _route("refused", id, None, error, line, s)


def _invalid_request(line: bytes | str, s: _Scan, id: RequestId | None, reason: str) -> Route:
    return _refused(line, s, _build(InvalidRequest, (reason,)), id)


def _parse_error(line: bytes | str, reason: str) -> Route:
    return _refused(line, _Scan(b""), _build(ParseError, (reason,)), None)


def route(line: str | bytes | bytearray | memoryview) -> Route:
    """Classify one line as ``parse`` does, decoding only its id, jsonrpc and method."""
    return _routed(line, False)[0]


def _routed(line: str | bytes | bytearray | memoryview, nested: bool) -> tuple[Route, _Scan | None]:
    """``route(line)`` and what the scan noted (``nested``: inner members too), or None
    for a line that is not JSON."""
    routable = line if type(line) is bytes else _routable(line)
    if isinstance(routable, str):
        try:
            data = routable.encode()
        except UnicodeEncodeError as error:
            return _parse_error(routable, STR_SURROGATE.format(error.start)), None
    else:
        data = routable
    s = _Scan(data)
    s.nested = nested
    try:
        _scan(s)
    except _Invalid as error:
        return _parse_error(routable, _reason(error)), None
    return _classify(routable, s), s


def _classify(line: bytes | str, s: _Scan) -> Route:
    """Steps 2 to 9 of the card, on what the scanner noted; ``message_py._classify``'s order."""
    if s.top != V_OBJECT:
        # Step 2: a JSON array is a batch, which MCP does not have.
        if s.top == V_ARRAY:
            return _invalid_request(line, s, None, BATCHING)
        # Step 3: any other non-object.
        return _invalid_request(line, s, None, NOT_AN_OBJECT)
    # Step 4: an id, when present, is an integer orjson keeps as int, or a string.
    id: RequestId | None = None
    if s.id is not None:
        if s.id_value == V_STRING:
            id = _text(s, s.id, s.id_flags)
        elif s.id_value == V_INTEGER:
            id = _integer(s, s.id)
        if id is None:
            return _invalid_request(line, s, None, BAD_ID)
    # Step 5: jsonrpc is exactly the string "2.0".
    if s.jsonrpc is None or not _is_version_2_0(s):
        return _invalid_request(line, s, id, BAD_JSONRPC)
    # Step 6: no method member, but a result or an error: a response.
    if s.method is None and (s.result is not None or s.error_member is not None):
        return _route("response", id, None, None, line, s)
    # Step 7: method is a string.
    if s.method is None or s.method_value != V_STRING:
        return _invalid_request(line, s, id, BAD_METHOD)
    # Step 8: params, when present, is an object; a notification is never answered.
    if s.params is not None and s.params_value != V_OBJECT and id is not None:
        return _refused(line, s, _build(InvalidParams, (BAD_PARAMS,)), id)
    # Step 9: with an id a request, without one a notification.
    method = _text(s, s.method, s.method_flags)
    if id is None:
        return _route("notification", None, method, None, line, s)
    return _route("request", id, method, None, line, s)


def _routable(line: object) -> bytes | str:
    """An immutable copy of what the decoder would read: bytes, or a str (see parse)."""
    if isinstance(line, str):
        return str.__str__(line)
    if isinstance(line, bytes | bytearray):
        return bytes(memoryview(line))  # the buffer, not overridable methods
    if isinstance(line, memoryview):
        return line.tobytes()  # in C order: the bytes orjson reads from a contiguous view
    raise TypeError(
        f"route() takes str, bytes, bytearray or memoryview, not {type(line).__name__}"
    )
