#!/usr/bin/env python3
"""Coverage-guided fuzzing of rpcline's SSE parser with atheris: where a stream is cut, and
which implementation reads it, must change nothing.

Every input goes through ``tests/_sse_oracle.py``'s ``check_sse``: a 4-byte head picks the
limit, ``parse`` or ``route``, and three cut points; the stream after it is fed whole and
cut there, to the Cython core (under each of its line-end scans) and to the pure-Python
twin, and every run must give the same events. Then ``check_raising_sse``: a ``classify``
that raises on some events must leave the framing intact (each event's data handed over
once and whole, every other event delivered in order) on both implementations. A
disagreement is an ``AssertionError``, anything else raised is a crash: libFuzzer stops
and writes the input.

Run it through ``fuzz/run.sh`` (which runs every target); by hand:

    python fuzz/fuzz_sse.py -dict=fuzz/sse.dict WORK_CORPUS fuzz/corpus-sse
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

with atheris.instrument_imports(include=["rpcline"]):
    from rpcline._core import message_c, message_py, route_c, route_py, sse_c, sse_py  # noqa: F401

from _sse_oracle import check_raising_sse, check_sse  # noqa: E402  (after the path set-up)


def test_one_input(data: bytes) -> None:
    check_sse(data, message_c, message_py)
    check_raising_sse(data, message_c, message_py)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
