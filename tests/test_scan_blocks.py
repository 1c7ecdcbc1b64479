"""The block scan of long strings (``scan_long.h``) against orjson and the twin.

Long string bodies are checked 64 bytes a step, escapes and UTF-8 by arithmetic on byte
masks with a carry from block to block, on every path this build and CPU can run (SSE2,
AVX2; ``none`` in a ``RPCLINE_NO_SIMD=1`` build, where these tests check the portable
path). Each special byte or sequence is put at every offset of the first two blocks and
next to the end of the line, after text that keeps the blocks busy: every line must be
judged as orjson judges it, and refused with the twin's exact reason.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest

from rpcline._core import route_py

pytestmark = pytest.mark.c_extension

# What can follow a backslash, what is text, and what is wrong, as JSON string bytes.
SPECIALS = [
    b"\\n", b'\\"', b"\\\\", b"\\\\\\\\", b'\\\\\\"', b"\\/", b"\\u00e9", b"\\ud83d\\ude00",
    b"\\q", b"\\u12", b"\\ud800", b"\\\x01", b"\\\xc3\xa9",
    "é".encode(), "€".encode(), "中".encode(), "😀".encode(), b"\x7f",
    b"\x01", b"\x1f", b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xc2", b"\xe2\x82",
    b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf0\x8f\xbf\xbf",
    b"\xf4\x90\x80\x80", b"\xf4\x8f\xbf\xbf", b"\xf5\x80\x80\x80", b"\xff", b"\xf0\x9f\x98",
    b'"', b"\\",
]  # fmt: skip
# Text before and around the special: plain, escaped, and non-ASCII of each length.
FILLERS = [b"a", b"\\n", "é".encode(), "中".encode(), "😀".encode(), b"\\\\"]
OFFSETS = range(0, 131)


def skip_reason(path: str, available: tuple[str, ...]) -> str:
    """Why a scan path is not tested here, worded as a fact of the build, not a fault."""
    if path == "none":
        return ("not applicable: the portable scan ('none') runs only in a RPCLINE_NO_SIMD=1 "
                f"build; this build scans with {' and '.join(available)}, tested here")
    return (f"not applicable: {path} is not on this CPU or in this build; it scans with "
            f"{' and '.join(available)}, tested here")


def test_skips_read_as_facts_of_the_build():
    # "none is not a block scan of this build and CPU" read as a bug (issue 31 item 17).
    for path in ("none", "avx2"):
        reason = skip_reason(path, ("sse2",))
        assert reason.startswith("not applicable: ") and "tested here" in reason, reason
    assert "RPCLINE_NO_SIMD=1" in skip_reason("none", ("sse2", "avx2"))


@pytest.fixture(params=["sse2", "avx2", "none"])
def simd_path(request: pytest.FixtureRequest) -> Iterator[str]:
    from rpcline._core import scan_c

    if request.param not in scan_c.SIMD_PATHS:
        pytest.skip(skip_reason(request.param, scan_c.SIMD_PATHS))
    before = scan_c.simd_path()
    scan_c.use_simd_path(request.param)
    yield request.param
    scan_c.use_simd_path(before)


def judgement(route: object) -> tuple | None:
    error = route.error  # type: ignore[attr-defined]
    return None if error is None else (error.code, error.reason)


def assert_judged(line: bytes) -> None:
    from rpcline._core import route_c

    try:
        orjson.loads(line)
        valid = True
    except orjson.JSONDecodeError:
        valid = False
    route = route_c.route(line)
    assert judgement(route) == judgement(route_py.route(line)), line
    assert (route.error is None or route.error.code != -32700) == valid, line


def lines(special: bytes, filler: bytes, offset: int) -> Iterator[bytes]:
    """``special`` ``offset`` filler units into a long string (which a first escape sends
    to the blocks), then far from the end, right at the end, and in a nested value."""
    text = filler * offset
    yield b'{"jsonrpc":"2.0","id":1,"result":{"t":"\\n' + text + special + b"z" * 150 + b'"}}'
    yield b'{"jsonrpc":"2.0","id":1,"result":"' + "é".encode() + text + special + b'"}'
    yield b'["' + filler * 40 + text + special + filler * 40 + b'",1]'


@pytest.mark.parametrize("special", SPECIALS, ids=range(len(SPECIALS)))
def test_specials_at_every_offset_of_a_block(simd_path, special):
    for filler in FILLERS:
        for offset in OFFSETS:
            for line in lines(special, filler, offset):
                assert_judged(line)


@pytest.mark.parametrize("special", SPECIALS, ids=range(len(SPECIALS)))
def test_plain_text_then_a_special_at_every_offset(simd_path, special):
    # Plain ASCII from the opening quote goes through the plain-text loop (SSE2: 64
    # bytes a step; AVX2: 128, then 32, then 16), never the escape blocks: the special
    # after each length of it, at every byte of three 128-byte steps and of the tails,
    # must stop the loop exactly where it is, far from the end of the line and near it.
    from rpcline._core import route_c

    for length in range(0, 420):
        text = bytes(0x21 + (i * 7) % 90 for i in range(length)).replace(b'"', b"#")
        text = text.replace(b"\\", b"/")
        far = b'{"jsonrpc":"2.0","id":1,"result":{"t":"' + text + special + b"z" * 300 + b'"}}'
        near = b'{"jsonrpc":"2.0","id":1,"result":"' + text + special + b'"}'
        for line in (far, near):
            assert_judged(line)
            assert route_c.route(line).result_span == route_py.route(line).result_span, line


def test_plain_text_cut_short(simd_path):
    # A long plain string that runs to the end of the line, cut after every byte of its
    # last 300: the loop must not read a step past the end, nor stop short of it.
    whole = b'{"jsonrpc":"2.0","id":1,"result":"' + b"plain text, " * 60 + b'"}'
    for cut in range(len(whole) - 300, len(whole) + 1):
        assert_judged(whole[:cut])


@pytest.mark.parametrize("filler", FILLERS, ids=range(len(FILLERS)))
def test_runs_of_backslashes_across_blocks(simd_path, filler):
    # A run of backslashes ending at each byte of a block, odd and even, then a quote or
    # a letter: the carry from block to block decides what the quote is.
    for offset in range(50, 140):
        for run in range(1, 6):
            for after in (b'"', b"n", b"q", b"u0041", "é".encode()):
                body = b"\\n" + b"a" * offset + b"\\" * run + after + filler * 30
                assert_judged(b'{"jsonrpc":"2.0","id":1,"result":"' + body + b'"}')


def test_escaped_flags_decode_what_the_blocks_cleared(simd_path):
    # The blocks report whether a string held escapes or non-ASCII text; the id and the
    # method are decoded from that, so a wrong flag would give a wrong value.
    from rpcline._core import route_c

    for text in ("a\n" * 40, "é" * 40, "a" * 70 + "\\", "中" * 30 + "\n", "a" * 70 + "😀"):
        for pad in range(0, 70, 7):
            value = "x" * pad + text
            line = orjson.dumps({"jsonrpc": "2.0", "id": value, "method": value})
            route = route_c.route(line)
            assert (route.id, route.method) == (value, value), line


def test_the_end_of_the_line(simd_path):
    # A string that runs to the end of the line, cut after every byte of its last block.
    for special in SPECIALS:
        whole = b'{"jsonrpc":"2.0","id":1,"result":"\\n' + b"a" * 70 + special + b"b" * 70 + b'"}'
        for cut in range(len(whole) - 140, len(whole) + 1):
            assert_judged(whole[:cut])


@pytest.mark.parametrize("style", ["escaped", "cjk", "emoji", "embedded-json"])
def test_the_corpus_text_styles(simd_path, style):
    # Whole results of each style the blocks were built for, whole and cut short inside
    # their text (at a block's every offset), judged as orjson and the twin judge them.
    from rpcline._core import route_c
    from rpcline.corpus import long_results

    line = long_results(style, 1, seed=3)[0]
    route = route_c.route(line)
    expected = route_py.route(line).result_span
    assert (route.kind, route.id, route.result_span) == ("response", 1, expected)
    for cut in range(len(line) // 2, len(line) // 2 + 64):
        assert_judged(line[:cut] + b'"}]}}')
