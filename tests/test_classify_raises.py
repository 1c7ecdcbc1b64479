"""A ``classify`` that raises leaves the framing intact (issue 29, item 14).

``StreamParser`` and ``sse.EventStreamParser`` used to splice lines after it: a line
completed from an earlier chunk stayed pending, so the next ones were glued to it, or
the rest of the chunk was dropped and what followed handed over as a line of its own.
Now the line (or event) whose ``classify`` raised is consumed, the exception goes to the
caller, and nothing else is lost: the results already made and the rest of the chunk
are kept, and the next ``feed`` (or ``close``) returns them first. Both implementations.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import pytest
from hypothesis import given
from hypothesis import strategies as st


class Boom(Exception):
    pass


class Classify:
    """Records every line it is given; raises on those holding ``!``."""

    def __init__(self) -> None:
        self.got: list[bytes] = []

    def __call__(self, line: bytes) -> bytes:
        line = bytes(line)
        self.got.append(line)
        if b"!" in line:
            raise Boom(line)
        return line


@pytest.fixture(scope="session")
def stream(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".stream_"))


@pytest.fixture(scope="session")
def sse(impl: ModuleType) -> ModuleType:
    return importlib.import_module(impl.__name__.replace(".message_", ".sse_"))


def drive(parser: object, chunks: list[bytes]) -> tuple[list, int]:
    """Feed every chunk and close, as a caller that logs classify's errors and goes on."""
    results, raised = [], 0
    for chunk in chunks:
        try:
            results += parser.feed(chunk)
        except Boom:
            raised += 1
    for _ in range(sum(map(len, chunks)) + 2):  # a close that raised owes the rest to the next
        try:
            results += parser.close()
            break
        except Boom:
            raised += 1
    return results, raised


# --- StreamParser ----------------------------------------------------------------------------


def test_the_issues_case_a_line_completed_from_an_earlier_chunk(stream: ModuleType) -> None:
    classify = Classify()
    parser = stream.StreamParser(classify=classify)
    assert parser.feed(b"A1\nX!") == [b"A1"]
    with pytest.raises(Boom):
        parser.feed(b"2\nC3\nD")  # X!2 raises: C3 and the start of D4 are kept
    assert parser.feed(b"4\nE5\n") == [b"C3", b"D4", b"E5"]
    assert classify.got == [b"A1", b"X!2", b"C3", b"D4", b"E5"]
    assert parser.close() == []


def test_results_before_the_raise_are_returned_by_the_next_call(stream: ModuleType) -> None:
    parser = stream.StreamParser(classify=Classify())
    with pytest.raises(Boom):
        parser.feed(b"A1\nB2\nC!\nD4\nE")
    assert parser.feed(b"") == [b"A1", b"B2", b"D4"]
    assert parser.close() == [b"E"]


def test_close_that_raises_owes_the_rest_to_the_next_close(stream: ModuleType) -> None:
    parser = stream.StreamParser(classify=Classify())
    with pytest.raises(Boom):
        parser.feed(b"A1\nB!\nC3\nD!")  # B! raises; C3 and D! wait
    with pytest.raises(Boom):
        parser.close()  # C3 is classified, then D! raises
    with pytest.raises(ValueError, match="after close"):
        parser.feed(b"x\n")  # the stream has ended all the same
    assert parser.close() == [b"A1", b"C3"]  # A1 from the feed, C3 from the first close
    assert parser.close() == []


def test_an_over_long_line_after_a_raise_is_still_refused_once(stream: ModuleType) -> None:
    parser = stream.StreamParser(max_line_bytes=4, classify=Classify())
    with pytest.raises(Boom):
        parser.feed(b"!\nlong line\nok\n")
    results = parser.feed(b"")
    assert [type(r).__name__ for r in results] == ["Refused", "bytes"]
    assert results[0].error.reason == "line exceeds 4 bytes" and results[1] == b"ok"


LINES = st.lists(st.sampled_from([b"A1", b"B!", b"C3", b"", b" ", b"D!4", b"E" * 12, b"F!" * 6]),
                 max_size=12)


@given(lines=LINES, cuts=st.lists(st.integers(0, 120), max_size=6), final_lf=st.booleans())
def test_any_chunking_gives_every_line_once(stream: ModuleType, lines: list, cuts: list,
                                            final_lf: bool) -> None:
    data = b"\n".join(lines) + (b"\n" if final_lf else b"")
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    classify = Classify()
    parser = stream.StreamParser(max_line_bytes=10, classify=classify)
    results, raised = drive(parser, [data[a:b] for a, b in zip(bounds, bounds[1:])])
    named = [line for line in data.split(b"\n") if line.strip(b" \t\r")]
    assert classify.got == [line for line in named if len(line) <= 10]  # each line, exactly
    assert raised == sum(b"!" in line for line in classify.got)
    kept = [line for line in named if len(line) > 10 or b"!" not in line]
    assert [r if type(r) is bytes else "refused" for r in results] == [
        "refused" if len(line) > 10 else line for line in kept]


# --- EventStreamParser ----------------------------------------------------------------------


def test_an_event_whose_classify_raised_is_consumed_and_the_rest_kept(sse: ModuleType) -> None:
    classify = Classify()
    parser = sse.EventStreamParser(classify=classify)
    assert [e.message for e in parser.feed(b"data: A1\n\nevent: x\ndata: B!")] == [b"A1"]
    with pytest.raises(Boom):
        parser.feed(b"\n\ndata: C3\n\ndata: D")  # B! raises: C3 and the start of D4 are kept
    events = parser.feed(b"4\n\n")
    assert [(e.event, e.message) for e in events] == [("message", b"C3"), ("message", b"D4")]
    assert classify.got == [b"A1", b"B!", b"C3", b"D4"]


def test_the_sdk_frame_that_raises_is_consumed(sse: ModuleType) -> None:
    frame = b"event: message\r\ndata: %s\r\n\r\n"
    parser = sse.EventStreamParser(classify=Classify())
    with pytest.raises(Boom):
        parser.feed(frame % b"A1" + frame % b"B!" + frame % b"C3" + b"data: D")
    assert [e.message for e in parser.feed(b"4\r\n\r\n")] == [b"A1", b"C3", b"D4"]


def test_a_cr_ending_the_chunk_after_a_raise_still_pairs_with_its_lf(sse: ModuleType) -> None:
    parser = sse.EventStreamParser(classify=Classify())
    with pytest.raises(Boom):
        parser.feed(b"data: B!\r\r")  # the blank line's CR ends the chunk
    assert [e.message for e in parser.feed(b"\ndata: C3\r\n\r\n")] == [b"C3"]


def test_sse_close_returns_what_a_raise_left(sse: ModuleType) -> None:
    parser = sse.EventStreamParser(classify=Classify())
    with pytest.raises(Boom):
        parser.feed(b"data: A1\n\ndata: B!\n\ndata: C3\n\ndata: unfinished")
    assert [e.message for e in parser.close()] == [b"A1", b"C3"]
    assert parser.close() == []


EVENTS = st.lists(st.sampled_from([b"data: A1\n\n", b"data: B!\n\n", b"event: e\ndata: C\r\n\r\n",
                                   b"data: D!\ndata: 4\r\r", b": c\n\n", b"data: " + b"E" * 30 + b"\n\n",
                                   b"event: message\r\ndata: F!\r\n\r\n",
                                   b"event: message\r\ndata: G\r\n\r\n"]), max_size=10)  # fmt: skip


@given(events=EVENTS, cuts=st.lists(st.integers(0, 200), max_size=6))
def test_sse_any_chunking_gives_every_event_once(sse: ModuleType, events: list, cuts: list) -> None:
    data = b"".join(events)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    chunks = [data[a:b] for a, b in zip(bounds, bounds[1:])]
    plain = sse.EventStreamParser(20, classify=bytes)
    want = [(e.event, e.message) for e in plain.feed(data) + plain.close()]
    classify = Classify()
    got, raised = drive(sse.EventStreamParser(20, classify=classify), chunks)
    assert classify.got == [m for _, m in want if type(m) is bytes]  # each event's data, once
    assert raised == sum(b"!" in m for m in classify.got)
    assert [(e.event, e.message) for e in got] == [
        (event, m) for event, m in want if type(m) is not bytes or b"!" not in m]
