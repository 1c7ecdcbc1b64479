"""The Cython core and the pure-Python twin agree on every input, field by field.

Results of the two are different classes, so they are compared through ``describe``
(kind, each field with its type, the error's class name, code and reason), never with
``==`` across implementations.
"""

from __future__ import annotations

import json
from collections import Counter

import orjson
import pytest
from _support import describe
from _traffic import traffic_lines
from hypothesis import given, settings
from hypothesis import strategies as st

both = pytest.mark.c_extension  # the cross-checks need the Cython core too



def assert_twins_agree(c_module, py_module, line):
    assert describe(c_module.parse(line)) == describe(py_module.parse(line)), line


# --- generating JSON-RPC-shaped lines ----------------------------------------------------


class Raw(str):
    """JSON text written verbatim: number spellings and escapes json.dumps never makes."""


ABSENT = object()


def encode(value: object, ensure_ascii: bool = False) -> str:
    """JSON for ``value``: ints of any size, ``Raw`` pieces verbatim, members in order."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, list):
        return "[" + ",".join(encode(v, ensure_ascii) for v in value) + "]"
    if isinstance(value, Members):
        return value.encode(ensure_ascii)
    if isinstance(value, dict):
        return Members(list(value.items())).encode(ensure_ascii)
    return json.dumps(value, ensure_ascii=ensure_ascii, allow_nan=False)


class Members:
    """An object as a list of (name, value) pairs, so duplicate names can be written."""

    def __init__(self, pairs, separators=(",", ":")):
        self.pairs, self.separators = pairs, separators

    def encode(self, ensure_ascii: bool = False) -> str:
        item, key = self.separators
        return "{" + item.join(
            encode(k, ensure_ascii) + key + encode(v, ensure_ascii) for k, v in self.pairs
        ) + "}"


JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.dictionaries(st.text(max_size=5), children, max_size=3),
    ),
    max_leaves=8,
)

GOOD_IDS = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.text(max_size=8),
    st.sampled_from([0, -1, 2**63, 2**64 - 1, -(2**63), "", "1", "0", Raw("-0"),
                     Raw('"\\u0031"')]),
)
ODD_IDS = st.one_of(
    st.sampled_from([2**64, -(2**63) - 1, 10**30, Raw("1e2"), Raw("1E2"), Raw("1.0"),
                     Raw("-0.0"), Raw("1e400"), True, False, None]),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    JSON_VALUES,
)
ODD_VERSIONS = st.one_of(
    st.sampled_from(["1.0", "2.0 ", " 2.0", "2", "2.00", "", Raw("2.0"), Raw("2"),
                     Raw('"\\u0032.0"'), None, True, ["2.0"]]),
    st.text(max_size=4),
)
GOOD_METHODS = st.one_of(
    st.sampled_from(["initialize", "tools/call", "notifications/initialized", "ping", "",
                     Raw('"\\u006d"')]),
    st.text(max_size=10),
)
ODD_METHODS = JSON_VALUES.filter(lambda v: not isinstance(v, str))
GOOD_PARAMS = st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4)
ODD_PARAMS = JSON_VALUES.filter(lambda v: not isinstance(v, dict))
ODD = {"id": ODD_IDS, "jsonrpc": ODD_VERSIONS, "method": ODD_METHODS, "params": ODD_PARAMS,
       "result": JSON_VALUES, "error": JSON_VALUES}
ENVELOPE = list(ODD)
EXTRA_NAMES = st.sampled_from(["ID", "Id", "extra", "_meta", "results", "id ", Raw('"\\u0069d"'),
                               Raw('"m\\u0065thod"'), Raw('"\\u0070arams"')])


def optional(strategy):
    return st.one_of(st.just(ABSENT), strategy)


@st.composite
def messages(draw) -> str:
    """A JSON-RPC-shaped line: a request, notification or response envelope, or a random
    mix of members; then maybe one member made odd, a member duplicated, extras added,
    the members shuffled, encoded one of several ways, and the text maybe damaged."""
    shape = draw(st.sampled_from(["request", "notification", "response", "mix"]))
    envelope = {"jsonrpc": "2.0"}
    if shape == "request":
        envelope.update(id=draw(GOOD_IDS), method=draw(GOOD_METHODS),
                        params=draw(optional(st.one_of(GOOD_PARAMS, ODD_PARAMS))))
    elif shape == "notification":
        envelope.update(method=draw(GOOD_METHODS),
                        params=draw(optional(st.one_of(GOOD_PARAMS, ODD_PARAMS))))
    elif shape == "response":
        outcome = draw(st.sampled_from(["result", "error", "both"]))
        envelope.update(
            id=draw(optional(GOOD_IDS)),
            result=draw(JSON_VALUES) if outcome != "error" else ABSENT,
            error=draw(JSON_VALUES) if outcome != "result" else ABSENT,
        )
    else:
        for name in ENVELOPE:
            good = {"id": GOOD_IDS, "jsonrpc": st.just("2.0"), "method": GOOD_METHODS,
                    "params": GOOD_PARAMS}.get(name, JSON_VALUES)
            envelope[name] = draw(optional(st.one_of(good, ODD[name])))
    if draw(st.booleans()):  # one rule broken on purpose
        name = draw(st.sampled_from(ENVELOPE))
        envelope[name] = draw(optional(ODD[name]))
    members = [(name, value) for name, value in envelope.items() if value is not ABSENT]
    if draw(st.sampled_from([False] * 4 + [True])):  # a duplicate member, good or odd
        name = draw(st.sampled_from(ENVELOPE))
        members.append((name, draw(st.one_of(ODD[name], GOOD_IDS, GOOD_METHODS))))
    members += draw(st.lists(st.tuples(EXTRA_NAMES, JSON_VALUES), max_size=2))
    members = draw(st.permutations(members))
    encoding = draw(st.sampled_from(["orjson", "members", "spaced", "ascii"]))
    line = None
    if encoding == "orjson" and not any(isinstance(n, Raw) or isinstance(v, Raw)
                                        for n, v in members):
        try:
            line = orjson.dumps(dict(members)).decode()
        except (orjson.JSONEncodeError, TypeError):  # ints beyond 64 bits
            line = None
    if line is None:
        separators = (", ", ": ") if encoding == "spaced" else (",", ":")
        line = Members(members, separators).encode(ensure_ascii=encoding == "ascii")
    if draw(st.sampled_from([False] * 9 + [True])):  # a batch of one
        line = "[" + line + "]"
    return draw(damaged(line))


WHITESPACE = st.text(st.sampled_from(" \t\r\n"), max_size=3)
NOT_WHITESPACE = st.sampled_from(["\u00a0", "\v", "\f", "\ufeff", "\x00", "\u2028", "x", "+",
                                  ".", "INFO ", "}", "\ud800", "\u00e9"])


@st.composite
def damaged(draw, line: str) -> str:
    damage = draw(st.sampled_from(["none"] * 4 + ["whitespace", "not whitespace", "truncate",
                                                  "garbage"]))
    if damage == "whitespace":
        return draw(WHITESPACE) + line + draw(WHITESPACE)
    if damage == "not whitespace":
        extra = draw(NOT_WHITESPACE)
        return extra + line if draw(st.booleans()) else line + extra
    if damage == "truncate":
        return line[: draw(st.integers(0, max(len(line) - 1, 0)))]
    if damage == "garbage":
        garbage = draw(st.text(max_size=5))
        return garbage + line if draw(st.booleans()) else line + garbage
    return line


def strided(raw: bytes) -> memoryview:
    return memoryview(bytes(b for byte in raw for b in (byte, 0)))[::2]


class Text(str):
    pass


FORMS = {
    "str": lambda line: line,
    "str subclass": Text,
    "bytes": lambda line: line.encode("utf-8", "surrogatepass"),
    "bytearray": lambda line: bytearray(line.encode("utf-8", "surrogatepass")),
    "memoryview": lambda line: memoryview(line.encode("utf-8", "surrogatepass")),
    "strided memoryview": lambda line: strided(line.encode("utf-8", "surrogatepass")),
}


@both
@given(line=messages(), form=st.sampled_from(list(FORMS)))
def test_twins_agree_on_json_rpc_shaped_lines(c_module, py_module, line, form):
    assert_twins_agree(c_module, py_module, FORMS[form](line))


@both
@given(data=st.binary(max_size=300), form=st.sampled_from(["bytes", "bytearray", "memoryview"]))
def test_twins_agree_on_arbitrary_bytes(c_module, py_module, data, form):
    line = {"bytes": data, "bytearray": bytearray(data), "memoryview": memoryview(data)}[form]
    assert_twins_agree(c_module, py_module, line)


@both
@given(text=st.lists(st.one_of(st.characters(), st.characters(categories=["Cs"])),
                     max_size=60).map("".join))
def test_twins_agree_on_arbitrary_text(c_module, py_module, text):
    assert_twins_agree(c_module, py_module, text)


@both
@given(prefix=st.text(st.sampled_from(" \t\r\n"), max_size=4),
       first=st.characters(max_codepoint=0x7F), rest=st.text(max_size=20))
def test_twins_agree_on_every_first_character(c_module, py_module, prefix, first, rest):
    # The stray-line fast paths are written twice (a frozenset, a C switch).
    for form in ("str", "bytes", "bytearray", "memoryview"):
        assert_twins_agree(c_module, py_module, FORMS[form](prefix + first + rest))


def test_generator_makes_every_kind(py_module):
    # Guards the strategy: it must reach all four kinds and every refusal reason.
    seen = set()

    @settings(max_examples=500, derandomize=True, database=None)
    @given(messages())
    def collect(line):
        result = py_module.parse(line)
        error = result.error if type(result).__name__ == "Refused" else None
        seen.add((type(result).__name__, error and error.reason.split(":")[0]))

    collect()
    kinds = {kind for kind, _ in seen}
    assert kinds == {"Request", "Notification", "ClientResponse", "Refused"}
    reasons = {reason for kind, reason in seen if kind == "Refused"}
    assert {"id must be an integer or a string", 'jsonrpc must be "2.0"',
            "method must be a string", "params must be an object"} <= reasons


# --- the recorded corpus -----------------------------------------------------------------


def corpus_lines() -> list[bytes]:
    return traffic_lines()


@both
@pytest.mark.parametrize("form", ["str", "bytes", "bytearray", "memoryview"])
def test_twins_agree_on_the_corpus(c_module, py_module, form):
    lines = corpus_lines()
    counts = Counter()
    for raw in lines:
        line = raw.decode() if form == "str" else FORMS[form](raw.decode())
        assert_twins_agree(c_module, py_module, line)
        counts[type(c_module.parse(line)).__name__] += 1
    assert counts["Request"] and counts["ClientResponse"] and counts["Notification"], counts
    assert sum(counts.values()) == len(lines)


def test_corpus_has_every_kind(impl):
    counts = Counter(type(impl.parse(line)).__name__ for line in corpus_lines())
    assert counts["Request"] and counts["ClientResponse"] and counts["Notification"], counts
