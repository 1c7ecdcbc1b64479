#!/usr/bin/env python3
"""Coverage-guided fuzzing of rpcline with atheris: the two implementations must agree.

Every input goes through ``tests/_oracle.py``'s ``check``: ``parse`` in every input form,
``parse_lines`` and a chunked ``StreamParser`` on the Cython core and the pure-Python twin,
compared field by field and against the per-line model (and a ``StreamParser`` whose
``classify`` raises on some lines: the framing must stay intact), what a relay reads of a
broken or over-long line (``prefix_refusal``: which pending call a refused server line
answers), and ``route`` on every block scan of long strings the build has (SSE2, AVX2),
and through ``tests/_http_oracle.py``'s
``check_http``: ``http.check_request`` on the input as a POST (a body, then optionally
header lines), both implementations, with and without ``tools``, never raising and
agreeing. A disagreement is an ``AssertionError``, anything else raised is a crash:
libFuzzer stops and writes the input.

Run it through ``fuzz/run.sh`` (it builds the extension with clang for coverage); by hand:

    python fuzz/fuzz_rpcline.py -dict=fuzz/jsonrpc.dict WORK_CORPUS fuzz/corpus

The twin's Python code is instrumented by atheris; the Cython core gets its coverage
from clang's ``-fsanitize=fuzzer-no-link`` when it was built so (see run.sh).
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

with atheris.instrument_imports(include=["rpcline"]):
    from rpcline._core import message_c, message_py, stream_c, stream_py
    from rpcline._core import route_py  # noqa: F401  (instrumented here; the oracle routes)
    from rpcline._core import http_c, http_py, route_c, scan_c

from _http_oracle import check_http  # noqa: E402  (after the path set-up)
from _oracle import check, describe_route  # noqa: E402

C = (message_c, stream_c)
PY = (message_py, stream_py)
FASTEST = scan_c.simd_path()


def test_one_input(data: bytes) -> None:
    check(data, C, PY)
    # check routes with the block scan of long strings this CPU runs fastest (AVX2 or
    # SSE2); every other one this build has must say the same, to the reason and span.
    expected = describe_route(route_c.route(data))
    for path in scan_c.SIMD_PATHS:
        scan_c.use_simd_path(path)
        got = describe_route(route_c.route(data))
        scan_c.use_simd_path(FASTEST)
        assert got == expected, (path, data, got, expected)
    check_http(data, http_c, http_py)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
