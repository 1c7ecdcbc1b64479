"""The pure-Python twin of ``message_c.pyx``: the card's nine rules, same names, same order.

It is the typing source for the facade and the fallback where the extension is absent.
Results are records, not tuples: the core's are not sequences either, so ``json.dumps``,
``len`` and indexing treat a result alike in both. ``parse`` fills a record's one slot
directly (``_build``), as the core skips ``__init__``; a constructor called by hand
checks its arguments, in the core's words (``shared.bind``).
"""

from __future__ import annotations

from inspect import Parameter, Signature  # orjson loads inspect anyway
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeAlias

import orjson

from rpcline._core.shared import (
    BAD_ID,
    BAD_JSONRPC,
    BAD_METHOD,
    BAD_PARAMS,
    BATCHING,
    NOT_AN_OBJECT,
    NOT_UTF8,
    RequestId,
    bind,
    utf8_reason,
    wrong_type,
)

__all__ = (
    "ClientResponse",
    "Incoming",
    "InvalidParams",
    "InvalidRequest",
    "Notification",
    "ParseError",
    "ProtocolError",
    "Refused",
    "Request",
    "RequestId",
    "error_response",
    "id_json",
    "parse",
)


_object_new = object.__new__
_loads = orjson.loads
_DecodeError = orjson.JSONDecodeError


class _Record:
    """An immutable record: equal only to a record of the same class with equal fields.

    Its fields live in one tuple slot, set once by ``_build``: one slot to fill costs
    ``parse`` a fraction of what a slot per field would, and the fields are properties.
    """

    __slots__ = ("_values",)
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _values: tuple[Any, ...]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for at, name in enumerate(cls.__match_args__):
            setattr(cls, name, property(_field(at), doc=f"The {name!r} field."))
        # For inspect.signature: the fields, as the core's class docstrings give them
        # (constructors take *args, to word their own TypeErrors).
        kind = Parameter.POSITIONAL_OR_KEYWORD
        setattr(cls, "__signature__",
                Signature([Parameter(name, kind) for name in cls.__match_args__]))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} objects are immutable")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return tuple(map(_typed, self._values)) == tuple(map(_typed, other._values))

    def __hash__(self) -> int:
        return hash((type(self), self._values))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self.__match_args__, self._values))
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._values)


def _field(at: int) -> Any:
    return lambda record: record._values[at]


_set_values = vars(_Record)["_values"].__set__  # the slot's own setter: no __setattr__


def _build(cls: Any, fields: tuple[Any, ...]) -> Any:
    """A record of ``cls`` holding ``fields``, unchecked: what parse and the other twins
    build results with (the core's counterpart skips ``__init__``)."""
    record = _object_new(cls)
    _set_values(record, fields)
    return record


def _typed(value: object) -> object:
    # 1 and "1" differ anyway; this keeps 1 apart from True and 1.0 where records compare.
    return (type(value), value)


class ProtocolError(_Record):
    """A JSON-RPC protocol error: a value to answer with, not an exception."""

    __slots__ = ()
    __match_args__ = ("reason",)
    code: ClassVar[int]
    message: ClassVar[str]
    if TYPE_CHECKING:
        @property
        def reason(self) -> str: ...

        def __new__(cls, reason: str) -> ProtocolError: ...
    else:

        def __new__(cls, *args, **kwargs):
            if cls is ProtocolError:
                raise TypeError("ProtocolError is abstract; use one of its subclasses")
            (reason,) = bind(cls.__name__, ProtocolError.__match_args__, args, kwargs)
            if not isinstance(reason, str):
                raise wrong_type(cls.__name__, "reason", "str", reason)
            return _build(cls, (reason,))

    def to_json(self) -> dict[str, object]:
        """The JSON-RPC ``error`` member: ``{"code": …, "message": …, "data": reason}``."""
        return {"code": self.code, "message": self.message, "data": self.reason}


class ParseError(ProtocolError):
    """The line is not JSON (-32700)."""

    __slots__ = ()
    code = -32700
    message = "Parse error"


class InvalidRequest(ProtocolError):
    """The line is JSON but no valid JSON-RPC message (-32600)."""

    __slots__ = ()
    code = -32600
    message = "Invalid Request"


class InvalidParams(ProtocolError):
    """A request whose params is not an object (-32602)."""

    __slots__ = ()
    code = -32602
    message = "Invalid params"


class Request(_Record):
    """A call to answer: ``id`` is the exact decoded ``int`` or ``str``."""

    __slots__ = ()
    __match_args__ = ("id", "method", "params")
    if TYPE_CHECKING:
        @property
        def id(self) -> RequestId: ...

        @property
        def method(self) -> str: ...

        @property
        def params(self) -> dict[str, Any]: ...

        def __new__(cls, id: RequestId, method: str, params: dict[str, Any]) -> Request: ...
    else:

        def __new__(cls, *args, **kwargs):
            id, method, params = bind("Request", Request.__match_args__, args, kwargs)
            id_json(id)  # refuses what is no id
            if not isinstance(method, str):
                raise wrong_type("Request", "method", "str", method)
            if not isinstance(params, dict):
                raise wrong_type("Request", "params", "dict", params)
            return _build(cls, (id, method, params))


class Notification(_Record):
    """A message never answered; ``params`` is ``{}`` when absent or not an object."""

    __slots__ = ()
    __match_args__ = ("method", "params")
    if TYPE_CHECKING:
        @property
        def method(self) -> str: ...

        @property
        def params(self) -> dict[str, Any]: ...

        def __new__(cls, method: str, params: dict[str, Any]) -> Notification: ...
    else:

        def __new__(cls, *args, **kwargs):
            method, params = bind("Notification", Notification.__match_args__, args, kwargs)
            if not isinstance(method, str):
                raise wrong_type("Notification", "method", "str", method)
            if not isinstance(params, dict):
                raise wrong_type("Notification", "params", "dict", params)
            return _build(cls, (method, params))


class ClientResponse(_Record):
    """A response (it has ``result`` or ``error``); ``id`` is ``None`` when absent."""

    __slots__ = ()
    __match_args__ = ("id", "body")
    if TYPE_CHECKING:
        @property
        def id(self) -> RequestId | None: ...

        @property
        def body(self) -> dict[str, Any]: ...

        def __new__(cls, id: RequestId | None, body: dict[str, Any]) -> ClientResponse: ...
    else:

        def __new__(cls, *args, **kwargs):
            id, body = bind("ClientResponse", ClientResponse.__match_args__, args, kwargs)
            if id is not None:
                id_json(id)
            if not isinstance(body, dict):
                raise wrong_type("ClientResponse", "body", "dict", body)
            return _build(cls, (id, body))

    @property
    def result(self) -> Any:
        """The ``result`` member as decoded, or ``None`` when there is none."""
        return self.body.get("result")

    @property
    def error(self) -> Any:
        """The ``error`` member as decoded (the peer's, any JSON value: not a
        ``ProtocolError``), or ``None`` when there is none."""
        return self.body.get("error")


class Refused(_Record):
    """A line that breaks the protocol, with the error to answer and the id to answer it with."""

    __slots__ = ()
    __match_args__ = ("id", "error")
    if TYPE_CHECKING:
        @property
        def id(self) -> RequestId | None: ...

        @property
        def error(self) -> ProtocolError: ...

        def __new__(cls, id: RequestId | None, error: ProtocolError) -> Refused: ...
    else:

        def __new__(cls, *args, **kwargs):
            id, error = bind("Refused", Refused.__match_args__, args, kwargs)
            if id is not None:
                id_json(id)
            if not isinstance(error, ProtocolError):
                raise wrong_type("Refused", "error", "ProtocolError", error)
            return _build(cls, (id, error))


Incoming: TypeAlias = Request | Notification | ClientResponse | Refused

_ABSENT: Final = object()


def parse(line: str | bytes | bytearray | memoryview) -> Incoming:
    """Classify one line; never raises for text or bytes, ``TypeError`` for anything else."""
    kind = type(line)
    if kind is not bytes and kind is not str:
        line = _decodable(line)
    # Step 1: decode; failure is Refused(None, ParseError(reason)).
    try:
        message = _loads(line)
    except _DecodeError as error:
        return _build(Refused, (None, _build(ParseError, (_decode_reason(line, error),))))
    return _classify(message)


def _decode_reason(line: str | bytes | bytearray | memoryview, error: Exception) -> str:
    """The decoder's message, but route's ("invalid UTF-8 at byte N") for text that is not
    UTF-8: orjson says "surrogates not allowed" for any bad byte, and names no offset."""
    reason = str(error)
    if reason.startswith(NOT_UTF8):
        return utf8_reason(line) or reason
    return reason


def _classify(message: object) -> Incoming:
    """Steps 2 to 9 of the card, on an object as ``orjson.loads`` returns it."""
    if type(message) is not dict:
        # Step 2: a JSON array is a batch, which MCP does not have.
        if type(message) is list:
            return _build(Refused, (None, _build(InvalidRequest, (BATCHING,))))
        # Step 3: any other non-object.
        return _build(Refused, (None, _build(InvalidRequest, (NOT_AN_OBJECT,))))
    # Step 4: an id, when present, is an exact int or str (bool, float and null are not).
    id = message.get("id", _ABSENT)
    if id is _ABSENT:
        id = None
    elif type(id) is not int and type(id) is not str:
        return _build(Refused, (None, _build(InvalidRequest, (BAD_ID,))))
    # Step 5: jsonrpc is exactly the string "2.0".
    if message.get("jsonrpc") != "2.0":  # the decoder makes no str subclasses
        return _build(Refused, (id, _build(InvalidRequest, (BAD_JSONRPC,))))
    # Step 6: no method member, but a result or an error: a response.
    method = message.get("method", _ABSENT)
    if method is _ABSENT and ("result" in message or "error" in message):
        response = _object_new(ClientResponse)  # _build's work, without its frame
        _set_values(response, (id, message))
        return response
    # Step 7: method is a string.
    if type(method) is not str:
        return _build(Refused, (id, _build(InvalidRequest, (BAD_METHOD,))))
    # Step 8: params, when present, is an object; a notification is never answered.
    params = message.get("params", _ABSENT)
    if type(params) is not dict:
        if params is not _ABSENT and id is not None:
            return _build(Refused, (id, _build(InvalidParams, (BAD_PARAMS,))))
        params = {}
    # Step 9: with an id a request, without one a notification.
    if id is None:
        notification = _object_new(Notification)
        _set_values(notification, (method, params))
        return notification
    request = _object_new(Request)
    _set_values(request, (id, method, params))
    return request


def _decodable(line: object) -> str | bytes | bytearray | memoryview:
    """Hand the decoder a type it accepts: base types for subclasses, contiguous views."""
    if isinstance(line, memoryview):
        return line if line.c_contiguous else line.tobytes()
    if type(line) is bytearray:
        return line
    if isinstance(line, bytearray | bytes):
        return bytes(memoryview(line))  # the buffer, not overridable methods
    if isinstance(line, str):
        return str.__str__(line)
    raise TypeError(
        f"parse() takes str, bytes, bytearray or memoryview, not {type(line).__name__}"
    )


def id_json(id: object) -> RequestId:
    """The JSON value to echo for an id: the exact ``int`` or ``str`` (a ``bool`` is none)."""
    if type(id) is int or type(id) is str:
        return id  # type: ignore[return-value]
    raise TypeError(f"a request id is an int or a str, not {type(id).__name__}")


def error_response(refused: Refused) -> bytes:
    """The compact JSON-RPC error response for a refusal; ``"id": null`` when it has none."""
    if type(refused) is not Refused:
        raise TypeError(f"error_response() takes a Refused, not {type(refused).__name__}")
    id = refused.id
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": None if id is None else id_json(id),
            "error": refused.error.to_json(),
        }
    )
