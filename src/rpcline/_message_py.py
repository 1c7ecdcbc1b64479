"""The pure-Python twin of ``_message_c.pyx``: the card's nine rules, same names, same order.

It is the typing source for the facade and the fallback where the extension is absent.
Result objects are tuple subclasses: ``tuple.__new__`` is the cheapest immutable object
CPython can build from Python code, and this module is judged on speed too.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, ClassVar, Final, TypeAlias

import orjson

from rpcline._scan_py import utf8_reason
from rpcline._shared import (
    BAD_ID,
    BAD_JSONRPC,
    BAD_METHOD,
    BAD_PARAMS,
    BATCHING,
    NOT_AN_OBJECT,
    NOT_UTF8,
    RequestId,
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


_new = tuple.__new__
_loads = orjson.loads
_DecodeError = orjson.JSONDecodeError


class _Record(tuple):  # type: ignore[type-arg]
    """An immutable record: equal only to a record of the same class with equal fields."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            # False, not NotImplemented, for tuples: else tuple.__eq__ would be tried next
            # and a record would equal the plain tuple of its fields.
            return False if isinstance(other, tuple) else NotImplemented
        return tuple(map(_typed, self)) == tuple(map(_typed, other))  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((type(self), tuple.__hash__(self)))

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={v!r}" for n, v in zip(self.__match_args__, self))
        return f"{type(self).__name__}({fields})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), tuple(self))

    __match_args__: ClassVar[tuple[str, ...]] = ()


def _typed(value: object) -> object:
    # 1 and "1" differ anyway; this keeps 1 apart from True and 1.0 where records compare.
    return (type(value), value)


class ProtocolError(_Record):
    """A JSON-RPC protocol error: a value to answer with, not an exception."""

    __slots__ = ()
    __match_args__ = ("reason",)
    code: ClassVar[int]
    message: ClassVar[str]

    def __new__(cls, reason: str) -> ProtocolError:
        if cls is ProtocolError:
            raise TypeError("ProtocolError is abstract; use one of its subclasses")
        return _new(cls, (reason,))

    reason: str = property(itemgetter(0))  # type: ignore[assignment]

    def to_json(self) -> dict[str, object]:
        """The JSON-RPC ``error`` member: ``{"code": …, "message": …, "data": reason}``."""
        return {"code": self.code, "message": self.message, "data": self[0]}


class ParseError(ProtocolError):
    __slots__ = ()
    code = -32700
    message = "Parse error"


class InvalidRequest(ProtocolError):
    __slots__ = ()
    code = -32600
    message = "Invalid Request"


class InvalidParams(ProtocolError):
    __slots__ = ()
    code = -32602
    message = "Invalid params"


class Request(_Record):
    """A call to answer: ``id`` is the exact decoded ``int`` or ``str``."""

    __slots__ = ()
    __match_args__ = ("id", "method", "params")

    def __new__(cls, id: RequestId, method: str, params: dict[str, Any]) -> Request:
        id_json(id)  # refuses what is no id (parse builds results with tuple.__new__)
        return _new(cls, (id, method, params))

    id: RequestId = property(itemgetter(0))  # type: ignore[assignment]
    method: str = property(itemgetter(1))  # type: ignore[assignment]
    params: dict[str, Any] = property(itemgetter(2))  # type: ignore[assignment]


class Notification(_Record):
    """A message never answered; ``params`` is ``{}`` when absent or not an object."""

    __slots__ = ()
    __match_args__ = ("method", "params")

    def __new__(cls, method: str, params: dict[str, Any]) -> Notification:
        return _new(cls, (method, params))

    method: str = property(itemgetter(0))  # type: ignore[assignment]
    params: dict[str, Any] = property(itemgetter(1))  # type: ignore[assignment]


class ClientResponse(_Record):
    """A response (it has ``result`` or ``error``); ``id`` is ``None`` when absent."""

    __slots__ = ()
    __match_args__ = ("id", "body")

    def __new__(cls, id: RequestId | None, body: dict[str, Any]) -> ClientResponse:
        if id is not None:
            id_json(id)
        return _new(cls, (id, body))

    id: RequestId | None = property(itemgetter(0))  # type: ignore[assignment]
    body: dict[str, Any] = property(itemgetter(1))  # type: ignore[assignment]

    @property
    def result(self) -> Any:
        """The ``result`` member as decoded, or ``None`` when there is none."""
        return self[1].get("result")

    @property
    def error(self) -> Any:
        """The ``error`` member as decoded (the peer's, any JSON value: not a
        ``ProtocolError``), or ``None`` when there is none."""
        return self[1].get("error")


class Refused(_Record):
    """A line that breaks the protocol, with the error to answer and the id to answer it with."""

    __slots__ = ()
    __match_args__ = ("id", "error")

    def __new__(cls, id: RequestId | None, error: ProtocolError) -> Refused:
        if id is not None:
            id_json(id)
        return _new(cls, (id, error))

    id: RequestId | None = property(itemgetter(0))  # type: ignore[assignment]
    error: ProtocolError = property(itemgetter(1))  # type: ignore[assignment]


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
        return _new(Refused, (None, _new(ParseError, (_decode_reason(line, error),))))
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
            return _new(Refused, (None, _new(InvalidRequest, (BATCHING,))))
        # Step 3: any other non-object.
        return _new(Refused, (None, _new(InvalidRequest, (NOT_AN_OBJECT,))))
    # Step 4: an id, when present, is an exact int or str (bool, float and null are not).
    id = message.get("id", _ABSENT)
    if id is _ABSENT:
        id = None
    elif type(id) is not int and type(id) is not str:
        return _new(Refused, (None, _new(InvalidRequest, (BAD_ID,))))
    # Step 5: jsonrpc is exactly the string "2.0".
    if message.get("jsonrpc") != "2.0":  # the decoder makes no str subclasses
        return _new(Refused, (id, _new(InvalidRequest, (BAD_JSONRPC,))))
    # Step 6: no method member, but a result or an error: a response.
    method = message.get("method", _ABSENT)
    if method is _ABSENT and ("result" in message or "error" in message):
        return _new(ClientResponse, (id, message))
    # Step 7: method is a string.
    if type(method) is not str:
        return _new(Refused, (id, _new(InvalidRequest, (BAD_METHOD,))))
    # Step 8: params, when present, is an object; a notification is never answered.
    params = message.get("params", _ABSENT)
    if type(params) is not dict:
        if params is not _ABSENT and id is not None:
            return _new(Refused, (id, _new(InvalidParams, (BAD_PARAMS,))))
        params = {}
    # Step 9: with an id a request, without one a notification.
    if id is None:
        return _new(Notification, (method, params))
    return _new(Request, (id, method, params))


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
    id = refused[0]
    return orjson.dumps(
        {
            "jsonrpc": "2.0",
            "id": None if id is None else id_json(id),
            "error": refused[1].to_json(),
        }
    )
