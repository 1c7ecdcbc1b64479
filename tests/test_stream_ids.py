"""Over-long lines keep their id, and streams can route instead of parse.

A line over ``max_line_bytes`` is refused with the id its first ``max_line_bytes`` bytes
name (``prefix_id``), so the caller can answer it and nobody waits forever; a
``StreamParser(classify=route)`` yields ``Route`` objects, the over-long refusal included.
"""

from __future__ import annotations

import importlib
import pickle
from types import ModuleType

import pytest

R = b'{"jsonrpc":"2.0",'
BIG_RESULT = R + b'"id":7,"result":{"content":[{"type":"text","text":"' + b"x" * 500 + b'"}]}}'


@pytest.fixture(scope="session")
def stream(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".stream_"))


@pytest.fixture(scope="session")
def router(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".route_"))


# --- prefix_id: what a cut line still says -----------------------------------------------

PREFIXES = [
    # (prefix, id): the last complete top-level id member, read as step 4 reads it
    (R + b'"id":7,"result":{"a":', 7),
    (R + b'"id":"abc","result":"xx', "abc"),
    (b'  {"id":"\\u00e9t\\u00e9","method":"x","params":{', "\u00e9t\u00e9"),
    (R + b'"id":12', None),                       # the integer may go on: 123...
    (R + b'"id":12 ', 12),                        # whitespace ends it
    (R + b'"id":"ab', None),                      # an unfinished string
    (R + b'"id":1,"id":2,"result":[1,2', 2),      # duplicates: the last one seen
    (R + b'"id":null,"result":{', None),          # step 4: null is no id
    (R + b'"id":1.5,"result":{', None),           # nor a fraction
    (R + b'"id":true,"result":{', None),          # nor a bool
    (R + b'"id":18446744073709551616,"r":', None),  # beyond orjson's int: a float
    (R + b'"id":-9223372036854775808,"r":', -(2**63)),
    (b'{"result":{"id":5,"x":', None),            # a nested id is not the line's
    (b'[{"id":5},', None),                        # a batch
    (b'INFO {"id":5,', None),                     # not JSON at all
    (b'{"id":5,,"result":"' + b"x" * 40, None),   # broken before the cut: not trusted
    (R + b'"id":5,"result":"caf\xc3', 5),         # cut inside a UTF-8 sequence
    (R + b'"id":5,"result":"\\ud83d\\ude', 5),    # cut inside a surrogate pair escape
    (R + b'"id":5,"result":"\\u00', 5),           # cut inside an escape
    (R + b'"id":5}', 5),                          # complete: whitespace could follow
    (R + b'"id":5} x', None),                     # content after the document
    (b"", None),
    (b"{", None),
]


@pytest.mark.parametrize(("prefix", "want"), PREFIXES)
def test_prefix_id(router, prefix, want):
    got = router.prefix_id(prefix)
    assert (type(got), got) == (type(want), want)


@pytest.mark.parametrize(("prefix", "want"), PREFIXES)
def test_the_twin_reads_a_bytearray_prefix_in_place(prefix, want):
    from rpcline._core.route_py import prefix_id

    got = prefix_id(bytearray(prefix))
    assert (type(got), got) == (type(want), want)


def test_prefix_id_at_every_cut_of_a_response(router):
    """Cut anywhere after the id's value has ended, the id is read; before, it is not."""
    line = R + b'"id":"r-1","result":{"text":"\xc3\xa9\\n\\u00e9 \xf0\x9f\x98\x80","n":[1,2.5,true]}}'
    id_end = line.index(b'"r-1"') + len(b'"r-1"')
    for cut in range(len(line)):
        want = "r-1" if cut >= id_end else None
        assert router.prefix_id(line[:cut]) == want, line[:cut]


# --- the stream's refusal ----------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 7, 64, 10_000])
def test_an_over_long_response_is_refused_with_its_id(impl, stream, chunk):
    data = BIG_RESULT + b"\n" + R + b'"id":8,"result":{}}\n'
    parser, results = stream.StreamParser(max_line_bytes=100), []
    for start in range(0, len(data), chunk):
        results += parser.feed(data[start:start + chunk])
    results += parser.close()
    assert [type(r).__name__ for r in results] == ["Refused", "ClientResponse"]
    assert results[0].id == 7 and type(results[0].id) is int
    assert type(results[0].error) is impl.ParseError
    assert results[0].error.reason == "line exceeds 100 bytes"
    assert results[1].id == 8


def test_an_over_long_line_whose_id_lies_beyond_the_limit_has_none(stream):
    line = R + b'"result":{"text":"' + b"x" * 200 + b'"},"id":7}'
    (refused,) = stream.StreamParser(max_line_bytes=100).feed(line + b"\n")
    assert refused.id is None


def test_an_over_long_line_at_close_keeps_its_id_too(stream):
    parser = stream.StreamParser(max_line_bytes=50)
    (refused,) = parser.feed(BIG_RESULT)  # no LF yet: refused as soon as it passes the limit
    assert refused.id == 7
    assert parser.feed(b"tail of the same line") == []
    assert parser.close() == []


# --- classify: route (or any callable) ---------------------------------------------------


def test_a_routing_stream_gives_what_route_gives(stream, router):
    lines = [R + b'"id":1,"method":"tools/list"}', R + b'"method":"notifications/x"}',
             R + b'"id":"1","result":{}}', b"INFO not json", b"[1]"]
    parser = stream.StreamParser(classify=router.route)
    results = parser.feed(b"\n".join(lines) + b"\n\n  \n") + parser.close()
    assert results == [router.route(line) for line in lines]
    assert [r.line for r in results] == lines
    assert parser.classify is router.route


def test_a_routing_stream_gives_large_lines_as_bytes(stream, router):
    line = R + b'"id":1,"result":{"text":"' + b"x" * 100_000 + b'"}}'
    chunk = bytearray(line + b"\n")
    (result,) = stream.StreamParser(classify=router.route).feed(chunk)
    chunk[:] = b"z" * len(chunk)  # the caller reuses its buffer: the Route keeps its own bytes
    assert result.kind == "response" and result.line == line and type(result.line) is bytes


def test_a_routing_stream_refuses_an_over_long_line_with_a_route(impl, stream, router):
    parser = stream.StreamParser(max_line_bytes=100, classify=router.route)
    (refused,) = parser.feed(BIG_RESULT + b"\n")
    assert type(refused) is router.Route
    assert (refused.kind, refused.id, refused.method, refused.line) == ("refused", 7, None, None)
    assert type(refused.error) is impl.ParseError
    assert refused.error.reason == "line exceeds 100 bytes"
    # The members complete within the limit keep their spans: the id, no method, and a
    # result not seen whole (a relay tells a request from an answer by them).
    start = BIG_RESULT.index(b'"id":7') + 5
    assert (refused.id_span, refused.method_span, refused.result_span) == ((start, start + 1),
                                                                           None, None)
    assert pickle.loads(pickle.dumps(refused)) == refused
    with pytest.raises(ValueError):
        refused.with_id(1)


def test_an_over_long_request_keeps_its_method_span_and_pickles_with_it(stream, router):
    line = R + b'"id":7,"method":"sampling/createMessage","params":{"s":"' + b"x" * 500 + b'"}}'
    (refused,) = stream.StreamParser(max_line_bytes=100, classify=router.route).feed(line + b"\n")
    start = line.index(b'"sampling')
    assert (refused.id, refused.method, refused.line) == (7, None, None)
    assert refused.method_span == (start, start + len(b'"sampling/createMessage"'))
    assert pickle.loads(pickle.dumps(refused)).method_span == refused.method_span


def test_any_callable_classifies_and_an_over_long_line_is_a_refused(impl, stream):
    seen = []
    parser = stream.StreamParser(max_line_bytes=100, classify=lambda line: seen.append(line) or len(line))
    results = parser.feed(b"abc\n" + BIG_RESULT + b"\nde\n")
    assert results[0] == 3 and results[2] == 2 and seen == [b"abc", b"de"]
    assert type(results[1]) is impl.Refused and results[1].id == 7


def test_classify_must_be_callable(stream):
    with pytest.raises(TypeError, match="classify must be callable"):
        stream.StreamParser(classify="route")


def test_method_span_marks_the_method_member_whatever_its_type(router):
    line = R + b'"id":1,"method":5,"result":{}}'
    r = router.route(line)
    assert r.kind == "refused" and r.method is None
    start, end = r.method_span
    assert line[start:end] == b"5"
    assert router.route(R + b'"id":1,"result":{}}').method_span is None
