"""Helpers shared by the tests: describe a result field by field, build expectations.

Results of the two implementations are different classes, so they are never compared
with ``==`` across implementations; ``describe`` turns either into plain data (kind name,
each field with its type, the error's class name, code, message and reason).
"""

from __future__ import annotations

from typing import Any

import orjson

# The reasons a refusal names, as literal text: a change to the wording must be deliberate.
NOT_AN_OBJECT = "a message must be a JSON object"
BATCHING = "batching is not supported"
BAD_ID = "id must be an integer or a string"
BAD_JSONRPC = 'jsonrpc must be "2.0"'
BAD_METHOD = "method must be a string"
BAD_PARAMS = "params must be an object"

ERRORS = {
    "ParseError": (-32700, "Parse error"),
    "InvalidRequest": (-32600, "Invalid Request"),
    "InvalidParams": (-32602, "Invalid params"),
}

# Marks an expected ParseError whose reason is the decoder's message for that very input
# (rpcline's own for text that is not UTF-8: see parse_reason).
DECODER = object()


def typed(value: object) -> tuple[str, object]:
    """A value with its type's name, so that 1, "1", True and 1.0 stay apart."""
    return (type(value).__name__, value)


def describe(result: object) -> dict[str, Any]:
    """Plain data for a result of either implementation."""
    kind = type(result).__name__
    if kind == "Request":
        return {
            "kind": kind,
            "id": typed(result.id),
            "method": typed(result.method),
            "params": typed(result.params),
        }
    if kind == "Notification":
        return {"kind": kind, "method": typed(result.method), "params": typed(result.params)}
    if kind == "ClientResponse":
        return {"kind": kind, "id": typed(result.id), "body": typed(result.body)}
    if kind == "Refused":
        error = result.error
        return {
            "kind": kind,
            "id": typed(result.id),
            "error": type(error).__name__,
            "code": error.code,
            "message": error.message,
            "reason": typed(error.reason),
        }
    raise AssertionError(f"parse returned a {kind}: {result!r}")


def request(id: object, method: str = "m", params: dict | None = None) -> dict[str, Any]:
    return {
        "kind": "Request",
        "id": typed(id),
        "method": typed(method),
        "params": typed({} if params is None else params),
    }


def notification(method: str = "m", params: dict | None = None) -> dict[str, Any]:
    return {
        "kind": "Notification",
        "method": typed(method),
        "params": typed({} if params is None else params),
    }


def response(id: object, body: dict) -> dict[str, Any]:
    return {"kind": "ClientResponse", "id": typed(id), "body": typed(body)}


def refused(id: object, error: str, reason: object) -> dict[str, Any]:
    code, message = ERRORS[error]
    return {
        "kind": "Refused",
        "id": typed(id),
        "error": error,
        "code": code,
        "message": message,
        "reason": reason if reason is DECODER else typed(reason),
    }


def parse_error() -> dict[str, Any]:
    """Refused(None, ParseError) with the decoder's own message."""
    return refused(None, "ParseError", DECODER)


def decoder_message(data: object) -> str:
    """``str()`` of the JSONDecodeError orjson raises for ``data`` (it must raise)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        return str(error)
    raise AssertionError(f"orjson accepted {data!r} as {value!r}")


def parse_reason(data: object) -> str:
    """The reason of parse's ParseError for input the decoder refuses: the decoder's message,
    except for text that is not UTF-8 (orjson says "surrogates not allowed" for any bad
    byte), where parse names the first bad byte of bytes, or surrogate of a str, as route
    does. Computed here with Python's own codecs, not with rpcline's function."""
    message = decoder_message(data)
    if not message.startswith("str is not valid UTF-8"):
        return message
    try:
        data.encode() if isinstance(data, str) else bytes(data).decode()
    except UnicodeEncodeError as error:
        return f"str is not valid UTF-8: a surrogate at char {error.start}"
    except UnicodeDecodeError as error:
        return f"invalid UTF-8 at byte {error.start}"
    return message


def resolve(expected: dict[str, Any], data: object) -> dict[str, Any]:
    """Fill in the decoder's message (parse_reason) where the expectation says DECODER."""
    if expected.get("reason") is DECODER:
        return {**expected, "reason": typed(parse_reason(data))}
    return expected
