"""Server-Sent Events framing for Streamable HTTP responses: bytes in, classified messages out.

    from rpcline import sse
    parser = sse.EventStreamParser(max_event_bytes=16 * 1024 * 1024, classify=rpcline.parse)
    for event in parser.feed(chunk):     # .event, .id, .retry, .message (classify's result)
        ...
    sse.encode(message_bytes, event="message", id=None) -> bytes

The framing is WHATWG HTML's "Interpreting an event stream" (``sse_py`` says how). The
Cython core is used when the rest of the package uses it (``rpcline.IMPLEMENTATION``), so
``classify`` defaults to the same implementation's ``parse``: ``rpcline.parse``.
"""

from __future__ import annotations

from rpcline._core.sse import Event, EventStreamParser
from rpcline._core.sse_shared import DEFAULT_MAX_EVENT_BYTES, encode

__all__ = ("DEFAULT_MAX_EVENT_BYTES", "Event", "EventStreamParser", "encode")


def __dir__() -> list[str]:
    """The public names only, as ``dir(rpcline)`` gives them (imports stay out of sight)."""
    return sorted(__all__)
