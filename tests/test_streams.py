"""parse_lines and StreamParser: every line but a blank one yields exactly parse(line)."""

from __future__ import annotations

import importlib
import tracemalloc
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
NOTE = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
BOM = b"\xef\xbb\xbf"


@pytest.fixture(scope="session")
def stream(impl: ModuleType) -> ModuleType:
    """The stream module of the implementation under test (stream_c or stream_py)."""
    return importlib.import_module(impl.__name__.replace(".message_", ".stream_"))


def fields(result: object) -> tuple[object, ...]:
    """A result as plain values, so results of the two implementations compare."""
    error = result.error if type(result).__name__ == "Refused" else None
    return (
        type(result).__name__,
        type(getattr(result, "id", None)),
        getattr(result, "id", None),
        getattr(result, "method", None),
        getattr(result, "params", None),
        getattr(result, "body", None),
        error and (error.code, error.reason),
    )


def feed_all(parser, chunks) -> list:
    results = []
    for chunk in chunks:
        results += parser.feed(chunk)
    return results + parser.close()


def expected(impl: ModuleType, lines: list[bytes]) -> list:
    return [impl.parse(line) for line in lines if line.strip(b" \t\r")]


def test_parse_lines_classifies_each_line_and_an_unterminated_last_one(impl, stream):
    data = REQUEST + b"\n" + NOTE + b"\r\n\n   \t\r\nINFO started\n" + REQUEST
    results = stream.parse_lines(data)
    assert results == expected(impl, [REQUEST, NOTE + b"\r", b"INFO started", REQUEST])
    assert [type(r).__name__ for r in results] == [
        "Request", "Notification", "Refused", "Request"
    ]


@pytest.mark.parametrize("kind", [bytes, bytearray, memoryview, lambda b: b.decode()])
def test_parse_lines_takes_every_buffer_type(impl, stream, kind):
    data = REQUEST + b"\n" + NOTE + b"\n"
    assert stream.parse_lines(kind(data)) == [impl.parse(REQUEST), impl.parse(NOTE)]


def test_parse_lines_of_nothing_is_empty(stream):
    assert stream.parse_lines(b"") == []
    assert stream.parse_lines(b"\n\n \r\n") == []
    assert stream.parse_lines("") == []


def test_a_lone_cr_does_not_end_a_line(impl, stream):
    data = REQUEST + b"\r" + NOTE + b"\n"
    [result] = stream.parse_lines(data)
    assert result == impl.parse(REQUEST + b"\r" + NOTE)
    assert type(result).__name__ == "Refused"


def test_bom_is_skipped_only_at_the_start(impl, stream):
    [first, second] = stream.parse_lines(BOM + REQUEST + b"\n" + BOM + REQUEST)
    assert first == impl.parse(REQUEST)
    assert second.error.code == -32700  # a BOM later is part of its line


@pytest.mark.parametrize("split", [1, 2, 3])
def test_bom_split_across_the_first_chunks(impl, stream, split):
    parser = stream.StreamParser()
    data = BOM + REQUEST + b"\n"
    assert feed_all(parser, [data[:split], data[split:]]) == [impl.parse(REQUEST)]


def test_partial_bom_prefix_at_close_is_a_line(stream):
    parser = stream.StreamParser()
    assert parser.feed(b"\xef\xbb") == []
    [result] = parser.close()
    assert result.error.code == -32700


def test_crlf_split_between_chunks(impl, stream):
    parser = stream.StreamParser()
    assert parser.feed(REQUEST + b"\r") == []
    assert parser.feed(b"\n") == [impl.parse(REQUEST + b"\r")]
    assert parser.close() == []


def test_one_message_across_many_chunks_and_many_in_one(impl, stream):
    parser = stream.StreamParser()
    chunks = [REQUEST[i : i + 3] for i in range(0, len(REQUEST), 3)] + [b"\n"]
    assert feed_all(parser, chunks) == [impl.parse(REQUEST)]
    parser = stream.StreamParser()
    many = (REQUEST + b"\n") * 50
    assert parser.feed(many) == [impl.parse(REQUEST)] * 50


@settings(max_examples=150, deadline=None)
@given(
    lines=st.lists(
        st.one_of(
            st.sampled_from([REQUEST, NOTE, b"", b" \t", b"\r", b"INFO x", b"[1,2]", BOM + NOTE]),
            st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
        ),
        max_size=12,
    ),
    cuts=st.lists(st.integers(min_value=0, max_value=2000), max_size=8),
)
def test_any_chunking_gives_parse_of_each_line(impl, stream, lines, cuts):
    data = b"\n".join(lines)
    # The stream skips one BOM at its very start; every line after is parsed as given.
    want_lines = list(lines)
    if data.startswith(BOM):
        want_lines[0] = want_lines[0][len(BOM) :]
    want = [fields(r) for r in expected(impl, want_lines)]
    points = sorted({min(c, len(data)) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *points], [*points, len(data)])]
    assert [fields(r) for r in feed_all(stream.StreamParser(), chunks)] == want
    assert [fields(r) for r in stream.parse_lines(data)] == want


def sized_request(size: int) -> bytes:
    """A request of exactly ``size`` bytes, the bulk in one string."""
    head, tail = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"text":"', b'"}}'
    return head + b"a" * (size - len(head) - len(tail)) + tail


# Around the size from which the Cython core decodes a line through a view of the buffer
# instead of a copy (16 KiB), and far past it; valid, truncated, stray and invalid UTF-8.
LARGE_LINES = [
    *(sized_request(size) for size in (16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 1 << 20)),
    sized_request(40_000)[:-2],
    b"x" * 40_000,
    sized_request(40_000).replace(b"aaaa", b"a\xffa", 1),
    b"  " + sized_request(20_000) + b" \r",
]


@pytest.mark.parametrize("chunk_size", [4096, 65536, 1 << 22])
def test_large_lines_give_parse_of_each_line(impl, stream, chunk_size):
    data = b"\n".join([REQUEST, *LARGE_LINES, NOTE]) + b"\n"
    want = [fields(r) for r in expected(impl, [REQUEST, *LARGE_LINES, NOTE])]
    chunks = [data[i : i + chunk_size] for i in range(0, len(data), chunk_size)]
    assert [fields(r) for r in feed_all(stream.StreamParser(), chunks)] == want
    assert [fields(r) for r in stream.parse_lines(data)] == want
    assert [fields(r) for r in stream.parse_lines(data[:-1])] == want  # no final LF


def test_results_outlive_the_chunk_they_came_from(impl, stream):
    line = sized_request(100_000)
    chunk = bytearray(line + b"\n" + line[:50_000])
    parser = stream.StreamParser()
    first = parser.feed(chunk)
    chunk[:] = b"z" * len(chunk)  # the caller reuses its buffer
    second = parser.feed(line[50_000:] + b"\n")
    assert [fields(r) for r in first + second] == [fields(impl.parse(line))] * 2


def test_line_at_the_limit_passes_and_one_byte_more_is_refused(impl, stream):
    parser = stream.StreamParser(max_line_bytes=len(REQUEST))
    results = feed_all(parser, [REQUEST + b"\n", REQUEST + b" \n", REQUEST])
    assert results[0] == impl.parse(REQUEST)
    # The refused line's first len(REQUEST) bytes are the whole request: its id is read.
    assert fields(results[1]) == fields(
        impl.Refused(impl.parse(REQUEST).id, impl.ParseError(f"line exceeds {len(REQUEST)} bytes"))
    )
    assert results[2] == impl.parse(REQUEST)


def test_over_long_line_is_refused_once_and_parsing_resumes(impl, stream):
    parser = stream.StreamParser(max_line_bytes=100)
    results = feed_all(parser, [b"x" * 60, b"y" * 60, b"z" * 500, b"\n" + REQUEST + b"\n"])
    assert [type(r).__name__ for r in results] == ["Refused", "Request"]
    assert results[0].error.reason == "line exceeds 100 bytes"
    assert results[0].id is None


def test_over_long_unterminated_line_yields_nothing_more_at_close(stream):
    parser = stream.StreamParser(max_line_bytes=10)
    assert len(parser.feed(b"a" * 11)) == 1
    assert parser.close() == []


def test_memory_stays_bounded_on_a_200_mb_line(impl, stream):
    limit = 1024 * 1024
    parser = stream.StreamParser(max_line_bytes=limit)
    chunk = b"x" * (64 * 1024)
    tracemalloc.start()
    try:
        refusals = 0
        for _ in range(200 * 16):  # 200 MB in 64 KB chunks
            refusals += len(parser.feed(chunk))
        tail = parser.feed(b"\n" + REQUEST + b"\n")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert refusals == 1
    assert tail == [impl.parse(REQUEST)]
    assert peak < 4 * limit


@pytest.mark.parametrize("limit", [0, -1])
def test_limit_must_be_positive(stream, limit):
    with pytest.raises(ValueError, match="positive"):
        stream.StreamParser(max_line_bytes=limit)


def test_limit_must_be_an_int(stream):
    with pytest.raises(TypeError):
        stream.StreamParser(max_line_bytes=1.5)


@pytest.mark.parametrize("chunk", ["text", 5, None, [b"x"]])
def test_chunks_must_be_bytes_like(stream, chunk):
    with pytest.raises(TypeError, match="bytes"):
        stream.StreamParser().feed(chunk)


def test_a_str_chunk_keeps_feeds_own_message(stream):
    with pytest.raises(TypeError) as refused:
        stream.StreamParser().feed("text")
    assert str(refused.value) == "feed() takes bytes, bytearray or memoryview, not str"


def test_parse_lines_names_itself_for_wrong_types(stream):
    for data in (5, None, [b"x"]):
        with pytest.raises(TypeError) as refused:
            stream.parse_lines(data)
        assert str(refused.value) == (
            f"parse_lines() takes str, bytes, bytearray or memoryview, not {type(data).__name__}"
        )


def test_parse_lines_given_a_text_file_says_how_to_read_one(stream, tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(REQUEST + b"\n")
    with open(path) as text, pytest.raises(TypeError) as refused:
        stream.parse_lines(text)
    message = str(refused.value)
    assert message.startswith("parse_lines() ") and "TextIOWrapper" in message
    assert "'rb'" in message and "sys.stdin.buffer" in message and "feed()" not in message
    with open(path, "rb") as binary, pytest.raises(TypeError, match="read_messages"):
        stream.parse_lines(binary)


@pytest.mark.parametrize("kind", [bytearray, memoryview])
def test_chunks_may_be_any_bytes_like(impl, stream, kind):
    parser = stream.StreamParser()
    assert parser.feed(kind(REQUEST + b"\n")) == [impl.parse(REQUEST)]


def test_non_contiguous_memoryview_chunk_is_read_as_its_bytes(impl, stream):
    doubled = bytes(b for b in REQUEST + b"\n" for _ in (0, 1))
    parser = stream.StreamParser()
    assert parser.feed(memoryview(doubled)[::2]) == [impl.parse(REQUEST)]


def test_feed_after_close_is_an_error(stream):
    parser = stream.StreamParser()
    parser.close()
    with pytest.raises(ValueError, match="close"):
        parser.feed(REQUEST)
    assert parser.close() == []


def test_default_limit_is_16_mib(stream):
    assert stream.StreamParser().max_line_bytes == 16 * 1024 * 1024


def test_stream_parser_is_subscriptable_as_a_generic(impl, stream):
    # StreamParser[Route] in an annotation evaluated at run time works on both implementations.
    route = importlib.import_module(impl.__name__.replace(".message_", ".route_")).route
    assert stream.StreamParser[int].__origin__ is stream.StreamParser
    parser = stream.StreamParser[object](classify=route)
    assert [r.kind for r in parser.feed(b'{"jsonrpc":"2.0","id":1,"result":{}}\n')] == ["response"]


@pytest.mark.parametrize(("module", "owner", "limit"), [
    ("stream", "StreamParser", "max_line_bytes"),
    ("sse", "EventStreamParser", "max_event_bytes"),
])
def test_parser_constructors_word_wrong_arguments_alike(impl, module, owner, limit):
    # The core said "__cinit__() takes at most 1 positional argument" (issue 31 item 8).
    cls = getattr(importlib.import_module(impl.__name__.replace(".message_", f".{module}_")), owner)
    for args, kwargs, message in [
        ((1, 2), {}, f"{owner}() takes at most 1 positional argument (2 given)"),
        ((), {"foo": 1}, f"{owner}() got an unexpected keyword argument 'foo'"),
        ((5,), {limit: 1}, f"{owner}() got multiple values for argument {limit!r}"),
    ]:
        with pytest.raises(TypeError) as refused:
            cls(*args, **kwargs)
        assert str(refused.value) == message
    assert getattr(cls(**{limit: 7}), limit) == 7
