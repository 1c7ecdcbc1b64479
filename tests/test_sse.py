"""rpcline.sse: WHATWG event-stream framing, over-long events, encode, and oracles.

Every framing rule has a test that fails when it breaks, at several chunk cuts. The
oracle is httpx-sse's SSEDecoder (where it departs from WHATWG, WHATWG is followed: see
``httpx_sse_whatwg`` and docs/gateways.md); the twin and the core agree on random streams.
"""

from __future__ import annotations

import importlib
import itertools
import pickle
import tracemalloc
from collections.abc import Callable, Iterator
from types import ModuleType

import pytest
from _oracle import describe_route
from _sse_oracle import describe_event
from _support import describe
from hypothesis import given
from hypothesis import strategies as st

import rpcline
from rpcline import sse as facade

R = b'{"jsonrpc":"2.0",'
RESPONSE = R + b'"id":1,"result":{}}'
CUTS = [1, 2, 3, 7, 10**9]  # chunk sizes: byte by byte up to the whole stream at once


@pytest.fixture(scope="session")
def sse(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".sse_"))


@pytest.fixture(scope="session")
def router(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".route_"))


def run(sse: ModuleType, stream: bytes, chunk: int = 10**9, **options) -> list:
    parser = sse.EventStreamParser(**options)
    events = []
    for start in range(0, len(stream), chunk):
        events += parser.feed(stream[start : start + chunk])
    return events + parser.close()


def raw(sse: ModuleType, stream: bytes, chunk: int = 10**9, **options) -> list[tuple]:
    """(event, id, retry, data bytes) of every event: classify is bytes itself."""
    events = run(sse, stream, chunk, classify=bytes, **options)
    return [(e.event, e.id, e.retry, e.message) for e in events]


def datas(sse: ModuleType, stream: bytes, chunk: int = 10**9) -> list:
    return [message for *_, message in raw(sse, stream, chunk)]


# --- WHATWG framing ----------------------------------------------------------------------


@pytest.mark.parametrize("chunk", CUTS)
def test_lf_cr_and_crlf_each_end_a_line(sse, chunk):
    stream = b"data: a\n\ndata: b\r\rdata: c\r\n\r\ndata: d\n\r"
    assert datas(sse, stream, chunk) == [b"a", b"b", b"c", b"d"]


def test_a_cr_at_a_chunk_end_and_its_lf_in_the_next_chunk_are_one_line_end(sse):
    parser = sse.EventStreamParser(classify=bytes)
    assert parser.feed(b"data: a\r") == []
    assert parser.feed(b"\ndata: b\r") == []  # were the LF a blank line, "a" would dispatch
    assert parser.feed(b"") == []  # an empty chunk between them changes nothing
    (event,) = parser.feed(b"\n\r\n")
    assert event.message == b"a\nb"


def test_a_cr_dispatches_at_once_without_waiting_for_an_lf(sse):
    parser = sse.EventStreamParser(classify=bytes)
    assert [e.message for e in parser.feed(b"data: a\r\r")] == [b"a"]
    assert parser.feed(b"\n") == []  # the LF after the CR is that blank line's end, no more


@pytest.mark.parametrize("chunk", CUTS)
def test_a_bom_is_skipped_at_the_stream_start_only(sse, chunk):
    bom = b"\xef\xbb\xbf"
    assert datas(sse, bom + b"data: a\n\n", chunk) == [b"a"]
    # A second BOM, or one later, is part of the field name: an unknown field, ignored.
    assert datas(sse, bom + bom + b"data: a\n\n", chunk) == []
    assert datas(sse, b"data: a\n\n" + bom + b"data: b\n\ndata: c\n\n", chunk) == [b"a", b"c"]
    assert datas(sse, b"\xef\xbbdata: a\n\n", chunk) == []  # half a BOM is no BOM


@pytest.mark.parametrize("chunk", CUTS)
def test_data_lines_join_with_lf(sse, chunk):
    stream = b"data: a\ndata:\ndata\ndata: b\n\ndata: c\n\n"
    assert datas(sse, stream, chunk) == [b"a\n\n\nb", b"c"]


@pytest.mark.parametrize("chunk", CUTS)
def test_one_space_after_the_colon_is_dropped(sse, chunk):
    stream = b"data:a\n\ndata: a\n\ndata:  a\n\ndata:\ta\n\nevent:  x\ndata: a\n\n"
    assert raw(sse, stream, chunk) == [
        ("message", "", None, b"a"), ("message", "", None, b"a"), ("message", "", None, b" a"),
        ("message", "", None, b"\ta"), (" x", "", None, b"a"),
    ]


@pytest.mark.parametrize("chunk", CUTS)
def test_comments_and_unknown_fields_are_ignored(sse, chunk):
    stream = (b": ping - 2026-01-01\r\n\r\n:\ndata: a\n: between\nDATA: b\ndata : c\n"
              b"foo: bar\nfoo\nid : 9\n\n")
    assert raw(sse, stream, chunk) == [("message", "", None, b"a")]


@pytest.mark.parametrize("chunk", CUTS)
def test_an_event_without_data_is_not_dispatched_but_its_fields_count(sse, chunk):
    stream = b"id: 5\n\nevent: x\n\nretry: 10\n\nevent: y\nid: 6\n\ndata: a\n\n"
    # The id and the reconnection time stay; the event type is reset at the blank line.
    assert raw(sse, stream, chunk) == [("message", "6", 10, b"a")]


@pytest.mark.parametrize("chunk", CUTS)
def test_the_priming_event_is_dispatched_with_no_message(sse, chunk):
    """A resumable SDK server primes with ``id: X`` and an empty ``data:``: WHATWG
    dispatches it (its data buffer holds an LF), classify is not asked about nothing."""
    seen = []
    stream = (b"id: s1-0\r\ndata: \r\nretry: 3000\r\n\r\n"
              b"id: s1-1\r\nevent: message\r\ndata: 1\r\n\r\n")
    events = run(sse, stream, chunk, classify=lambda data: seen.append(data) or data)
    assert [(e.event, e.id, e.retry, e.message) for e in events] == [
        ("message", "s1-0", 3000, None), ("message", "s1-1", 3000, b"1"),
    ]
    assert seen == [b"1"]
    assert [e.message for e in run(sse, b"data:  \t\ndata\n\n", chunk)] == [None]


@pytest.mark.parametrize("chunk", CUTS)
def test_the_last_event_id_persists_resets_and_ignores_nul(sse, chunk):
    stream = (b"id: 1\ndata: a\n\ndata: b\n\nid: x\0y\ndata: c\n\nid\ndata: d\n\n"
              b"id: \xff\xc3\xa9\ndata: e\n\n")
    assert [(e[1], e[3]) for e in raw(sse, stream, chunk)] == [
        ("1", b"a"), ("1", b"b"), ("1", b"c"), ("", b"d"), ("\ufffd\u00e9", b"e"),
    ]


@pytest.mark.parametrize("chunk", CUTS)
def test_retry_takes_ascii_digits_only(sse, chunk):
    ignored = [b"-1", b"+1", b" 1", b"1 ", b"1_0", b"1a", b"", b"\xd9\xa1", b"1.5", b"9" * 5000]
    stream = b"retry: 0042\n" + b"".join(b"retry: " + value + b"\n" for value in ignored)
    stream += b"data: a\n\nretry\ndata: b\n\nretry: 7\ndata: c\n\n"
    assert [(e[2], e[3]) for e in raw(sse, stream, chunk)] == [(42, b"a"), (42, b"b"), (7, b"c")]


@pytest.mark.parametrize("chunk", CUTS)
def test_the_event_type_defaults_to_message_and_resets(sse, chunk):
    stream = (b"event: endpoint\ndata: a\n\ndata: b\n\nevent:\ndata: c\n\n"
              b"event: \xc3\xa9\ndata: d\n\n")
    assert [(e[0], e[3]) for e in raw(sse, stream, chunk)] == [
        ("endpoint", b"a"), ("message", b"b"), ("message", b"c"), ("\u00e9", b"d"),
    ]


@pytest.fixture
def line_end_paths(sse: ModuleType) -> Iterator[Callable[[], Iterator[str]]]:
    """Runs a test's body under each line-end scan of the core (the twin has one, a regex)."""
    if not hasattr(sse, "use_line_end_path"):
        yield lambda: iter(["regex"])
        return
    before = sse.line_end_path()

    def each() -> Iterator[str]:
        for path in sse.LINE_END_PATHS:
            sse.use_line_end_path(path)
            yield path

    yield each
    sse.use_line_end_path(before)


# Bytes whose low nibble is CR's or LF's (the AVX2 scan looks a byte up by it), non-ASCII
# among them, and none of them JSON whitespace.
NIBBLES = b"-=Z]jmz}\x1a\x1d\x8a\x8d\xda\xfa\xff\x80a"


@pytest.mark.parametrize("chunk", [64, 10**9])
def test_a_line_ends_at_its_first_cr_or_lf_wherever_it_lies(sse, line_end_paths, chunk):
    for path in line_end_paths():  # (product would switch to the last one before the loop)
        # Every offset in and across the AVX2 scan's 32- and 128-byte steps.
        for size, end, head in itertools.product(range(300), (b"\r\n", b"\n", b"\r"),
                                                 (b"event: message\r\ndata: ", b"data: ")):
            value = (NIBBLES * 20)[:size]
            stream = head + value + end + end + b"data: after\n\n"
            assert datas(sse, stream, chunk) == [value or None, b"after"], (path, size, end, head)


@pytest.mark.parametrize("chunk", CUTS)
def test_the_sdk_shape_gives_what_its_lines_give(sse, line_end_paths, chunk):
    """The SDK's event shape is taken whole when it can be (``_sdk_frame``); around it, and
    where it cannot, the lines decide as anywhere else."""
    sdk = b"event: message\r\ndata: %s\r\n\r\n"
    cases = [
        (b"event: other\r\n" + sdk % b"a", [("message", "", None, b"a")]),
        (b"data: a\r\n" + sdk % b"b", [("message", "", None, b"a\nb")]),
        (b"id: 7\r\nretry: 5\r\n" + sdk % b"c" + sdk % b"d",
         [("message", "7", 5, b"c"), ("message", "7", 5, b"d")]),
        (sdk % b"a\rb", [("message", "", None, b"a")]),  # "b" is an unknown field
        (sdk % b"a\nevent: x", [("x", "", None, b"a")]),
        (b"event: message\r\ndata: a\r\n\rdata: b\r\n\n", [("message", "", None, b"a"),
                                                         ("message", "", None, b"b")]),
        (b"event: message\r\ndata: a\r\ndata: b\r\n\r\n", [("message", "", None, b"a\nb")]),
        (sdk % b"" + sdk % b"  ", [("message", "", None, None), ("message", "", None, None)]),
        (b"event: message\r\ndata:a\r\n\r\n" + sdk % b" a",
         [("message", "", None, b"a"), ("message", "", None, b" a")]),
    ]
    for path in line_end_paths():
        for stream, want in cases:
            assert raw(sse, stream, chunk) == want, (path, stream)


@pytest.mark.parametrize("chunk", CUTS)
def test_the_sdk_shape_keeps_the_limit(sse, line_end_paths, chunk):
    # 8 bytes: the limit, the prefix "data: " included, is room for "event: message" too.
    sdk = b"event: message\r\ndata: %s\r\n\r\n"
    for _ in line_end_paths():
        stream = sdk % b"abcdefgh" + sdk % b"abcdefghi" + sdk % b"after"
        fits, refused, after = raw(sse, stream, chunk, max_event_bytes=8)
        assert fits == ("message", "", None, b"abcdefgh")
        assert refused[3].error.reason == "event exceeds 8 bytes"
        assert after == ("message", "", None, b"after")  # dropped up to its blank line only
        # Data held from an earlier line counts, its LF included.
        (refused,) = raw(sse, b"data: a\n" + sdk % b"abcdefg", chunk, max_event_bytes=8)
        assert refused[3].error.reason == "event exceeds 8 bytes"


@pytest.mark.parametrize("tail", [b"data: a", b"data: a\n", b"data: a\ndata: b\n", b"id: 1\n"])
def test_the_end_of_the_stream_discards_an_unfinished_event(sse, tail):
    parser = sse.EventStreamParser()
    assert parser.feed(b"data: " + RESPONSE + b"\n\n" + tail)[0].message.id == 1
    assert parser.close() == []
    assert parser.close() == []
    with pytest.raises(ValueError, match="after close"):
        parser.feed(b"\n")


def test_messages_are_classified_by_parse_route_or_any_callable(impl, sse, router):
    stream = b"".join(b"data: " + line + b"\n\n" for line in (RESPONSE, b"INFO x", b"[]"))
    parsed = [e.message for e in run(sse, stream)]
    assert [describe(m) for m in parsed] == [describe(impl.parse(line)) for line in
                                             (RESPONSE, b"INFO x", b"[]")]
    routed = [e.message for e in run(sse, stream, classify=router.route)]
    assert routed == [router.route(line) for line in (RESPONSE, b"INFO x", b"[]")]
    assert [e.message for e in run(sse, stream, classify=len)] == [len(RESPONSE), 6, 2]


def test_the_facade_picks_the_package_implementation():
    module = "rpcline._core.sse_c" if rpcline.IMPLEMENTATION == "cython" else "rpcline._core.sse_py"
    assert facade.EventStreamParser.__module__ == module
    assert facade.EventStreamParser().classify is rpcline.parse
    (event,) = facade.EventStreamParser().feed(b"data: " + RESPONSE + b"\n\n")
    assert isinstance(event, facade.Event) and isinstance(event.message, rpcline.ClientResponse)


def test_large_data_is_classified_whole(sse):
    big = R + b'"id":3,"result":{"text":"' + b"x" * 100_000 + b'"}}'
    for chunk in (1000, 10**9):
        (event,) = run(sse, b"data: " + big + b"\r\n\r\n", chunk)
        assert event.message.id == 3 and len(event.message.body["result"]["text"]) == 100_000


def test_events_compare_match_pickle_and_print(sse):
    event = sse.Event("message", "7", 10, b"x")
    assert event == sse.Event("message", "7", 10, b"x") != sse.Event("message", "7", None, b"x")
    assert event != ("message", "7", 10, b"x")
    assert pickle.loads(pickle.dumps(event)) == event
    assert repr(event) == "Event(event='message', id='7', retry=10, message=b'x')"
    match event:
        case sse.Event("message", id, message=data):
            assert (id, data) == ("7", b"x")
    with pytest.raises(AttributeError):
        event.id = "8"
    assert sse.Event() == sse.Event("message", "", None, None)


def test_bad_arguments(sse):
    with pytest.raises(TypeError, match="max_event_bytes must be an int"):
        sse.EventStreamParser(1.5)
    with pytest.raises(ValueError, match="positive"):
        sse.EventStreamParser(0)
    with pytest.raises(TypeError, match="classify must be callable"):
        sse.EventStreamParser(classify="route")
    with pytest.raises(TypeError, match="feed"):
        sse.EventStreamParser().feed("data: x\n\n")
    parser = sse.EventStreamParser(max_event_bytes=5, classify=bytes)
    assert (parser.max_event_bytes, parser.classify) == (5, bytes)
    events = parser.feed(bytearray(b"data: a\n\n")) + parser.feed(memoryview(b"xxdata: b\n\n")[2:])
    assert [e.message for e in events] == [b"a", b"b"]
    strided = memoryview(b"d.a.t.a.:.c.\n.\n.")[::2]
    assert [e.message for e in sse.EventStreamParser(classify=bytes).feed(strided)] == [b"c"]


# --- over-long events ----------------------------------------------------------------------

BIG = R + b'"id":7,"result":{"content":[{"type":"text","text":"' + b"x" * 500 + b'"}]}}'
AFTER = b"id: 2\r\ndata: " + R + b'"id":8,"result":{}}\r\n\r\n'


@pytest.mark.parametrize("chunk", [1, 7, 64, 10**9])
@pytest.mark.parametrize("shape", ["one line", "many lines", "ends in the next chunk"])
def test_an_over_long_event_is_refused_once_with_its_id_and_skipped(impl, sse, chunk, shape):
    if shape == "one line":
        event = b"id: 1\r\nevent: big\r\ndata: " + BIG + b"\r\n"
    elif shape == "many lines":
        event = b"data: " + BIG[:60] + b"\ndata: " + BIG[60:] + b"\n"
    else:
        event = b"data: " + BIG
    stream = event + b"id: 99\nevent: lost\n: the rest of the event is dropped\r\n\r\n" + AFTER
    refusal, after = run(sse, stream, chunk, max_event_bytes=100)
    assert type(refusal.message) is impl.Refused and refusal.message.id == 7
    assert type(refusal.message.error) is impl.ParseError
    assert refusal.message.error.reason == "event exceeds 100 bytes"
    assert (refusal.event, refusal.id) == (("big", "1") if shape == "one line" else ("message", ""))
    # The skipped event's fields were dropped with it: id 99, type "lost".
    assert (after.event, after.id, after.message.id) == ("message", "2", 8)


def test_the_limit_counts_the_data_as_classify_gets_it(sse):
    for data in (b"x" * 100, b"x" * 49 + b"\n" + b"x" * 50):
        stream = b"".join(b"data: " + line + b"\n" for line in data.split(b"\n")) + b"\n"
        for chunk in (1, 3, 10**9):
            assert datas(sse, stream, chunk) == [data]
            (refused,) = raw(sse, stream, chunk, max_event_bytes=99)
            assert refused[3].error.reason == "event exceeds 99 bytes"


@pytest.mark.parametrize("rest", [b',"x":2}\n\n', b',"x":2'])
def test_a_data_line_held_across_chunks_is_cut_at_the_limit_for_its_id(sse, rest):
    """A pending data line's value waits in the data buffer (``_data_prefix``); "data:"
    without a space leaves one byte more room there than the limit, which the refusal must
    not read: ``{"id":1`` is the limit's 7 bytes, and its id is not known complete."""
    parser = sse.EventStreamParser(7)
    assert parser.feed(b'data:{"id":1,') == []
    assert parser.buffered_bytes == 13
    (refused,) = parser.feed(rest)
    assert (refused.message.id, refused.message.error.reason) == (None, "event exceeds 7 bytes")


def held_alike(c_module, py_module, cases) -> None:
    """Each (stream, chunk sizes, limit) gives the twin's events and buffered_bytes after
    every chunk, under each line-end scan of the core."""
    sse_c = importlib.import_module(c_module.__name__.replace(".message_", ".sse_"))
    sse_py = importlib.import_module(py_module.__name__.replace(".message_", ".sse_"))

    def run(sse: ModuleType, stream: bytes, sizes: list[int], limit: int) -> tuple:
        parser, events, held, start = sse.EventStreamParser(limit, classify=bytes), [], [], 0
        for size in [*sizes, len(stream)]:
            events += parser.feed(stream[start : start + size])
            held.append(parser.buffered_bytes)
            start += size
        events += parser.close()
        return [(e.event, e.id, e.retry, e.message if isinstance(e.message, bytes | None) else
                 (type(e.message).__name__, e.message.id, e.message.error.reason))
                for e in events], held

    before = sse_c.line_end_path()
    try:
        for stream, sizes, limit in cases:
            want = run(sse_py, stream, sizes, limit)
            for path in sse_c.LINE_END_PATHS:
                sse_c.use_line_end_path(path)
                got = run(sse_c, stream, sizes, limit)
                assert got == want, (path, len(stream), sizes, limit)
    finally:
        sse_c.use_line_end_path(before)


@pytest.mark.c_extension
@pytest.mark.parametrize("prefix", [b"data: ", b"data:"])
def test_a_large_data_line_goes_on_across_chunks_as_in_the_twin(c_module, py_module, prefix):
    """From 16 KiB held, the core copies a pending data line on as it looks for the line's
    end (one AVX2 pass, ``_end_data_line``): its end at every offset of the scan's steps,
    at the limit and one byte past it, past the limit in a later chunk or not at all."""
    head = prefix + R + b'"id":5,"result":{"text":"'
    first = len(head) + 17_000  # the first chunk: 17,000 bytes of the value held
    # The value is 20,045 bytes when rest is 3,000: limits at it, one byte short and over.
    cases = []
    for rest, limit in [*((rest, 10**6) for rest in range(270)),
                        *((3000, limit) for limit in (17_500, 18_000, 20_044, 20_045, 20_046))]:
        stream = head + b"x" * (17_000 + rest) + b'"}}\r\n\r\n' + AFTER
        cases += [(stream, [first], limit), (stream, [first, 1000], limit)]
    held_alike(c_module, py_module, cases)


def test_an_over_long_event_under_route_is_a_route_refusal(impl, sse, router):
    refusal, after = run(sse, b"data: " + BIG + b"\n\n" + AFTER, 64,
                         max_event_bytes=100, classify=router.route)
    assert type(refusal.message) is router.Route
    assert describe_route(refusal.message)[:7] == (
        "refused", "int", 7, None, -32700, "ParseError", "event exceeds 100 bytes")
    assert refusal.message.line is None and after.message.kind == "response"


def test_an_over_long_event_under_any_callable_is_a_refused(impl, sse):
    refusal, after = run(sse, b"data: " + BIG + b"\n\n" + AFTER, max_event_bytes=100,
                         classify=bytes)
    assert type(refusal.message) is impl.Refused and refusal.message.id == 7
    assert after.message == R + b'"id":8,"result":{}}'


def test_a_long_comment_counts_while_it_is_read(sse):
    """What the parser holds between chunks is bounded, whatever the line is."""
    parser = sse.EventStreamParser(max_event_bytes=100, classify=bytes)
    assert parser.feed(b": " + b"c" * 50) == []
    (refusal,) = parser.feed(b"c" * 60)
    assert refusal.message.id is None and parser.buffered_bytes == 0
    assert [e.message for e in parser.feed(b"\n\ndata: ok\n\n")] == [b"ok"]


def cut_in_two(sse: ModuleType, stream: bytes, limit: int) -> Iterator[list[tuple]]:
    """raw() of ``stream`` fed whole, then cut in two at every position."""
    for cut in range(len(stream) + 1):
        parser = sse.EventStreamParser(limit, classify=bytes)
        events = parser.feed(stream[:cut]) + parser.feed(stream[cut:]) + parser.close()
        yield [(e.event, e.id, e.retry, e.message if isinstance(e.message, bytes | None) else
                (e.message.id, e.message.error.reason)) for e in events]


SMALL = R + b'"id":7,"result":{}}'  # 36 bytes


@pytest.mark.parametrize("line", [b": " + b"c" * 70, b"id: " + b"i" * 70, b"event: " + b"e" * 70,
                                  b"retry: " + b"1" * 70, b"foo: " + b"f" * 70, b"foo" * 30],
                         ids=["comment", "id", "event", "retry", "unknown field", "no colon"])
def test_a_line_of_any_field_counts_alike_whole_or_cut(sse, line):
    """The data so far (37 bytes, its LF included) and a 72 to 90-byte line of any field
    pass 100 + 6 bytes: refused wherever the chunks are cut (once only while the line was
    held across a cut), the id of the data kept, the rest of the event dropped."""
    stream = b"data: " + SMALL + b"\n" + line + b"\ndata: x\n\n" + AFTER
    after = ("message", "2", None, R + b'"id":8,"result":{}}')
    for events in cut_in_two(sse, stream, 100):
        assert events == [("message", "", None, (7, "event exceeds 100 bytes")), after]


@pytest.mark.parametrize("ends", [b"\r", b"\n", b"\r\n", b"\r\r\n\n\r"])
def test_a_run_of_blank_lines_ends_one_event(sse, ends):
    """The blank lines after the one that ends an event are passed over in one step (a
    flood of CRs once cost the twin 0.7 MB/s): wherever the run is cut, they dispatch
    nothing more and reset nothing more."""
    stream = b"data: 1\n" + ends * 300 + b"event: e\n" + ends * 3 + b"data: 2\r" + ends + b"\n"
    for events in cut_in_two(sse, stream, 100):
        assert events == [("message", "", None, b"1"), ("message", "", None, b"2")]


def test_the_sdk_shape_counts_its_event_line(sse):
    """Under a limit of 7, "event: message" (14 bytes) is past 7 + 6 whole or cut, and the
    SDK shape's shortcut must say so too."""
    stream = b"event: message\r\ndata: 1\r\n\r\n"
    for events in cut_in_two(sse, stream, 7):
        assert events == [("message", "", None, (None, "event exceeds 7 bytes"))]
    assert [e.message for e in run(sse, stream, max_event_bytes=8, classify=bytes)] == [b"1"]


@pytest.mark.parametrize("size", [10 * 1024 * 1024, 1024 * 1024 + 1000],
                         ids=["runs on for ten limits", "ends in the chunk that passes the limit"])
def test_memory_stays_within_the_limit_and_a_chunk(sse, size):
    limit, chunk = 1024 * 1024, 64 * 1024
    body = b"data: " + R + b'"id":5,"result":{"text":"' + b"x" * size
    if size < 2 * limit:
        body += b'"}}\n'  # the line's end arrives with the bytes that take it past the limit
    parser = sse.EventStreamParser(max_event_bytes=limit)
    pieces = [body[start : start + chunk] for start in range(0, len(body), chunk)]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        events = []
        for piece in pieces:
            events += parser.feed(piece)
            assert parser.buffered_bytes <= limit + len(b"data: ")
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert peak <= limit * 1.25 + 2 * chunk, peak  # bytearray rounds its growth up by 1/8
    (refusal,) = events
    assert refusal.message.id == 5
    assert [e.message.id for e in parser.feed(b'"}}\n\n' + AFTER)] == [8]
    assert parser.buffered_bytes == 0


# --- encode ---------------------------------------------------------------------------------


def test_encode_writes_what_the_sdk_server_writes(sse):
    assert sse.encode(RESPONSE) == b"event: message\r\ndata: " + RESPONSE + b"\r\n\r\n"
    assert (sse.encode(b'{"a":\n1}', id="s-1")
            == b'id: s-1\r\nevent: message\r\ndata: {"a":\r\ndata: 1}\r\n\r\n')
    assert (sse.encode(b"a\r\nb\rc", event="x")
            == b"event: x\r\ndata: a\r\ndata: b\r\ndata: c\r\n\r\n")
    assert sse.encode(bytearray(b"")) == b"event: message\r\ndata: \r\n\r\n"


def test_encode_takes_str_as_utf8_as_parse_does(sse, impl):
    text = '{"jsonrpc":"2.0","id":1,"result":{"text":"é\u2028😀"}}'
    assert sse.encode(text, id="1") == sse.encode(text.encode(), id="1")
    [event] = sse.EventStreamParser().feed(sse.encode(text))
    assert event.message == impl.parse(text)
    with pytest.raises(ValueError, match="surrogate"):
        sse.encode('{"a":"\ud800"}')  # not UTF-8, as parse refuses it


def test_events_and_parsers_are_subscriptable_as_generics(sse, router):
    # Annotations like EventStreamParser[Route] evaluate at run time on both implementations.
    assert sse.EventStreamParser[router.Route].__origin__ is sse.EventStreamParser
    assert sse.Event[router.Route].__origin__ is sse.Event
    parser = sse.EventStreamParser[router.Route](classify=router.route)
    assert [e.message.kind for e in parser.feed(sse.encode(RESPONSE))] == ["response"]


def test_encode_matches_sse_starlette_byte_for_byte(sse):
    sse_starlette = pytest.importorskip("sse_starlette", reason="sse-starlette (the SDK's SSE "
                                        "writer) is not installed")
    for message, id in ((RESPONSE, None), (b'{"a":\n1}', "7"), (b"", "s-0")):
        wanted = sse_starlette.ServerSentEvent(data=message.decode(), event="message", id=id)
        assert sse.encode(message, id=id) == wanted.encode()


@pytest.mark.parametrize(("event", "id"), [("a\nb", None), ("a\rb", None), ("message", "1\n"),
                                           ("message", "1\r"), ("message", "a\0b")])
def test_encode_refuses_what_would_not_come_back(sse, event, id):
    with pytest.raises(ValueError):
        sse.encode(b"{}", event=event, id=id)
    with pytest.raises(TypeError):
        sse.encode(7)  # type: ignore[arg-type]


ONE_LINE = st.text(max_size=8).filter(lambda text: not set(text) & set("\r\n\0"))


@given(message=st.binary(max_size=60), event=ONE_LINE, id=st.none() | ONE_LINE)
def test_encode_round_trips_through_the_parser(sse, message, event, id):
    (got,) = sse.EventStreamParser(classify=bytes).feed(sse.encode(message, event, id))
    data = message.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    assert (got.event, got.id) == (event or "message", id or "")
    assert got.message == (data if data.strip(b" \t\r\n") else None)


# --- oracles: httpx-sse, and the twin against the core --------------------------------------


def httpx_sse_whatwg(stream: bytes) -> list[tuple]:
    """httpx-sse's SSEDecoder on ``stream``, its departures from WHATWG undone:

    1. it does not skip a BOM at the start of the stream;
    2. ``retry`` goes through ``int()``, which takes signs, spaces, underscores and
       non-ASCII digits (WHATWG: ASCII digits only);
    3. a blank line dispatches an event whenever the event type, the id or retry is set,
       even with no data line; as the id persists, every blank line after the first id
       yields an empty event (WHATWG: no data line, no event);
    4. ``retry`` belongs to one event and is reset after it (WHATWG: it sets the stream's
       reconnection time, kept like the last event id; rpcline gives it with every event).
    """
    decoders = pytest.importorskip("httpx_sse._decoders", reason="httpx-sse (the SSE "
                                   "decoder oracle) and httpx are not installed")
    text = stream.decode("utf-8", "replace").removeprefix("\ufeff")  # 1
    line_decoder, decoder = decoders.SSELineDecoder(), decoders.SSEDecoder()
    events, has_data, retry = [], False, None
    for line in line_decoder.decode(text) + line_decoder.flush():
        field, _, value = line.partition(":")
        if field == "retry" and not (value.removeprefix(" ").isascii()
                                     and value.removeprefix(" ").isdigit()):
            continue  # 2
        has_data = has_data or field == "data"
        event = decoder.decode(line)
        if event is not None:
            retry = event.retry if event.retry is not None else retry  # 4
            if has_data:  # 3
                data = event.data if event.data.strip(" \t\r\n") else None
                events.append((event.event, event.id, retry, data))
        if not line:
            has_data = False
    return events


FIELD_LINES = st.sampled_from([
    b"data: " + RESPONSE, b"data: x", b"data:y", b"data:  z", b"data", b"data:", b"data: \xc3\xa9",
    b"data: \xff", b"event: e", b"event:", b"event: message", b"id: 1", b"id:", b"id: a\0b",
    b"id: \xe2\x82", b"retry: 10", b"retry: 007", b"retry: -1", b"retry: +5", b"retry:  3",
    b"retry: 1_0", b"retry: \xd9\xa1", b"retry", b": comment", b":", b"foo: bar", b"DATA: q",
    b"", b"", b"", b"event: message\r\ndata: " + RESPONSE + b"\r\n",
])
LINE_ENDS = st.sampled_from([b"\n", b"\r", b"\r\n"])
STREAMS = st.builds(
    lambda bom, lines: bom + b"".join(line + end for line, end in lines),
    st.sampled_from([b"", b"\xef\xbb\xbf"]),
    st.lists(st.tuples(FIELD_LINES, LINE_ENDS), max_size=14),
)


@given(stream=STREAMS)
def test_agrees_with_httpx_sse_cut_at_every_position(sse, stream):
    want = httpx_sse_whatwg(stream)
    for cut in range(len(stream) + 1):
        parser = sse.EventStreamParser(classify=bytes)
        events = parser.feed(stream[:cut]) + parser.feed(stream[cut:]) + parser.close()
        got = [(e.event, e.id, e.retry, e.message and e.message.decode("utf-8", "replace"))
               for e in events]
        assert got == want, (cut, stream)


@given(message=st.text(max_size=60), event=ONE_LINE, id=st.none() | ONE_LINE)
def test_encode_round_trips_through_httpx_sse(sse, message, event, id):
    # What a client on httpx-sse reads of what rpcline's server side wrote: the same
    # type, id and data (line ends normalised to LF, as every SSE reader joins lines).
    decoders = pytest.importorskip("httpx_sse._decoders", reason="httpx-sse is not installed")
    stream = sse.encode(message.encode(), event, id).decode()
    line_decoder, decoder = decoders.SSELineDecoder(), decoders.SSEDecoder()
    events = [decoded for line in line_decoder.decode(stream) + line_decoder.flush()
              if (decoded := decoder.decode(line)) is not None]
    assert len(events) == 1, stream
    (got,) = events
    assert (got.event, got.id) == (event or "message", id or "")
    assert got.data == message.replace("\r\n", "\n").replace("\r", "\n")


def test_the_oracle_departs_where_the_docs_say(sse):
    decoders = pytest.importorskip("httpx_sse._decoders", reason="httpx-sse is not installed")
    plain = decoders.SSEDecoder()
    dispatched = [plain.decode(line) for line in ("id: 1", "data: a", "", "", "retry: +5", "")]
    assert [e and (e.data, e.retry) for e in dispatched] == [
        None, None, ("a", None), ("", None), None, ("", 5)]  # departures 2, 3 and 4
    assert httpx_sse_whatwg(b"id: 1\ndata: a\n\n\nretry: +5\n\n") == [("message", "1", None, "a")]


@pytest.mark.c_extension
@given(stream=st.lists(st.tuples(FIELD_LINES | st.just(b"data: " + BIG), LINE_ENDS), max_size=14)
       .map(lambda lines: b"".join(line + end for line, end in lines)),
       chunks=st.lists(st.integers(1, 80), min_size=1, max_size=6),
       limit=st.sampled_from([20, 100, 10**6]), routes=st.booleans())
def test_the_twin_and_the_core_agree_on_random_streams(c_module, py_module, stream, chunks, limit,
                                                       routes):
    sse_c = importlib.import_module(c_module.__name__.replace(".message_", ".sse_"))
    before, results = sse_c.line_end_path(), []
    try:
        # The core under each of its line-end scans, then the twin.
        for message_module, path in [*((c_module, path) for path in sse_c.LINE_END_PATHS),
                                     (py_module, None)]:
            sse = importlib.import_module(message_module.__name__.replace(".message_", ".sse_"))
            router = importlib.import_module(
                message_module.__name__.replace(".message_", ".route_"))
            if path:
                sse.use_line_end_path(path)
            parser = sse.EventStreamParser(limit, classify=router.route if routes else
                                           message_module.parse)
            events, held, start, sizes = [], [], 0, iter(chunks * (len(stream) + 1))
            while start < len(stream):
                size = next(sizes)
                events += parser.feed(stream[start : start + size])
                held.append(parser.buffered_bytes)
                start += size
            results.append(([describe_event(e) for e in events + parser.close()], held))
    finally:
        sse_c.use_line_end_path(before)
    assert all(result == results[-1] for result in results)


# Lines of every field around the limits below, so that a line fits or passes the limit by
# a few bytes with the data held before it: the cases where a cut once changed the result.
LONG_LINES = st.builds(lambda head, size, fill: head + fill * size,
                       st.sampled_from([b":", b"id: ", b"event: ", b"retry: ", b"foo: ", b"foo",
                                        b"data: ", b"data:", b"data: " + SMALL[:20]]),
                       st.integers(0, 130), st.sampled_from([b"x", b"1", b" "]))
CUT_STREAMS = st.lists(st.tuples(FIELD_LINES | LONG_LINES | st.sampled_from([b"data: " + SMALL]),
                                 LINE_ENDS), max_size=12).map(
    lambda lines: b"".join(line + end for line, end in lines))
SIZES = st.lists(st.integers(1, 60), min_size=1, max_size=6)  # chunk sizes, taken in turn


def fed_cut(sse: ModuleType, stream: bytes, sizes: list[int], limit: int, classify) -> list:
    """describe_event of every event, ``stream`` fed whole (``sizes`` empty) or in chunks of
    ``sizes`` taken in turn."""
    parser, events, start = sse.EventStreamParser(limit, classify=classify), [], 0
    for size in itertools.cycle(sizes or [len(stream) + 1]):
        events += parser.feed(stream[start : start + size])
        start += size
        if start >= len(stream):
            break
    return [describe_event(e) for e in events + parser.close()]


@given(stream=CUT_STREAMS, sizes=SIZES, limit=st.sampled_from([7, 20, 64, 100, 10**6]),
       classify=st.sampled_from(["parse", "route", "bytes"]))
def test_where_the_stream_is_cut_changes_nothing(impl, sse, router, stream, sizes, limit, classify):
    function = {"parse": impl.parse, "route": router.route, "bytes": bytes}[classify]
    assert fed_cut(sse, stream, sizes, limit, function) == fed_cut(sse, stream, [], limit, function)


@pytest.mark.c_extension
@given(stream=CUT_STREAMS, sizes=SIZES, limit=st.sampled_from([7, 20, 64, 100, 10**6]),
       routes=st.booleans())
def test_the_core_cut_anywhere_gives_the_twin_whole(c_module, py_module, stream, sizes, limit,
                                                   routes):
    results = []
    for module in (c_module, py_module):
        sse = importlib.import_module(module.__name__.replace(".message_", ".sse_"))
        router = importlib.import_module(module.__name__.replace(".message_", ".route_"))
        classify = router.route if routes else module.parse
        results.append(fed_cut(sse, stream, sizes if module is c_module else [], limit, classify))
    assert results[0] == results[1]
