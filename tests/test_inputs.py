"""What ``parse`` accepts: str, bytes, bytearray and memoryview (subclasses and
non-contiguous views included), classified by their content; anything else is a
``TypeError`` naming the type; and it never raises for any text or bytes."""

from __future__ import annotations

import array
import re

import pytest
from _support import describe
from hypothesis import given
from hypothesis import strategies as st

LINES = [
    '{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\u00e9"}}',
    '{"jsonrpc":"2.0","id":"1","method":"m"}',
    '{"jsonrpc":"2.0","method":"n","params":[1]}',
    '{"jsonrpc":"2.0","id":2,"result":{}}',
    '{"jsonrpc":"2.0","id":null,"method":"m"}',
    '{"jsonrpc":"2.0","id":3,"method":"m","params":null}',
    "[]",
    "5",
    "",
    "   ",
    "  INFO listening on :8080",
    '{"jsonrpc":"2.0","method":"m"} trailing',
    '{"jsonrpc":"2.0","method":"\ud800"}',
]
LINE = pytest.mark.parametrize("line", LINES, ids=repr)


def utf8(line: str) -> bytes:
    return line.encode("utf-8", "surrogatepass")


# --- subclasses --------------------------------------------------------------------------


class Text(str):
    pass


class Data(bytes):
    pass


class Buffer(bytearray):
    pass


@LINE
def test_subclasses_are_classified_like_their_base(impl, line):
    assert describe(impl.parse(Text(line))) == describe(impl.parse(line))
    raw = utf8(line)
    assert describe(impl.parse(Data(raw))) == describe(impl.parse(raw))
    assert describe(impl.parse(Buffer(raw))) == describe(impl.parse(bytearray(raw)))


DECOY = '{"jsonrpc":"2.0","id":666,"method":"decoy"}'


class DecoyText(str):
    """A str subclass whose conversion and sequence methods all lie about its content."""

    def __str__(self):
        return DECOY

    def __getitem__(self, index):
        return DECOY[index]

    def __iter__(self):
        return iter(DECOY)

    def __len__(self):
        return len(DECOY)


class _DecoyBytesMethods:
    """Conversion and sequence methods that all lie about a bytes-like object's content."""

    def __bytes__(self):
        return DECOY.encode()

    def __getitem__(self, index):
        return DECOY.encode()[index]

    def __iter__(self):
        return iter(DECOY.encode())

    def __len__(self):
        return len(DECOY)


class DecoyData(_DecoyBytesMethods, bytes):
    pass


class DecoyBuffer(_DecoyBytesMethods, bytearray):
    pass


@pytest.mark.parametrize("line", [LINES[2], LINES[10]], ids=["notification", "stray"])
@pytest.mark.parametrize("kind", [DecoyText, DecoyData, DecoyBuffer], ids=lambda k: k.__name__)
def test_a_subclass_is_read_by_its_content_not_its_overrides(impl, line, kind):
    # "A subclass is handed to the decoder as its base type": its own data, whatever
    # __str__, __bytes__ or the sequence methods of the subclass say.
    data = line if kind is DecoyText else utf8(line)
    assert describe(impl.parse(kind(data))) == describe(impl.parse(data))


# --- memoryviews -------------------------------------------------------------------------


def strided_1d(raw: bytes) -> memoryview:
    """A non-contiguous 1-D view (every other byte of an interleaved buffer) over ``raw``."""
    interleaved = bytes(b for byte in raw for b in (byte, 0x23))
    return memoryview(interleaved)[::2]


def strided_2d(raw: bytes) -> memoryview:
    """A non-contiguous 2-D view: every other row of a (rows, 2) buffer holds ``raw``."""
    raw = raw or b" "  # at least one row
    if len(raw) % 2:
        raw += b" "
    padded = b"".join(raw[i : i + 2] + b"##" for i in range(0, len(raw), 2))
    return memoryview(padded).cast("B", (len(padded) // 2, 2))[::2]


def contiguous_2d(raw: bytes) -> memoryview:
    raw = raw or b" "
    if len(raw) % 2:
        raw += b" "
    return memoryview(raw).cast("B", (len(raw) // 2, 2))


VIEWS = {
    "strided 1-D": strided_1d,
    "strided 2-D": strided_2d,
    "reversed twice": lambda raw: memoryview(raw[::-1])[::-1],
    "C-contiguous 2-D": contiguous_2d,
    "slice of a larger buffer": lambda raw: memoryview(b"[1]" + raw + b"xyz")[3:-3],
    "of a bytearray": lambda raw: memoryview(bytearray(raw)),
    "of an array": lambda raw: memoryview(array.array("B", raw)),
    "format c": lambda raw: memoryview(raw).cast("c"),
    "format H": lambda raw: memoryview(raw + b" " * (len(raw) % 2)).cast("H"),
}


@LINE
@pytest.mark.parametrize("view_name", list(VIEWS))
def test_memoryviews_are_classified_as_their_bytes(impl, line, view_name):
    view = VIEWS[view_name](utf8(line))
    assert describe(impl.parse(view)) == describe(impl.parse(view.tobytes()))


@LINE
def test_buffers_are_released(impl, line):
    # A buffer export left behind would make the bytearray impossible to resize.
    buffer = bytearray(utf8(line))
    impl.parse(buffer)
    buffer.extend(b" ")
    view = memoryview(buffer)
    impl.parse(view)
    view.release()
    buffer.extend(b" ")
    impl.parse(strided_1d(bytes(buffer)))
    impl.parse(Buffer(buffer))
    buffer.extend(b" ")


def test_strided_views_really_are_non_contiguous():
    # Guards the helpers: the cases above must exercise the copying path.
    raw = utf8(LINES[0])
    assert not strided_1d(raw).c_contiguous
    assert not strided_2d(raw).c_contiguous
    assert strided_1d(raw).tobytes() == raw
    assert strided_2d(raw).tobytes().rstrip(b" ") == raw
    assert contiguous_2d(raw).ndim == 2 and contiguous_2d(raw).c_contiguous


# --- other types -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [5, None, [], object(), 1.5, {"jsonrpc": "2.0"}, ("{}",), array.array("B", b"{}"),
     iter([b"{}"]), True],
    ids=lambda v: type(v).__name__,
)
def test_other_types_are_a_type_error_naming_the_type(impl, value):
    with pytest.raises(TypeError, match=rf"\b{re.escape(type(value).__name__)}\b"):
        impl.parse(value)


# --- never raises ------------------------------------------------------------------------

KINDS = {"Request", "Notification", "ClientResponse", "Refused"}

# Every code point, lone surrogates included (text() leaves them out by default, and
# merges character strategies, so the text is joined from a list instead).
ANY_CHARACTER = st.one_of(
    st.characters(),
    st.characters(categories=["Cs"]),
    st.sampled_from(' \t\r\n{}[]":,0123456789-+.eEtrufalsn\\'),
)
ANY_TEXT = st.lists(ANY_CHARACTER, max_size=100).map("".join)


def _check_result(impl, result):
    assert type(result).__name__ in KINDS
    if type(result).__name__ == "Refused":
        assert isinstance(result.error, impl.ProtocolError)
        assert type(result.error.reason) is str
        if type(result.error).__name__ == "ParseError":
            assert result.id is None


@given(data=st.binary(max_size=200), form=st.sampled_from(["bytes", "bytearray", "memoryview",
                                                            "strided"]))
def test_never_raises_for_bytes(impl, data, form):
    line = {
        "bytes": lambda: data,
        "bytearray": lambda: bytearray(data),
        "memoryview": lambda: memoryview(data),
        "strided": lambda: strided_1d(data),
    }[form]()
    _check_result(impl, impl.parse(line))


@given(text=ANY_TEXT)
def test_never_raises_for_text(impl, text):
    _check_result(impl, impl.parse(text))
    _check_result(impl, impl.parse(Text(text)))
    _check_result(impl, impl.parse(utf8(text)))


def test_text_strategy_reaches_surrogates():
    # Guards the strategy: it must be able to produce lone surrogates at all.
    found = []

    @given(ANY_TEXT)
    def probe(text):
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            found.append(text)

    probe()
    assert found
