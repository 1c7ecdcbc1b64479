"""``rpcline serve --log-format json``: every line this process writes to stderr, one JSON
object a line.

``sys.stderr`` is replaced by a ``JsonLines`` writer before anything logs, so the gateway's
own lines (``rpcline serve: ...``), the children's prefixed ones (``[NAME ERA-N PID] ...``,
written to ``sys.stderr.buffer``), uvicorn's and any traceback all go through it: each
whole line becomes ``{"time", "source", "message"}`` (``source``: ``rpcline`` or the child's
prefix, else ``stderr``), with ``trace_id`` and ``span_id`` of the SERVER span of the call
the line is written for (``--otel``), else of the OpenTelemetry span current. A child run
with ``--child-stderr inherit`` writes to the descriptor itself, past this writer.
"""

from __future__ import annotations

import io
import sys
import time
from typing import Any, BinaryIO, Final

import orjson

from rpcline._gateway.observe import WATCH

OWN: Final = "rpcline serve: "


def record(line: str) -> bytes:
    """One stderr line as its JSON object (no newline)."""
    source = "stderr"
    if line.startswith(OWN):
        source, line = "rpcline", line[len(OWN):]
    elif line.startswith("[") and "] " in line:
        label, _, line = line[1:].partition("] ")
        source = label
    now = time.time()
    found: dict[str, Any] = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z",
        "source": source, "message": line}
    found.update(_trace_ids())
    return orjson.dumps(found)


def _trace_ids() -> dict[str, str]:
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:  # nothing traces: nothing imported it
        return {}
    # The call this task serves (the bridge's WATCH): its SERVER span, never made current
    # (that would cost each call an attach and a detach); else a library's current span.
    watch = WATCH.get()
    span = None if watch is None else getattr(watch.ctx, "otel_server", None)
    if span is None:
        span = trace.get_current_span()
    context = span.get_span_context()
    if not context.is_valid:
        return {}
    return {"trace_id": f"{context.trace_id:032x}", "span_id": f"{context.span_id:016x}"}


class _Lines(io.RawIOBase):
    """Bytes in, whole lines out as JSON objects to ``out``."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.pending = b""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        data = bytes(data)
        *whole, self.pending = (self.pending + data).split(b"\n")
        if whole:
            self.out.write(b"".join(record(line.decode("utf-8", "replace")) + b"\n"
                                    for line in whole))
            self.out.flush()
        return len(data)

    def flush(self) -> None:
        if self.pending:
            self.write(b"\n")


class JsonLines(io.TextIOWrapper):
    """A text stream (``sys.stderr``) whose lines, and its ``buffer``'s, become JSON."""

    def __init__(self, out: BinaryIO) -> None:
        super().__init__(io.BufferedWriter(_Lines(out)), encoding="utf-8",  # type: ignore[arg-type]
                         errors="backslashreplace", line_buffering=True, write_through=True)

    def write(self, text: str) -> int:
        written = super().write(text)
        self.buffer.flush()
        return written


def install() -> None:
    """Every later write to ``sys.stderr`` (text or bytes) becomes JSON lines."""
    sys.stderr = JsonLines(sys.stderr.buffer)
