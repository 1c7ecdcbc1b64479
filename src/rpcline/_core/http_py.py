"""The pure-Python twin of ``http_c.pyx``: ``check_request``, the MCP 2026-07-28 HTTP ladder.

A stateless Streamable HTTP server must check every POST against its own headers before
dispatching it. The official SDK (``mcp`` 2.3, ``mcp/server/_streamable_http_modern.py``)
decodes the body with ``json.loads``, validates it with pydantic, then runs
``find_duplicated_routing_header``, ``classify_inbound_request`` and
``validate_mcp_param_headers``. ``check_request`` gives the same verdict in the same order
from ``route`` (which validates the whole body exactly as orjson would and reads its
top-level id, jsonrpc and method) and reads only what the rungs need inside ``params``:
``name`` or ``uri``, two ``_meta`` members, and the argument paths that ``Mcp-Param-*``
headers mirror. Those are found by ``_members``, a skipper that may trust its input since
``route`` has validated it; decoding stays orjson's, or ``int``/``float`` of a number's
text, which is what ``json.loads`` gives (orjson turns integers beyond 64 bits into
floats, and an argument compared with a header must be exact).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final, Self

import orjson

from rpcline._core import json_walk
from rpcline._core.http_schema import (
    ABSENT,
    UNRENDERABLE,
    ParamHeaders,
    compiled,
    decode_header_value,
    json_text,
    strings,
    tools_mapping,
)
from rpcline._core.http_shared import (
    ACCEPTED,
    BAD_REQUEST,
    DUPLICATED,
    METHOD_HEADER,
    METHOD_MISMATCH,
    MISSING_META,
    NAME_BEARING,
    NAME_HEADER,
    NAME_MISMATCH,
    NO_META,
    OK,
    POSTED_RESPONSE,
    ROUTING_HEADERS,
    UNSUPPORTED,
    VERSIONS,
    VERSION_HEADER,
    VERSION_MISMATCH,
    VERSION_NOT_STRING,
)
from rpcline._core.message_py import (
    BAD_PARAMS,
    BATCHING,
    NOT_AN_OBJECT,
    InvalidParams,
    InvalidRequest,
    ParseError,
    ProtocolError,
    RequestId,
    _build,
    _Record,
)
from rpcline._core.route_py import Route, _routed
from rpcline._core.scan_py import (
    CAPABILITIES_KEY,
    N_ARGUMENTS,
    N_CAPABILITIES,
    N_META,
    N_NAME,
    N_URI,
    N_VERSION,
    V_OBJECT,
    V_STRING,
    VERSION_KEY,
    Noted,
    Span,
    _Scan,
)
from rpcline._core.scan_py import _text as _string_at

__all__ = (
    "HeaderMismatch",
    "ParamHeaders",
    "UnsupportedProtocolVersion",
    "Verdict",
    "check_request",
)

_new = _build  # the twin's results are slotted records, built unchecked here too
_loads = orjson.loads


class HeaderMismatch(ProtocolError):
    """An HTTP header disagrees with the body it mirrors, or is sent twice (MCP -32020)."""

    __slots__ = ()
    code = -32020
    message = "Header mismatch"


class UnsupportedProtocolVersion(ProtocolError):
    """A protocol version the server does not serve (MCP -32022).

    Its ``data`` is the spec's ``{"supported": [...], "requested": ...}``, which a client
    reads to pick a version it shares with the server, so ``to_json`` gives that rather
    than the reason.
    """

    __slots__ = ()
    __match_args__ = ("reason", "supported", "requested")
    code = -32022
    message = "Unsupported protocol version"
    if TYPE_CHECKING:
        @property
        def supported(self) -> tuple[str, ...]: ...

        @property
        def requested(self) -> str: ...

    def __new__(cls, reason: str, supported: Iterable[str], requested: str) -> Self:
        return _new(cls, (reason, tuple(supported), requested))

    def to_json(self) -> dict[str, object]:
        data = {"supported": list(self.supported), "requested": self.requested}
        return {"code": self.code, "message": self.message, "data": data}


class Verdict(_Record):
    """What to do with one POST: ``status`` 200 (dispatch), 202 (acknowledge) or 400.

    ``response`` is the JSON-RPC error response to send with a 400 (carrying the id
    whenever it could be read), else None.
    """

    __slots__ = ()
    __match_args__ = (
        "status",
        "route",
        "name",
        "protocol_version",
        "error",
        "response",
    )
    if TYPE_CHECKING:
        @property
        def status(self) -> int: ...

        @property
        def route(self) -> Route: ...

        @property
        def name(self) -> str | None: ...

        @property
        def protocol_version(self) -> str | None: ...

        @property
        def error(self) -> ProtocolError | None: ...

        @property
        def response(self) -> bytes | None: ...

    def __new__(
        cls, status: int, route: Route, name: str | None, protocol_version: str | None,
        error: ProtocolError | None, response: bytes | None,
    ) -> Self:  # fmt: skip
        return _new(cls, (status, route, name, protocol_version, error, response))


# --- headers ------------------------------------------------------------------------------


def _fold(headers: object) -> tuple[dict[str, str], dict[str, None]]:
    """The ``mcp-*`` headers by lowercase name (first value wins), and those sent twice.

    ``headers`` is a mapping or (name, value) pairs, each ``str`` or ``bytes`` (ASGI gives
    lowercase latin-1 bytes). Only ``mcp-*`` names matter to the ladder; first-wins is
    what Starlette's mapping view gives the SDK, and a repeated name is refused anyway
    wherever it matters. The names sent twice come in the order of their second copy,
    so that the first duplicated routing header is the one the SDK names.
    """
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    folded: dict[str, str] = {}
    duplicated: dict[str, None] = {}
    for name, value in pairs:  # type: ignore[attr-defined]
        if type(name) is not str:
            name = _text(name, "name")
        if name[:4].lower() != "mcp-":
            continue
        name = name.lower()
        if type(value) is not str:
            value = _text(value, "value")
        if name in folded:
            duplicated[name] = None
        else:
            folded[name] = value
    return folded, duplicated


def _text(item: object, what: str) -> str:
    if isinstance(item, bytes | bytearray | memoryview):
        return bytes(item).decode(
            "latin-1"
        )  # HTTP field bytes, as Starlette decodes them
    if isinstance(item, str):
        return str.__str__(item)
    raise TypeError(f"a header {what} is str or bytes, not {type(item).__name__}")


# --- reading validated JSON ---------------------------------------------------------------

_FRACTION: Final = re.compile(rb"[.eE]")
# http_c.pyx's _ws, _string_end, _value_end, _members and _string: the twin's are
# json_walk's, shared with tracing.
_string = json_walk.string


def _members(data: bytes, span: Span) -> dict[str, Span]:
    """The value span of each member of the validated object at ``span`` (the last wins)."""
    return dict(json_walk.members(data, span))


def _noted_text(s: _Scan, noted: Noted | None) -> str | None:
    """The str of an inner member the scan noted, None when it is absent or no string."""
    if noted is None or noted[1] != V_STRING:
        return None
    return _string_at(s, noted[0], noted[2])


def _scalar(data: bytes, span: Span) -> object:
    """The argument at ``span`` as ``json.loads`` gives it; ABSENT for null, UNRENDERABLE
    for a container (neither is ever mirrored in a header)."""
    c = data[span[0]]
    if c == 0x22:
        return _string(data, span)
    if c == 0x7B or c == 0x5B:
        return UNRENDERABLE
    if c == 0x6E:
        return ABSENT
    if c == 0x74 or c == 0x66:
        return c == 0x74
    text = data[span[0] : span[1]]
    return float(text) if _FRACTION.search(text) else int(text)


class _Arguments:
    """The ``arguments`` object of a ``tools/call``, read path by path on demand."""

    __slots__ = ("data", "objects", "top")

    def __init__(self, data: bytes, span: Span | None) -> None:
        self.data = data
        self.top = span  # None: absent or null, so every path is ABSENT
        self.objects: dict[int, dict[str, Span]] = {}  # memo: paths share prefixes

    def __call__(self, path: tuple[str, ...]) -> object:
        span = self.top
        data = self.data
        for key in path:
            if span is None or data[span[0]] != 0x7B:
                return ABSENT
            members = self.objects.get(span[0])
            if members is None:
                members = self.objects[span[0]] = _members(data, span)
            span = members.get(key)
        return ABSENT if span is None else _scalar(data, span)


# --- the ladder ---------------------------------------------------------------------------


def _verdict(
    status: int, r: Route, error: ProtocolError | None, id: RequestId | None,
    name: str | None = None, version: str | None = None,
) -> Verdict:  # fmt: skip
    response = None
    if error is not None:
        response = orjson.dumps({"jsonrpc": "2.0", "id": id, "error": _error_member(error)})
    return _new(Verdict, (status, r, name, version, error, response))


def _error_member(error: ProtocolError) -> dict[str, object]:
    """The response's ``error`` as the SDK words it: the detail in ``message`` (a client that
    logs only the message keeps it); "Parse error", and -32022 with its data, as they are."""
    if type(error) is ParseError or type(error) is UnsupportedProtocolVersion:
        return error.to_json()
    return {"code": error.code, "message": error.reason}


def _unsupported(
    requested: str, versions: tuple[str, ...]
) -> UnsupportedProtocolVersion:
    """-32022 for ``requested``, which its response echoes: a header's text (a notification's
    version comes from nothing else), so made encodable (a ``str`` header may hold lone
    surrogates, and a refusal that cannot be sent would be a 500)."""
    requested = json_text(requested)
    return _new(
        UnsupportedProtocolVersion, (UNSUPPORTED.format(requested), versions, requested)
    )


def check_request(
    body: str | bytes | bytearray | memoryview,
    headers: Mapping[Any, Any] | Iterable[tuple[Any, Any]] | None,
    *,
    versions: Iterable[str] = VERSIONS,
    tools: Mapping[str, ParamHeaders | dict[str, Any]] | None = None,
) -> Verdict:
    """The verdict on one POST of MCP 2026-07-28 Streamable HTTP, in the SDK's order.

    ``headers=None`` skips the header rungs (a caller without HTTP headers), as the SDK's
    ``classify_inbound_request(headers=None)`` does. ``versions`` and ``tools`` are what
    ``Guard`` takes (``TypeError`` otherwise); an ``inputSchema`` dict in ``tools`` is
    compiled at each call of its tool, a ``ParamHeaders`` once and for all.
    """
    r, s = _routed(body, True)
    if versions is not VERSIONS:  # a str would be taken as its characters
        versions = strings("versions", versions)
    if tools is not None and type(tools) is not dict:
        tools_mapping(tools)
    kind = r.kind
    error = r.error
    if type(error) is ParseError:
        return _verdict(BAD_REQUEST, r, error, None)
    if headers is not None:
        folded, duplicated = _fold(headers)
    # A JSON object without an id member is a notification POST (JSON-RPC 2.0 section 4.1).
    if r.id_span is None and not (
        type(error) is InvalidRequest and error.reason in (BATCHING, NOT_AN_OBJECT)
    ):
        return _notification(
            r, kind, error, folded if headers is not None else None, versions
        )
    assert s is not None  # the line is JSON
    data: bytes = s.data  # type: ignore[assignment]
    params = r.params_span
    # "params": null is no params to the SDK's model, whose next rungs refuse it anyway.
    null_params = type(error) is InvalidParams and data[params[0]] == 0x6E  # type: ignore[index]
    if kind != "request" and not null_params:
        if kind == "response":  # a client must not POST one
            error = _new(InvalidRequest, (POSTED_RESPONSE,))
        return _verdict(BAD_REQUEST, r, error, r.id)
    id = r.id
    method: str = r.method  # type: ignore[assignment]
    if headers is not None:
        for header in duplicated:
            if header in ROUTING_HEADERS:
                return _verdict(
                    BAD_REQUEST,
                    r,
                    _new(HeaderMismatch, (DUPLICATED.format(header),)),
                    id,
                )
    # The _meta envelope.
    if null_params:
        params = None
    if params is None:
        return _verdict(BAD_REQUEST, r, _new(InvalidParams, (NO_META,)), id)
    inner = s.inner
    meta = inner[N_META]
    if meta is None or meta[1] != V_OBJECT:
        return _verdict(BAD_REQUEST, r, _new(InvalidParams, (NO_META,)), id)
    version_noted = inner[N_VERSION]
    if version_noted is None or inner[N_CAPABILITIES] is None:
        missing = [key for key, at in ((VERSION_KEY, N_VERSION), (CAPABILITIES_KEY, N_CAPABILITIES))
                   if inner[at] is None]  # fmt: skip
        return _verdict(
            BAD_REQUEST,
            r,
            _new(InvalidParams, (MISSING_META.format(", ".join(missing)),)),
            id,
        )
    version = _noted_text(s, version_noted)
    # The mirrored headers; Mcp-Name only where the body has a non-null name.
    name_key = NAME_BEARING.get(method)
    name_noted = None if name_key is None else inner[N_NAME if name_key == "name" else N_URI]
    name_span = None if name_noted is None else name_noted[0]
    name = _noted_text(s, name_noted)
    if headers is not None:
        if version is None or folded.get(VERSION_HEADER) != version:
            return _verdict(
                BAD_REQUEST,
                r,
                _new(HeaderMismatch, (VERSION_MISMATCH,)),
                id,
                name,
                version,
            )
        if folded.get(METHOD_HEADER) != method:
            return _verdict(
                BAD_REQUEST,
                r,
                _new(HeaderMismatch, (METHOD_MISMATCH,)),
                id,
                name,
                version,
            )
        if name_span is not None and data[name_span[0]] != 0x6E:
            sent = folded.get(NAME_HEADER)
            if name is None or sent is None or decode_header_value(sent) != name:
                error = _new(HeaderMismatch, (NAME_MISMATCH.format(name_key),))
                return _verdict(BAD_REQUEST, r, error, id, name, version)
    # The version itself.
    if version is None:
        return _verdict(BAD_REQUEST, r, _new(InvalidParams, (VERSION_NOT_STRING,)), id)
    if version not in versions:
        return _verdict(
            BAD_REQUEST, r, _unsupported(version, versions), id, name, version
        )
    # Mcp-Param-* against the called tool's annotated arguments.
    if (
        headers is not None
        and tools is not None
        and method == "tools/call"
        and name is not None
    ):
        annotations = tools.get(name)
        if annotations is not None:
            if type(annotations) is not ParamHeaders:
                annotations = compiled(name, annotations)
            noted = inner[N_ARGUMENTS]
            arguments = None if noted is None else noted[0]
            if arguments is not None and data[arguments[0]] == 0x6E:
                arguments = None  # null reads as no arguments
            if (
                arguments is None or data[arguments[0]] == 0x7B
            ):  # else not checked, as the SDK
                reason = annotations.mismatch(
                    _Arguments(data, arguments), folded, duplicated
                )
                if reason is not None:
                    return _verdict(
                        BAD_REQUEST,
                        r,
                        _new(HeaderMismatch, (reason,)),
                        id,
                        name,
                        version,
                    )
    return _new(Verdict, (OK, r, name, version, None, None))


def _notification(
    r: Route, kind: str, error: ProtocolError | None, folded: dict[str, str] | None,
    versions: tuple[str, ...],
) -> Verdict:  # fmt: skip
    """A POST without an id: 202 for a notification at a served version, else 400 (id null).

    Only the version header is checked: the spec defines no header rules for notification
    POSTs, and the SDK checks only the one that brought the POST to the 2026 entry.
    """
    if kind == "response":
        return _verdict(BAD_REQUEST, r, _new(InvalidRequest, (POSTED_RESPONSE,)), None)
    if kind != "notification":
        return _verdict(BAD_REQUEST, r, error, None)
    params = r.params_span
    line = r.line
    if params is not None:
        first = (line if type(line) is bytes else line.encode())[params[0]]  # type: ignore[union-attr]
        if first != 0x7B and first != 0x6E:  # null params are no params
            return _verdict(BAD_REQUEST, r, _new(InvalidParams, (BAD_PARAMS,)), None)
    if folded is not None:
        requested = folded.get(VERSION_HEADER, "")
        if requested not in versions:
            return _verdict(BAD_REQUEST, r, _unsupported(requested, versions), None)
    return _new(Verdict, (ACCEPTED, r, None, None, None, None))
