"""What the Server-Sent Events core (``sse_c``) and its twin (``sse_py``) share: the limits,
the texts, and ``encode``, which writes events (one function for both: it is not a hot path).

It imports nothing of rpcline, so either implementation takes these without loading the other.
"""

from __future__ import annotations

from typing import Final

__all__ = ("DATA_PREFIX", "DEFAULT_MAX_EVENT_BYTES", "EVENT_TOO_LONG", "encode")

DEFAULT_MAX_EVENT_BYTES: Final = 16 * 1024 * 1024
EVENT_TOO_LONG: Final = "event exceeds {limit} bytes"
# A pending line may hold its field name before the value the limit counts.
DATA_PREFIX: Final = b"data: "


def encode(
    message: bytes | bytearray | memoryview | str, event: str = "message", id: str | None = None
) -> bytes:
    """``message`` as one SSE event, in the form the MCP SDK's server writes (sse-starlette).

    Fields in its order, ``id`` (when given), ``event``, then one ``data`` line per line of
    the message (split at CRLF, CR or LF, which the reader joins with LF), each line and the
    event ended with CRLF. A type or id holding CR or LF (it would end its line) or an id
    holding NUL (the reader would ignore it) is a ``ValueError``. A ``str`` is encoded as
    UTF-8, as ``parse`` reads one (a lone surrogate is a ``ValueError``).
    """
    if isinstance(message, str):
        message = message.encode()  # UnicodeEncodeError, a ValueError, names the surrogate
    elif not isinstance(message, bytes | bytearray | memoryview):
        raise TypeError(
            f"encode() takes str, bytes, bytearray or memoryview, not {type(message).__name__}"
        )
    head = b""
    if id is not None:
        if "\r" in id or "\n" in id or "\0" in id:
            raise ValueError(f"an event id cannot hold CR, LF or NUL: {id!r}")
        head = b"id: " + id.encode() + b"\r\n"
    if "\r" in event or "\n" in event:
        raise ValueError(f"an event type cannot hold CR or LF: {event!r}")
    head += b"event: message\r\n" if event == "message" else b"event: " + event.encode() + b"\r\n"
    data = bytes(message)
    if b"\r" in data or b"\n" in data:
        data = b"\r\ndata: ".join(data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n"))
    return head + b"data: " + data + b"\r\n\r\n"
