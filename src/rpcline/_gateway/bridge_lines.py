"""The lines ``rpcline.bridge`` makes or changes itself: everything else is forwarded as bytes.

A request is written to a shared child with an id of the child's own (``Route.with_id``,
spliced, not re-encoded). Only a request that asks for progress is decoded and re-encoded:
its ``params._meta.progressToken`` must be unique on the child too, or two callers' progress
would be told apart by nothing. Whether it asks is read from what its ``params`` are, decoded
as the child's parser decodes them (an escaped key is the same key), never from its bytes.
The rest are the bridge's own lines: answers to what a shared child cannot ask a caller,
cancellations, its own handshake.
"""

from __future__ import annotations

from typing import Any, Final

import orjson

from rpcline._core.route import Route
from rpcline._core.shared import RequestId
from rpcline._gateway.pending import request_id

METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
PROGRESS: Final = "notifications/progress"
BAD_TOKEN: Final = "params._meta.progressToken must be an integer or a string"
# What the 2026-07-28 wire answers with which HTTP status (the SDK's ERROR_CODE_HTTP_STATUS).
ERROR_STATUS: Final = {-32700: 400, -32600: 400, -32602: 400, -32020: 400, -32021: 400,
                       -32022: 400, -32601: 404}  # fmt: skip
SHARED: Final = ("rpcline serve shares this server among its clients: it cannot tell which "
                 "client to ask")


def with_child_ids(r: Route, child_id: int) -> tuple[bytes, Any] | None:
    """The request's line for the child and the caller's progress token (None: it asks for
    no progress), or None when its token cannot be carried: one that is not an integer or
    a string (a float or a bool, which the SDK's servers coerce to a number that may be
    another call's) is refused, as is any other that could not be rewritten.

    A token the caller chose is replaced by ``child_id``: the child's progress for it then
    names the call it belongs to, and nobody else's.
    """
    line = r.line
    assert type(line) is bytes
    meta = _meta(line, r.params_span)
    if meta is None or meta.get("progressToken") is None:
        return r.with_id(child_id), None
    token = meta["progressToken"]
    if request_id(token) is None:
        return None
    message = orjson.loads(line)  # re-encoded whole: the child sees one _meta, the bridge's
    message["params"]["_meta"]["progressToken"] = child_id
    message["id"] = child_id
    return orjson.dumps(message), token


def _meta(line: bytes, params: tuple[int, int] | None) -> dict[str, Any] | None:
    """``params._meta`` of a routed line, decoded (escapes, duplicates: the last wins, as in
    every JSON parser a child runs), or None when it is not an object."""
    if params is None:
        return None
    decoded = orjson.loads(memoryview(line)[params[0]:params[1]])  # route validated it
    meta = decoded.get("_meta") if type(decoded) is dict else None
    return meta if type(meta) is dict else None


def param(line: bytes, name: str) -> Any:
    """``params[name]`` of a (small) line, or None."""
    try:
        params = orjson.loads(line).get("params")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return params.get(name) if type(params) is dict else None


def progress_token(line: bytes) -> Any:
    """The ``progressToken`` of a child's ``notifications/progress`` (an int or str), or None."""
    return request_id(param(line, "progressToken"))


def with_token(line: bytes, token: Any) -> bytes:
    """A child's progress notification with the caller's own token put back."""
    message = orjson.loads(line)
    message["params"]["progressToken"] = token
    return orjson.dumps(message)


def cancelled(child_id: int, reason: str) -> bytes:
    """The ``notifications/cancelled`` that tells a child its caller no longer waits."""
    return orjson.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                         "params": {"requestId": child_id, "reason": reason}})


def cancelled_request(line: bytes) -> Any:
    """The ``requestId`` a caller's ``notifications/cancelled`` names, or None."""
    return request_id(param(line, "requestId"))


def answer_child_request(r: Route) -> bytes:
    """What the bridge answers a shared child's own request: ``ping`` is answered, any
    other (sampling, elicitation, roots) is -32601, as no caller can be asked."""
    if r.method == "ping":
        return orjson.dumps({"jsonrpc": "2.0", "id": r.id, "result": {}})
    return orjson.dumps({"jsonrpc": "2.0", "id": r.id, "error": {
        "code": METHOD_NOT_FOUND, "message": f"Method not found: {r.method}", "data": SHARED}})


def request(child_id: int, method: str, params: dict[str, Any]) -> bytes:
    """A request of the bridge's own (its handshake with a child)."""
    return orjson.dumps({"jsonrpc": "2.0", "id": child_id, "method": method, "params": params})


def result(id: RequestId | None, value: Any) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "result": value})


def error(id: RequestId | None, code: int, message: str) -> bytes:
    return orjson.dumps({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})


def notification(method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return orjson.dumps(message)


def error_status(r: Route) -> int:
    """The HTTP status of a 2026-07-28 answer sent as JSON: 200, or the error's table entry."""
    span = r.error_span
    if span is None:
        return 200
    line = r.line
    assert type(line) is bytes
    try:
        error = orjson.loads(line[span[0]:span[1]])
    except orjson.JSONDecodeError:
        return 200
    code = error.get("code") if type(error) is dict else None
    return ERROR_STATUS.get(code, 200) if type(code) is int else 200


def sse_event(line: bytes) -> bytes:
    """One line as a Server-Sent Events ``message`` event, as the SDK frames them.

    JSON may hold a raw CR as whitespace between tokens, which SSE reads as a line's end;
    inside a string it would be invalid JSON, so each one is whitespace: a space does."""
    if b"\r" in line:
        line = line.replace(b"\r", b" ")
    return b"event: message\r\ndata: " + line + b"\r\n\r\n"
