"""Hostile input: huge, many, deep, repeated, malformed. Results are right on both
implementations, nothing raises, and memory stays within the bound each test states.

The memory bounds (the README's Reliability section quotes them):
- one 100 MiB line: ``parse`` peaks at most 2.1x the line above it (orjson's padded copy
  of the input and the decoded 100 MiB str); ``parse_lines`` at most 3.1x in the Cython core
  (its argument, the decoder's copy, the str: the line is decoded in place) and 4.1x in the
  twin (which slices the line's own bytes out first); a ``StreamParser`` at its line limit
  plus 4 MiB, whatever the line's length;
- a million tiny lines: ``parse_lines`` keeps every result (at most 400 bytes a line,
  results included); a ``StreamParser`` fed 64 KiB chunks grows by at most 8 MiB;
- a line with 100,000 duplicate names, or a 1,000,000-digit number: traced memory at
  most 64 KiB above what ``orjson.loads`` alone traces for the same line (orjson reserves
  about 12x the input up front for its value pool, untouched and so not resident, but
  tracemalloc counts it; rpcline itself must add nothing that grows with the input).
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path
from types import ModuleType

import orjson
import pytest
from _support import (
    BAD_ID,
    BATCHING,
    NOT_AN_OBJECT,
    decoder_message,
    describe,
    notification,
    parse_error,
    refused,
    request,
    resolve,
)

MIB = 1024 * 1024
R = b'{"jsonrpc":"2.0",'
VALID = R + b'"id":"r\xc3\xa9q","method":"tools/call","params":{"name":"\xe2\x82\xac","n":[1,2.5]}}'
SCRIPT = Path(__file__).parent / "isolated" / "big_line.py"


@pytest.fixture(scope="session")
def stream(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".stream_"))


def expect(impl: ModuleType, data: bytes, want: dict) -> None:
    assert describe(impl.parse(data)) == resolve(want, data)


def lines_of(stream: ModuleType, data: bytes, chunk: int) -> list:
    parser, results = stream.StreamParser(), []
    for start in range(0, len(data), chunk):
        results += parser.feed(data[start:start + chunk])
    return results + parser.close()


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def traced_peak(function) -> tuple[object, int]:
    gc.collect()
    tracemalloc.start()
    try:
        result = function()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def within_decoder_peak(peak: int, line: bytes) -> bool:
    def decode():
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            return None

    return peak <= traced_peak(decode)[1] + 64 * 1024


# --- a 100 MiB line ------------------------------------------------------------------------

BIG_LINE = {  # case: (results, peak bound as a multiple of the line [per implementation])
    "parse": ([["Request", "tools/call", 100 * MIB, None]], 2.1),
    "parse-str": ([["Request", "tools/call", 100 * MIB, None]], 2.1),
    "parse_lines": ([["Request", "tools/call", 100 * MIB, None],
                     ["Request", "tools/call", 0, None]], {"cython": 3.1, "python": 4.1}),
    "stream": ([["Refused", None, None, "line exceeds 16777216 bytes"],
                ["Request", "tools/call", 0, None]], None),
}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self")
@pytest.mark.parametrize("case", list(BIG_LINE))
def test_a_100_mib_line(impl, case):
    implementation = "cython" if impl.__name__.endswith("_c") else "python"
    done = subprocess.run([sys.executable, str(SCRIPT), implementation, case],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    results, factor = BIG_LINE[case]
    assert report["results"] == results
    if isinstance(factor, dict):
        factor = factor[implementation]
    bound = factor * report["input_bytes"] if factor else 16 * MIB + 4 * MIB
    assert report["peak_above_baseline"] <= bound, report


# --- a million tiny lines in one buffer ---------------------------------------------------------

TINY = [R + b'"method":"p"}', b"{}", b"1", b"[]"]


def test_a_million_tiny_lines_in_one_buffer(impl, stream):
    data = b"\n".join(TINY * 250_000) + b"\n"
    want = [describe(impl.parse(line)) for line in TINY]
    gc.collect()
    before = rss()
    results = stream.parse_lines(data)
    grown = rss() - before
    assert len(results) == 1_000_000
    for number in (0, 1, 2, 3, 499_998, 999_999):
        assert describe(results[number]) == want[number % 4]
    assert [type(r).__name__ for r in results[:4]] == ["Notification", "Refused", "Refused",
                                                       "Refused"]
    assert grown <= 400 * len(results), grown
    del results
    gc.collect()
    before, count = rss(), 0
    parser = stream.StreamParser()
    for start in range(0, len(data), 64 * 1024):
        count += len(parser.feed(data[start:start + 64 * 1024]))
    count += len(parser.close())
    assert count == 1_000_000
    assert rss() - before <= 8 * MIB


# --- nesting at and beyond the decoder's 1024 levels ---------------------------------------


def nested_params(levels: int) -> bytes:
    """A request whose whole text nests ``levels`` deep (the envelope is level 1)."""
    inner = levels - 1
    return (R + b'"id":1,"method":"m","params":' + b'{"a":' * inner + b"0"
            + b"}" * inner + b"}")


def test_nesting_at_the_limit_is_accepted(impl, stream):
    result = impl.parse(nested_params(1024))
    assert type(result).__name__ == "Request"
    depth, value = 1, result.params
    while isinstance(value, dict):
        depth, value = depth + 1, value["a"]
    assert depth == 1024
    assert describe(impl.parse(b"[" * 1024 + b"]" * 1024)) == refused(None, "InvalidRequest",
                                                                      BATCHING)
    assert [type(r).__name__ for r in stream.parse_lines(nested_params(1024))] == ["Request"]


@pytest.mark.parametrize("text", [
    nested_params(1025),
    b"[" * 1025 + b"]" * 1025,
    b"[" * 100_000,
    b'{"a":' * 1_000_000,
    R + b'"method":"m","params":' + b"[" * 200_000 + b"]" * 200_000 + b"}",
], ids=["1025 levels", "1025 arrays", "100,000 unclosed", "1,000,000 unclosed objects",
        "200,000 levels of params"])
def test_nesting_beyond_the_limit_is_a_parse_error(impl, stream, text):
    assert "depth limit exceeded" in decoder_message(text)
    expect(impl, text, parse_error())
    assert [describe(r) for r in stream.parse_lines(text)] == [resolve(parse_error(), text)]


# --- 100,000 duplicate names ----------------------------------------------------------------


@pytest.mark.parametrize("name, values, last, want", [
    ("method", [b'"a"', b'"b"'], b'"z"', request(1, "z")),
    ("id", [b"1", b'"1"', b"2"], b'"last"', request("last", "m")),
    ("params", [b"[]", b"null", b'{"x":1}'], b'{"y":2}', request(1, "m", {"y": 2})),
    ("jsonrpc", [b'"1.0"', b'"2.0"'], b'"2.0"', request(1, "m")),
])
def test_100_000_duplicate_names_the_last_one_wins(impl, name, values, last, want):
    members = {b"id": b"1", b"method": b'"m"', b"jsonrpc": b'"2.0"'}
    members.pop(name.encode(), None)
    head = b"{" + b"".join(b'"%s":%s,' % item for item in members.items())
    repeated = b"".join(b'"%s":%s,' % (name.encode(), values[i % len(values)])
                        for i in range(100_000))
    line = head + repeated + b'"%s":%s}' % (name.encode(), last)
    result, peak = traced_peak(lambda: impl.parse(line))
    assert describe(result) == want
    assert within_decoder_peak(peak, line)


def test_100_000_distinct_members_besides_the_envelope(impl):
    line = R + b'"id":1,' + b"".join(b'"k%d":%d,' % (i, i) for i in range(100_000)) + b'"method":"m"}'
    assert describe(impl.parse(line)) == request(1, "m")


# --- huge numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize("id_text, want", [
    (b"18446744073709551615", request(2**64 - 1)),
    (b"-9223372036854775808", request(-(2**63))),
    (b"18446744073709551616", refused(None, "InvalidRequest", BAD_ID)),  # decoded as float
    (b"-9223372036854775809", refused(None, "InvalidRequest", BAD_ID)),
    (b"1" * 308, refused(None, "InvalidRequest", BAD_ID)),
    (b"1" * 400, parse_error()),  # infinity as a double: the decoder refuses it
    (b"1e400", parse_error()),
    (b"-1e400", parse_error()),
    (b"0.1e-400", refused(None, "InvalidRequest", BAD_ID)),  # 0.0
    (b"1E+2", refused(None, "InvalidRequest", BAD_ID)),
    (b"-0", request(0)),
    (b"1" * 1_000_000, parse_error()),
    (b"0." + b"1" * 1_000_000, refused(None, "InvalidRequest", BAD_ID)),
], ids=lambda v: v[:24].decode() if isinstance(v, bytes) else None)
def test_huge_numbers(impl, id_text, want):
    line = R + b'"id":' + id_text + b',"method":"m"}'
    result, peak = traced_peak(lambda: impl.parse(line))
    assert describe(result) == resolve(want, line)
    assert within_decoder_peak(peak, line)


def test_huge_numbers_inside_params(impl):
    line = R + b'"id":1,"method":"m","params":{"big":' + b"9" * 100_000 + b"}}"
    expect(impl, line, parse_error())
    line = R + b'"id":1,"method":"m","params":{"big":' + b"9" * 300 + b"}}"
    assert impl.parse(line).params == {"big": float("9" * 300)}


# --- every single byte value ------------------------------------------------------------------


@pytest.mark.parametrize("byte", range(256))
def test_every_single_byte(impl, stream, byte):
    data = bytes([byte])
    want = (refused(None, "InvalidRequest", NOT_AN_OBJECT) if data.isdigit()
            else parse_error())
    expect(impl, data, want)
    blank = data in (b" ", b"\t", b"\r", b"\n")
    assert [describe(r) for r in stream.parse_lines(data)] == ([] if blank else
                                                                [resolve(want, data)])


@pytest.mark.parametrize("byte", range(256))
def test_every_byte_inside_a_method_name(impl, byte):
    line = R + b'"method":"a' + bytes([byte]) + b'q"}'  # \q is no escape
    if byte < 0x20 or byte in b'"\\' or byte >= 0x80:  # control, quote, escape, not UTF-8
        expect(impl, line, parse_error())
    else:
        expect(impl, line, notification("a" + chr(byte) + "q"))


def test_a_valid_message_fed_one_byte_at_a_time(impl, stream):
    assert [describe(r) for r in lines_of(stream, VALID + b"\r\n" + VALID, 1)] == [
        describe(impl.parse(VALID))] * 2


# --- invalid UTF-8 at every position ---------------------------------------------------------

DAMAGE = {
    "0xff": lambda line, i: line[:i] + b"\xff" + line[i:],
    "stray continuation": lambda line, i: line[:i] + b"\x80" + line[i:],
    "truncated sequence": lambda line, i: line[:i] + b"\xe2\x82" + line[i:],
    "overlong slash": lambda line, i: line[:i] + b"\xc0\xaf" + line[i:],
    "encoded surrogate": lambda line, i: line[:i] + b"\xed\xa0\x80" + line[i:],
    "beyond U+10FFFF": lambda line, i: line[:i] + b"\xf4\x90\x80\x80" + line[i:],
    "byte replaced": lambda line, i: line[:i] + b"\xfe" + line[i + 1:],
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_invalid_utf8_at_every_position(impl, stream, damage):
    assert describe(impl.parse(VALID))["kind"] == "Request"
    lines = [DAMAGE[damage](VALID, i) for i in range(len(VALID) + 1)]
    for line in lines:
        assert describe(impl.parse(line)) == resolve(parse_error(), line), line
    # The same lines in one stream, cut at odd places, give the same refusals.
    results = lines_of(stream, b"\n".join(lines), 7)
    assert [describe(r) for r in results] == [describe(impl.parse(l)) for l in lines]


# --- NUL bytes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("line, want", [
    (b"\x00", parse_error()),
    (b"\x00" + VALID, parse_error()),
    (VALID + b"\x00", parse_error()),
    (R + b'"method":"a\x00b"}', parse_error()),  # a raw control character in a string
    (R + b'"method":"a\\u0000b"}', notification("a\x00b")),
    (R + b'"\\u0000":1,"method":"m"}', notification("m")),
    (R + b'"method":"m","params":{"\\u0000":"\\u0000"}}', notification("m", {"\x00": "\x00"})),
    (b"\x00" * 100_000, parse_error()),
], ids=["nul", "nul first", "nul last", "raw nul in a string", "escaped nul in method",
        "escaped nul as a name", "escaped nul in params", "100,000 nuls"])
def test_nul_bytes(impl, stream, line, want):
    expect(impl, line, want)
    assert [describe(r) for r in stream.parse_lines(line + b"\n")] == [resolve(want, line)]


# --- CR without LF ----------------------------------------------------------------------------


def test_cr_without_lf_does_not_end_a_line(impl, stream):
    note = R + b'"method":"a"}'
    joined = note + b"\r" + note
    expect(impl, joined, parse_error())  # one line: content after the first document
    assert [describe(r) for r in stream.parse_lines(joined)] == [resolve(parse_error(),
                                                                         joined)]
    assert [describe(r) for r in lines_of(stream, joined + b"\r", 5)] == [
        resolve(parse_error(), joined + b"\r")]


def test_crs_are_json_whitespace(impl, stream):
    note = R + b'"method":"a"}'
    for line in (note + b"\r", b"\r" + note, b"\r\r\r" + note + b"\r\r\r\r"):
        expect(impl, line, notification("a"))
    expect(impl, b"\r" * 100_000, parse_error())  # nothing but whitespace
    data = b"\r" * 1_000_000 + b"\n" + note + b"\r\r\n" + b"\r\n" * 1000
    assert [describe(r) for r in stream.parse_lines(data)] == [notification("a")]
    assert [describe(r) for r in lines_of(stream, data, 4096)] == [notification("a")]


def test_a_lone_cr_stream_of_one_huge_line_is_bounded(impl, stream):
    """A peer that ends lines with CR only sends one endless line: the limit refuses it."""
    parser, results = stream.StreamParser(max_line_bytes=MIB), []
    chunk = (R + b'"method":"a"}\r') * 4096
    _, peak = traced_peak(lambda: [results.extend(parser.feed(chunk)) for _ in range(64)])
    assert [describe(r)["reason"] for r in results] == [("str", f"line exceeds {MIB} bytes")]
    assert peak <= 2 * MIB + 2 * len(chunk)
    assert parser.feed(b"\n" + R + b'"method":"b"}\n') == [impl.parse(R + b'"method":"b"}')]
