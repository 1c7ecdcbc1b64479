"""route(line): the card's rules without decoding params or result, agreeing with parse.

Every test taking ``impl`` runs on both implementations: ``route`` comes from the route
module matching ``impl`` (``route_c`` with ``message_c``, ``route_py`` with
``message_py``) and must agree with that implementation's ``parse`` on kind, id (with its
type), method and error code, and on the reason of every refusal that is not a parse
error. Spans are checked by decoding the bytes they point at.
"""

from __future__ import annotations

import importlib
import itertools
import json
import pickle
from types import ModuleType

import orjson
import pytest
from _traffic import traffic_lines
from hypothesis import given
from hypothesis import strategies as st

from rpcline.corpus import generate

KINDS = {"Request": "request", "Notification": "notification",
         "ClientResponse": "response", "Refused": "refused"}  # fmt: skip
PARSE_ERROR = -32700
# The least decimal that rounds to infinity as a double: 2**1024 - 2**970.
THRESHOLD = str(2**1024 - 2**970)
BELOW = THRESHOLD[:-1] + "1"


@pytest.fixture(scope="session")
def router(impl: ModuleType) -> ModuleType:
    """The route module of the implementation under test (route_c or route_py)."""
    return importlib.import_module(impl.__name__.replace(".message_", ".route_"))


def from_parse(impl: ModuleType, line: object) -> tuple:
    """What route must say, from parse: kind, typed id, method, code, non-parse reason."""
    result = impl.parse(line)
    kind = KINDS[type(result).__name__]
    id = getattr(result, "id", None)
    method = result.method if kind in ("request", "notification") else None
    error = result.error if type(result).__name__ == "Refused" else None
    return (kind, type(id), id, method, *_error(error))


def from_route(route: object) -> tuple:
    id = route.id
    return (route.kind, type(id), id, route.method, *_error(route.error))


def _error(error: object) -> tuple:
    if error is None:
        return (None, None)
    return (error.code, None if error.code == PARSE_ERROR else error.reason)


def assert_agrees(impl: ModuleType, router: ModuleType, line: object) -> object:
    route = router.route(line)
    assert from_route(route) == from_parse(impl, line), line
    if route.error is not None:
        assert isinstance(route.error, impl.ProtocolError)
    return route


def utf8(line: object) -> bytes:
    if isinstance(line, str):
        return line.encode()
    return bytes(line)  # type: ignore[call-overload]


def assert_spans_decode(impl: ModuleType, router: ModuleType, line: object) -> None:
    """Each span holds exactly the JSON that parse decoded for that member."""
    route = assert_agrees(impl, router, line)
    spans = {"id": route.id_span, "params": route.params_span, "result": route.result_span,
             "error": route.error_span}
    if route.error is not None and route.error.code == PARSE_ERROR:
        assert set(spans.values()) == {None}
        return
    data = utf8(line)
    decoded = orjson.loads(data)
    if not isinstance(decoded, dict):
        assert set(spans.values()) == {None}
        return
    for name, span in spans.items():
        assert (span is None) == (name not in decoded), (line, name)
        if span is not None:
            start, end = span
            assert orjson.loads(data[start:end]) == decoded[name], (line, name)
            assert data[start:end].strip(b" \t\r\n") == data[start:end], "no whitespace"


# --- the nine rules ------------------------------------------------------------------------

RULES = [
    # (line, kind, id, method, error code)
    ('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', "request", 1, "tools/list", None),
    ('{"jsonrpc":"2.0","id":"1","method":"m","params":{}}', "request", "1", "m", None),
    ('{"jsonrpc":"2.0","method":"notifications/initialized"}', "notification", None,
     "notifications/initialized", None),
    ('{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}', "response", 7, None, None),
    ('{"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"x"}}', "response", "a", None, None),
    ('{"jsonrpc":"2.0","result":1}', "response", None, None, None),
    ('{"jsonrpc":"2.0","id":1,"result":1,"error":2}', "response", 1, None, None),
    # step 1: decoding fails
    ("", "refused", None, None, -32700),
    ("   ", "refused", None, None, -32700),
    ("INFO server started", "refused", None, None, -32700),
    ('{"jsonrpc":"2.0","id":1,"method":"m"', "refused", None, None, -32700),
    # step 2: a batch
    ("[]", "refused", None, None, -32600),
    ('[{"jsonrpc":"2.0","id":1,"method":"m"}]', "refused", None, None, -32600),
    # step 3: not an object
    ("1", "refused", None, None, -32600),
    ('"x"', "refused", None, None, -32600),
    ("null", "refused", None, None, -32600),
    ("true", "refused", None, None, -32600),
    # step 4: ids
    ('{"jsonrpc":"2.0","id":null,"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":true,"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":1.0,"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":1e2,"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":-0.0,"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":[1],"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":{},"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":-0,"method":"m"}', "request", 0, "m", None),
    # the short path of the core (at most 9 digits) and the first ids past it
    ('{"jsonrpc":"2.0","id":999999999,"method":"m"}', "request", 999999999, "m", None),
    ('{"jsonrpc":"2.0","id":-999999999,"method":"m"}', "request", -999999999, "m", None),
    ('{"jsonrpc":"2.0","id":1000000000,"method":"m"}', "request", 10**9, "m", None),
    ('{"jsonrpc":"2.0","id":-1073741824,"method":"m"}', "request", -(2**30), "m", None),
    ('{"jsonrpc":"2.0","id":257,"method":"m"}', "request", 257, "m", None),
    ('{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}', "request", 2**64 - 1, "m",
     None),
    ('{"jsonrpc":"2.0","id":18446744073709551616,"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"}', "request", -(2**63), "m",
     None),
    ('{"jsonrpc":"2.0","id":-9223372036854775809,"method":"m"}', "refused", None, None, -32600),
    ('{"jsonrpc":"2.0","id":100000000000000000000000,"method":"m"}', "refused", None, None,
     -32600),
    ('{"jsonrpc":"2.0","id":"\\u00e9\\ud83d\\ude00\\n","method":"m"}', "request", "é😀\n", "m",
     None),
    ('{"jsonrpc":"2.0","id":null,"result":1}', "refused", None, None, -32600),
    # step 5: jsonrpc
    ('{"id":1,"method":"m"}', "refused", 1, None, -32600),
    ('{"jsonrpc":"2.00","id":1,"method":"m"}', "refused", 1, None, -32600),
    ('{"jsonrpc":2.0,"id":"x","method":"m"}', "refused", "x", None, -32600),
    ('{"jsonrpc":"2\\u002e0","id":1,"method":"m"}', "request", 1, "m", None),
    ('{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"m"}', "request", 1, "m", None),
    ('{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"m"}', "refused", 1, None, -32600),
    # step 6 and 7: method
    ('{"jsonrpc":"2.0","id":1,"method":null,"result":1}', "refused", 1, None, -32600),
    ('{"jsonrpc":"2.0","id":1,"method":1}', "refused", 1, None, -32600),
    ('{"jsonrpc":"2.0","id":1}', "refused", 1, None, -32600),
    ('{"jsonrpc":"2.0","id":1,"method":"m\\u00e9\\t"}', "request", 1, "m\u00e9\t", None),
    # step 8: params
    ('{"jsonrpc":"2.0","id":1,"method":"m","params":null}', "refused", 1, None, -32602),
    ('{"jsonrpc":"2.0","id":"r","method":"m","params":[1]}', "refused", "r", None, -32602),
    ('{"jsonrpc":"2.0","method":"m","params":[1]}', "notification", None, "m", None),
    ('{"jsonrpc":"2.0","method":"m","params":null}', "notification", None, "m", None),
    ('{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":1}', "refused", 1, None,
     -32602),
    # escaped member names and duplicates: the decoder's names, the last one wins
    ('{"\\u0069d":5,"jsonrpc":"2.0","method":"m"}', "request", 5, "m", None),
    ('{"id":1,"i\\u0064":"two","jsonrpc":"2.0","method":"m"}', "request", "two", "m", None),
    ('{"jsonrpc":"2.0","m\\u0065thod":"x","method":"y"}', "notification", None, "y", None),
    ('{"jsonrpc":"2.0","id":1,"\\u0072esult":{}}', "response", 1, None, None),
    ('{"jsonrpc":"2.0","ID":1,"method":"m"}', "notification", None, "m", None),
]


@pytest.mark.parametrize("line", [b'{"jsonrpc":"2.0","id":6,"result":null,"error":null}',
                                  b'{"jsonrpc":"2.0","id":6,"error":null}'])
def test_a_null_error_member_is_a_response_without_an_error(impl, router, line):
    # docs/rules.md: the member is present (step 6), but a null error is no error.
    response = impl.parse(line)
    assert type(response) is impl.ClientResponse and response.error is None
    r = assert_agrees(impl, router, line)
    assert r.kind == "response" and line[slice(*r.error_span)] == b"null"


@pytest.mark.parametrize(("line", "kind", "id", "method", "code"), RULES)
def test_every_rule(impl, router, line, kind, id, method, code):
    route = assert_agrees(impl, router, line)
    assert (route.kind, route.id, type(route.id), route.method) == (kind, id, type(id), method)
    assert (route.error and route.error.code) == code
    assert_spans_decode(impl, router, line)


@pytest.mark.parametrize(("line", "kind", "id", "method", "code"), RULES)
def test_every_rule_in_every_input_type(impl, router, as_input, line, kind, id, method, code):
    assert_agrees(impl, router, as_input(line))


def test_refusal_reasons_are_parses(impl, router):
    for line, *_, code in RULES:
        if code and code != PARSE_ERROR:
            assert router.route(line).error == impl.parse(line).error


# --- what orjson accepts, corner by corner -------------------------------------------------

# Each must be judged exactly as orjson.loads judges it (the test asserts that too).
CORNERS = [
    # whitespace: JSON's four, and nothing else
    ' \t\r\n{"a":1} \t\r\n', "\f{}", "{}\f", "\v{}", "\u00a0{}", "{}\u2028", "\ufeff{}",
    "{}\x00", "\x00{}", '{"a" : 1 , "b" :\n2}', "{ }", "[ ]", "{\n}",
    # structure
    "{", "}", "[", "]", "{}}", "[]]", "{}{}", "[1,]", '{"a":1,}', "{,}", "[,1]", "[1,,2]",
    '{"a":1,,"b":2}', '{"a" 1}', '{"a":}', '{"a"}', "{1:2}", '{"a":1 "b":2}', "[1 2]",
    "[1:2]", '{"a",1}', "'a'", '{"a":1}x', "1 2", '"a" "b"',
    # literals
    "true", "false", "null", "tru", "nul", "fals", "True", "NULL", "truex", "[true false]",
    "[nulll]", "NaN", "Infinity", "-Infinity",
    # numbers
    "0", "-0", "01", "-01", "00", "1.", "-", "-a", ".5", "+1", "1e", "1e+", "1e-", "1E2",
    "1e+2", "1e-2", "0e0", "0.0e+00", "1.5e3", "2.", "1.e1", "1e5.0", "0x10", "1_000",
    "1e400", "-1e400", "1E400", "1e-400", "1e308", "1.7976931348623157e308",
    "1.7976931348623158e308", "1.7976931348623159e308", "1e99999999999999999999999",
    "1e-99999999999999999999999", "0e99999999999999999999", "-0e400",
    "0." + "0" * 500 + "1e800", "0." + "0" * 500 + "1e810", "1" + "0" * 400,
    "1" + "0" * 308, "1" + "0" * 309, THRESHOLD, BELOW, "-" + THRESHOLD, "-" + BELOW,
    THRESHOLD + ".0", BELOW + "." + "9" * 1000, BELOW + "9" * 100 + "e-100",
    THRESHOLD + "0" * 100 + "e-100", "0." + BELOW + "e309", "0." + THRESHOLD + "e309",
    THRESHOLD[:1] + "." + THRESHOLD[1:] + "e308", BELOW[:1] + "." + BELOW[1:] + "e308",
    "0.00" + THRESHOLD + "e311", "0.00" + BELOW + "e311", THRESHOLD[:100] + "e209",
    THRESHOLD[:100] + "1e208", "[1e400]", '{"a":1e400}',
    # strings: escapes, surrogates, control characters
    '"\\""', '"\\\\"', '"\\/"', '"\\b\\f\\n\\r\\t"', '"\\u0000"', '"\\u001F"', '"\\uABCD"',
    '"\\x"', '"\\a"', '"\\U0041"', '"\\u12"', '"\\u12G4"', '"\\u"', '"\\', '"\\u004',
    '"\\ud800"', '"\\udc00"', '"\\ud800\\udc00"', '"\\udbff\\udfff"', '"\\ud800x"',
    '"\\ud800\\u0041"', '"\\ud800\\ud800"', '"\\udc00\\ud800"', '"\\ud800\\"',
    '"\\ud800\\u"', '"\\ud800\\udc0"', '"\\uD83D\\uDE00"', '"\\ud83d\\ude00"',
    '"a\x7fb"', '"\x1f"', '"\x00"', '"\t"', '"\n"', '"\r"', '"unterminated',
    '{"\\u0069d\\u0000":1}',
    # nesting: 1024 levels of arrays and objects, a 1025th refused
    "[" * 1024 + "]" * 1024, "[" * 1025 + "]" * 1025, "[" * 1025,
    '{"a":' * 1024 + "1" + "}" * 1024, '{"a":' * 1025 + "1" + "}" * 1025,
    '{"a":' * 1023 + "[]" + "}" * 1023, '{"a":' * 1024 + "[]" + "}" * 1024,
    '{"a":' * 1023 + "{}" + "}" * 1023, '{"a":' * 1024 + "{}" + "}" * 1024,
    "[{" + '"a":[{' * 511 + "}]" * 511 + "}]", "[{" + '"a":[{' * 512 + "}]" * 512 + "}]",
    '{"jsonrpc":"2.0","method":"m","params":' + "[" * 1023 + "]" * 1023 + "}",
    '{"jsonrpc":"2.0","method":"m","params":' + "[" * 1024 + "]" * 1024 + "}",
]
# Bytes that are not UTF-8 text, inside strings and outside them.
BAD_BYTES = [
    b'"\xc0\x80"', b'"\xc1\xbf"', b'"\xe0\x80\x80"', b'"\xe0\x9f\xbf"', b'"\xed\xa0\x80"',
    b'"\xed\xbf\xbf"', b'"\xf0\x80\x80\x80"', b'"\xf0\x8f\xbf\xbf"', b'"\xf4\x90\x80\x80"',
    b'"\xf5\x80\x80\x80"', b'"\xff"', b'"\xfe"', b'"\x80"', b'"\xbf"', b'"\xc3"', b'"\xe2\x82"',
    b'"\xf0\x9f\x98"', b'"\xc3\x28"', b'"\xe2\x28\xa1"', b'"\xf0\x28\x8c\xbc"', b"\xff",
    b"[1]\xff", b"\xef\xbb\xbf{}", b'"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"', b'"\xed\x9f\xbf"',
    b'"\xee\x80\x80"', b'"\xf4\x8f\xbf\xbf"', b'{"a":"ok","b":"\xe9t\xe9"}', b"{}\x80",
]


def judged_like_orjson(impl, router, line) -> None:
    route = assert_agrees(impl, router, line)
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        assert route.error is not None and route.error.code == PARSE_ERROR, line
    else:
        assert route.error is None or route.error.code != PARSE_ERROR, line


@pytest.mark.parametrize("line", CORNERS, ids=range(len(CORNERS)))
def test_validity_corners(impl, router, line):
    judged_like_orjson(impl, router, line)
    judged_like_orjson(impl, router, line.encode("utf-8", "surrogatepass"))
    # The same value as a top-level member, where route notes what it finds.
    member = '{"jsonrpc":"2.0","method":"m","id":' + line + "}"
    judged_like_orjson(impl, router, member)


@pytest.mark.parametrize("line", BAD_BYTES, ids=range(len(BAD_BYTES)))
def test_utf8_corners(impl, router, line):
    judged_like_orjson(impl, router, line)
    judged_like_orjson(impl, router, b'{"jsonrpc":"2.0","method":"m","x":' + line + b"}")


def test_every_control_character_and_byte_in_a_string(impl, router):
    for code in range(256):
        for line in (b'{"a":"x' + bytes([code]) + b'y"}', b'["' + bytes([code]) * 20 + b'"]',
                     b'"' + bytes([code]) + b'"', b"[" + bytes([code]) + b"]"):
            judged_like_orjson(impl, router, line)


def test_every_escape(impl, router):
    for code in range(256):
        judged_like_orjson(impl, router, b'"\\' + bytes([code]) + b'"')
    for unit in [0, 0x1F, 0x7F, 0x80, 0x7FF, 0x800, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF,
                 0xE000, 0xFFFF]:
        judged_like_orjson(impl, router, f'["\\u{unit:04x}", "\\u{unit:04X}"]')
        judged_like_orjson(impl, router, f'"\\u{unit:04x}\\udc00"')


def test_specials_at_every_offset(impl, router):
    # String bodies are skipped 8 or 16 bytes a step, with a scalar tail near the end of
    # the line: every special byte at every offset, near the end and far from it.
    specials = ["\\n", "\\u00e9", "\\ud83d\\ude00", "\u00e9", "\u20ac", "\U0001f600", "\x01",
                "\\q", "\\ud800", '"', "\x7f"]  # fmt: skip
    for special in specials:
        for before in range(0, 34):
            body = "a" * before + special + "b" * (before % 5)
            for line in ('"' + body + '"', '{"jsonrpc":"2.0","method":"' + body + '"}',
                         '{"jsonrpc":"2.0","method":"m","params":{"k":"' + body + '"},"x":1}'):
                judged_like_orjson(impl, router, line.encode("utf-8", "surrogatepass"))
            bad = ("a" * before).encode() + b"\xe2\x82" + b"b" * (before % 7)
            judged_like_orjson(impl, router, b'"' + bad + b'"')


@pytest.mark.c_extension
def test_utf8_blocks_exhaustively():
    # The core validates UTF-8 16 bytes at a time with SSE2 (x86-64): every sequence of
    # one to three bytes around each boundary value, and of four from fewer values, at
    # offsets that put it inside, at the end of and across a block, ended by text, by
    # the closing quote or by an escape, is judged as orjson judges it.
    from rpcline._core import route_c

    edges = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0,
             0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
    fewer = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC2, 0xE0, 0xED, 0xF0, 0xF4, 0xF5]
    sequences = [bytes(seq) for k in (1, 2, 3) for seq in itertools.product(edges, repeat=k)]
    sequences += [bytes(seq) for seq in itertools.product(fewer, repeat=4)]
    wrong = []
    for seq in sequences:
        for at in (0, 1, 12, 13, 14, 15, 16, 17):
            body = b"a" * at + seq
            for line in (b'"' + body + b"b" * 30 + b'"', b'["' + body + b'","' + b"c" * 20 + b'"]',
                         b'"' + body + b'\\n' + b"d" * 20 + b'"'):
                try:
                    orjson.loads(line)
                    valid = True
                except orjson.JSONDecodeError:
                    valid = False
                route = route_c.route(line)
                if (route.error is None or route.error.code != PARSE_ERROR) != valid:
                    wrong.append(line)
    assert not wrong, wrong[:5]


# --- input types ------------------------------------------------------------------------


class Text(str):
    pass


class Bytes(bytes):
    pass


class Buffer(bytearray):
    pass


def strided(raw: bytes) -> memoryview:
    doubled = bytearray(2 * len(raw))
    doubled[::2] = raw
    return memoryview(bytes(doubled))[::2]


LINE = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"caf\u00e9"}}'


@pytest.mark.parametrize("make", [
    str, Text, lambda s: s.encode(), lambda s: Bytes(s.encode()), lambda s: bytearray(s.encode()),
    lambda s: Buffer(s.encode()), lambda s: memoryview(s.encode()),
    lambda s: strided(s.encode()), lambda s: memoryview(bytearray(s.encode())),
], ids=["str", "str subclass", "bytes", "bytes subclass", "bytearray", "bytearray subclass",
        "memoryview", "strided memoryview", "memoryview of bytearray"])  # fmt: skip
def test_input_types(impl, router, make):
    route = assert_agrees(impl, router, make(LINE))
    assert (route.kind, route.id, route.method) == ("request", 3, "tools/call")
    start, end = route.params_span
    assert LINE.encode()[start:end] == '{"name":"caf\u00e9"}'.encode()


def test_memoryviews_of_other_formats_are_their_bytes(impl, router):
    # orjson reads a contiguous view's buffer as bytes, whatever its format and shape.
    raw = b'{"jsonrpc":"2.0","id":1,"method":"abcd"}'  # 40 bytes
    for view in (memoryview(raw).cast("i"), memoryview(raw).cast("B", shape=[5, 8]),
                 memoryview(b"7").cast("B", shape=[])):
        assert_agrees(impl, router, view)


def test_other_types_are_type_errors(impl, router):
    for value in (5, None, 1.5, ["{}"], {"id": 1}, object()):
        with pytest.raises(TypeError, match="route\\(\\) takes"):
            router.route(value)
        with pytest.raises(TypeError):
            impl.parse(value)


def test_str_with_a_lone_surrogate_is_a_parse_error(impl, router):
    for line in ('{"jsonrpc":"2.0","method":"\ud800"}', "\udcff", '"\udc80"'):
        route = assert_agrees(impl, router, line)
        assert route.error.code == PARSE_ERROR and "surrogate" in route.error.reason


# --- spans ------------------------------------------------------------------------------


def test_spans(impl, router):
    line = b'  {"jsonrpc": "2.0", "id" : 12 ,"method":"m","params":{"a":[1, "}"]} }\r\n'
    route = assert_agrees(impl, router, line)
    assert line[slice(*route.id_span)] == b"12"
    assert line[slice(*route.params_span)] == b'{"a":[1, "}"]}'
    assert route.result_span is None and route.error_span is None
    line = '{"x":"\u00e9\u20ac","jsonrpc":"2.0","id":"\u00e9","result":[],"error":null}'
    route = assert_agrees(impl, router, line)
    data = line.encode()
    assert data[slice(*route.id_span)] == '"\u00e9"'.encode()  # UTF-8 byte offsets
    assert data[slice(*route.result_span)] == b"[]"
    assert data[slice(*route.error_span)] == b"null"
    assert route.params_span is None


def test_spans_point_at_the_last_duplicate(impl, router):
    line = b'{"id":1,"jsonrpc":"2.0","params":[],"method":"m","params":{"b":2},"id":"x"}'
    route = assert_agrees(impl, router, line)
    assert line[slice(*route.id_span)] == b'"x"'
    assert line[slice(*route.params_span)] == b'{"b":2}'


def test_spans_of_refused_lines(impl, router):
    # Valid JSON objects keep their spans; a parse error or a non-object has none.
    route = assert_agrees(impl, router, b'{"jsonrpc":"2.0","id":1,"method":"m","params":7}')
    assert route.kind == "refused" and route.id == 1 and route.params_span == (46, 47)
    for line in (b'{"jsonrpc":"2.0","id":1,"method":"m"', b'[{"id":1}]', b"1", b"INFO"):
        route = router.route(line)
        assert (route.id_span, route.params_span, route.result_span, route.error_span) == (
            None, None, None, None)


# --- with_id ----------------------------------------------------------------------------


def first_wins(line: bytes) -> dict:
    """An upstream decoder that keeps the first of duplicate names (many do)."""
    return json.loads(line, object_pairs_hook=lambda pairs: dict(reversed(pairs)))


@pytest.mark.parametrize("new_id", [7, "up-7", "", 0, -(2**63), 2**64 - 1, 'q"uote\\\u00e9\n',
                                    "\U0001f600"])
def test_with_id_rewrites_the_id_only(impl, router, new_id):
    line = b'{"jsonrpc":"2.0","id":"client-1","method":"tools/call","params":{"id":9}}\n'
    out = router.route(line).with_id(new_id)
    assert type(out) is bytes
    again = impl.parse(out)
    assert type(again.id) is type(new_id) and again.id == new_id
    assert again.params == {"id": 9}  # a nested "id" is not a top-level member
    start, end = router.route(line).id_span
    assert out == line[:start] + orjson.dumps(new_id) + line[end:]  # spliced, rest intact
    assert out.endswith(b"}\n")


def test_with_id_rewrites_every_duplicate(impl, router):
    # A gateway keeping the last id must not let an upstream that keeps the first one see
    # another id: every top-level id member is rewritten, escaped names included.
    line = b'{"id":"evil","jsonrpc":"2.0","\\u0069d":5,"method":"m","i\\u0064":"c1"}'
    route = assert_agrees(impl, router, line)
    assert route.kind == "request" and route.id == "c1"
    out = route.with_id(42)
    assert impl.parse(out).id == 42
    assert first_wins(out)["id"] == 42
    assert json.loads(out)["id"] == 42
    assert out.count(b"42") == 3 and b"evil" not in out and b"c1" not in out
    assert out == b'{"id":42,"jsonrpc":"2.0","\\u0069d":42,"method":"m","i\\u0064":42}'


def test_with_id_on_many_duplicates(impl, router):
    line = b'{"jsonrpc":"2.0",' + b'"id":1,' * 1000 + b'"method":"m"}'
    out = router.route(line).with_id("x")
    assert out == b'{"jsonrpc":"2.0",' + b'"id":"x",' * 1000 + b'"method":"m"}'


def test_with_id_on_responses(impl, router):
    for line in (b'{"jsonrpc":"2.0","id":"u1","result":{"ok":true}}',
                 b'{"jsonrpc":"2.0","error":{"code":1,"message":"m"},"id":12}',
                 '{"jsonrpc":"2.0","id":"\u00e9","result":"\u20ac"}'):
        out = router.route(line).with_id(3)
        assert impl.parse(out).id == 3 and impl.parse(out).body == {**orjson.loads(line), "id": 3}


def test_with_id_refuses_what_is_not_forwarded(impl, router):
    with pytest.raises(ValueError, match="no id"):
        router.route(b'{"jsonrpc":"2.0","result":1}').with_id(1)
    for line in (b'{"jsonrpc":"2.0","id":1,"method":"m","params":1}', b"{", b"[]",
                 b'{"jsonrpc":"1.0","id":1,"method":"m"}', b'{"jsonrpc":"2.0","method":"n"}'):
        with pytest.raises(ValueError, match="request or a response"):
            router.route(line).with_id(1)


def test_with_id_takes_exact_ids_orjson_reads_back(impl, router):
    route = router.route(b'{"jsonrpc":"2.0","id":1,"method":"m"}')
    for bad in (True, 1.0, None, b"1", [1]):
        with pytest.raises(TypeError):
            route.with_id(bad)
    for bad in (2**64, -(2**63) - 1):
        with pytest.raises(ValueError):
            route.with_id(bad)


# --- the Route object -------------------------------------------------------------------


def test_route_objects(impl, router):
    line = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{}}'
    route = router.route(line)
    match route:
        case router.Route("request", 1, "m", None):
            pass
        case _:
            pytest.fail(repr(route))
    assert repr(route) == (
        "Route(kind='request', id=1, method='m', error=None, id_span=(22, 23), "
        "method_span=(33, 36), params_span=(46, 48), result_span=None, error_span=None)"
    )
    assert route == router.route(line) and hash(route) == hash(router.route(line))
    assert route != router.route(line.replace(b"1", b'"1"'))
    assert route != router.route(line + b" ")
    assert route != (route.kind, route.id)
    for copy in (pickle.loads(pickle.dumps(route)), pickle.loads(pickle.dumps(route, 0))):
        assert copy == route and type(copy) is router.Route
    refused = router.route(b"nope")
    assert pickle.loads(pickle.dumps(refused)).error == refused.error
    with pytest.raises(AttributeError):
        route.kind = "notification"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        route.id = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        router.Route("request", 1, "m", None)


# --- generated and mutated input ---------------------------------------------------------

NAMES = {
    "id": ['"id"', '"\\u0069d"', '"i\\u0064"'],
    "jsonrpc": ['"jsonrpc"', '"json\\u0072pc"'],
    "method": ['"method"', '"m\\u0065thod"'],
    "params": ['"params"', '"\\u0070arams"'],
    "result": ['"result"'],
    "error": ['"error"', '"\\u0065rror"'],
    "other": ['"ID"', '"_meta"', '"id "', '"\\u0069d\\u0000"', '"idx"', '""', '"\u00e9"'],
}
ENVELOPE = ["id", "jsonrpc", "method", "params", "result", "error"]
INTEGERS = st.one_of(
    st.integers(-(2**65), 2**65).map(str),
    st.sampled_from(["-0", "0", "18446744073709551615", "18446744073709551616",
                     "-9223372036854775808", "-9223372036854775809", "1" + "0" * 30]),
)
NUMBERS = st.one_of(
    INTEGERS,
    st.integers(-1000, 1000).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["1.0", "1e2", "1E+2", "-0.0", "1e-400", BELOW, "0.5e-3"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
)
# Numbers at the edge of a double's range, which orjson refuses when infinite.
EDGES = st.one_of(
    st.sampled_from(["1e400", "-1e400", THRESHOLD, BELOW, "-" + THRESHOLD]),
    st.tuples(st.sampled_from([THRESHOLD, BELOW, "1797693134862315"]),
              st.integers(-2, 3)).map(lambda p: p[0][:1] + "." + p[0][1:] + f"e{308 + p[1]}"),
)
STRING_PIECES = st.sampled_from(
    ["a", "tools/call", "2.0", "\\n", "\\u0069", "\\u00e9", "\\ud83d\\ude00", "\u00e9",
     "\u20ac", "\U0001f600", " ", "\\/", '\\"', "\\\\", "x" * 17, "\x7f"]
)  # fmt: skip
STRINGS = st.lists(STRING_PIECES, max_size=6).map(lambda pieces: '"' + "".join(pieces) + '"')
SCALARS = st.one_of(STRINGS, NUMBERS, st.sampled_from(["true", "false", "null"]))
VALUES = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=3).map(lambda items: "[" + ",".join(items) + "]"),
        st.lists(st.tuples(st.sampled_from(sum(NAMES.values(), [])), children),
                 max_size=3).map(lambda ms: "{" + ",".join(f"{k}:{v}" for k, v in ms) + "}"),
    ),
    max_leaves=6,
)
OBJECTS = st.lists(st.tuples(STRINGS, VALUES), max_size=3).map(
    lambda ms: "{" + ",".join(f"{k}:{v}" for k, v in ms) + "}")
GOOD = {
    "id": st.one_of(INTEGERS, STRINGS),
    "jsonrpc": st.sampled_from(['"2.0"', '"2\\u002e0"']),
    "method": STRINGS,
    "params": OBJECTS,
    "result": VALUES,
    "error": VALUES,
}
ODD = {
    "id": st.one_of(NUMBERS, EDGES, VALUES),
    "jsonrpc": st.sampled_from(['"2.00"', "2.0", '"1.0"', "null", '""', '"2.0 "']),
    "method": VALUES,
    "params": VALUES,
    "result": VALUES,
    "error": VALUES,
}
SHAPES = {"request": ["jsonrpc", "id", "method", "params?"],
          "notification": ["jsonrpc", "method", "params?"],
          "response": ["jsonrpc", "id?", "result?", "error"]}  # fmt: skip
SPACE = st.sampled_from(["", "", "", "", "", " ", "\n", "\t", "\r\n "])
# Damage, rarely: what is not JSON whitespace, broken escapes and numbers, stray bytes.
DAMAGE = st.sampled_from(["\f", "\u00a0", "\ufeff", "\\x", "\\ud800", "\x01", "01", "1.",
                          "-", "nul", ",", "}", '"'])


@st.composite
def envelopes(draw) -> str:
    """A JSON-RPC-shaped line: a request, notification, response or a mix of members, with
    escaped names, odd values, duplicates and extra members; rarely damaged."""
    shape = draw(st.sampled_from([*SHAPES, "mix"]))
    if shape == "mix":
        names = draw(st.lists(st.sampled_from(ENVELOPE), max_size=6))
    else:
        names = [n.rstrip("?") for n in SHAPES[shape] if not n.endswith("?") or draw(st.booleans())]
        if shape == "response" and "result" in names and draw(st.booleans()):
            names.remove("error")
    members = [(name, draw(GOOD[name])) for name in names]
    if members and draw(st.booleans()):  # one member made odd
        at = draw(st.integers(0, len(members) - 1))
        members[at] = (members[at][0], draw(ODD[members[at][0]]))
    if draw(st.integers(0, 3)) == 0:  # a duplicate, good or odd
        name = draw(st.sampled_from(ENVELOPE))
        members.append((name, draw(st.one_of(GOOD[name], ODD[name]))))
    members += [("other", v) for v in draw(st.lists(VALUES, max_size=2))]
    members = draw(st.permutations(members))
    line = "{" + ",".join(
        draw(SPACE) + draw(st.sampled_from(NAMES[name])) + draw(SPACE) + ":" + draw(SPACE)
        + value + draw(SPACE)
        for name, value in members
    ) + "}"
    if draw(st.integers(0, 9)) == 0:
        line = "[" + line + "]"
    line = draw(SPACE) + line + draw(SPACE)
    if draw(st.integers(0, 7)) == 0:
        at = draw(st.integers(0, len(line)))
        line = line[:at] + draw(DAMAGE) + line[at:]
    return line


INTERESTING = list(b'"\\{}[],:0123456789eE.-+ \t\n\x00\x1f\x7f\x80\xbf\xc3\xe2\xed\xf0\xff') + [
    ord("u"), ord("n"), ord("t")]


@st.composite
def mutated(draw) -> bytes:
    """A generated line with a few bytes deleted, inserted, replaced, or a cut."""
    data = bytearray(draw(envelopes()).encode("utf-8", "surrogatepass"))
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["delete", "insert", "replace", "cut", "repeat"]))
        byte = draw(st.sampled_from(INTERESTING))
        if action == "delete" and at < len(data):
            del data[at]
        elif action == "insert":
            data.insert(at, byte)
        elif action == "replace" and at < len(data):
            data[at] = byte
        elif action == "cut":
            del data[at:]
        elif action == "repeat":
            data[at:at] = data[at : at + draw(st.integers(1, 8))]
    return bytes(data)


@given(line=envelopes())
def test_hypothesis_envelopes(impl, router, line):
    judged_like_orjson(impl, router, line.encode("utf-8", "surrogatepass"))
    assert_spans_decode(impl, router, line.encode("utf-8", "surrogatepass"))
    assert_agrees(impl, router, line)  # as str (lone surrogates make it a parse error)


@given(data=mutated())
def test_hypothesis_mutated(impl, router, data):
    judged_like_orjson(impl, router, data)


@given(data=st.binary(max_size=200))
def test_hypothesis_arbitrary_bytes(impl, router, data):
    judged_like_orjson(impl, router, data)
    judged_like_orjson(impl, router, b'{"jsonrpc":"2.0","method":"m","x":"' + data + b'"}')


@given(text=st.text(max_size=60))
def test_hypothesis_arbitrary_text(impl, router, text):
    assert_agrees(impl, router, text)
    assert_agrees(impl, router, '{"jsonrpc":"2.0","id":"' + text + '","method":"m"}')


@given(line=envelopes(), new_id=st.one_of(st.integers(-(2**63), 2**64 - 1), st.text()))
def test_hypothesis_with_id(impl, router, line, new_id):
    route = router.route(line)
    if route.kind not in ("request", "response") or route.id is None:
        return
    out = route.with_id(new_id)
    again = impl.parse(out)
    assert (type(again).__name__, again.id, type(again.id)) == (
        type(impl.parse(line)).__name__, new_id, type(new_id))
    assert first_wins(out)["id"] == new_id


@pytest.mark.c_extension
@given(data=st.one_of(envelopes().map(lambda s: s.encode("utf-8", "surrogatepass")), mutated(),
                      st.binary(max_size=100)))
def test_hypothesis_twins_agree_on_everything(data):
    # Reasons and spans included: the Cython core and the twin are one scanner twice.
    from rpcline._core import route_c, route_py

    c, py = route_c.route(data), route_py.route(data)
    assert fields(c) == fields(py), data


def fields(route: object) -> tuple:
    error = route.error
    return (*from_route(route), error and (type(error).__name__, error.reason), route.id_span,
            route.params_span, route.result_span, route.error_span)


# --- corpora ------------------------------------------------------------------------------


def test_agrees_on_the_recorded_traffic(impl, router):
    lines = traffic_lines()
    assert len(lines) > 700
    kinds = set()
    for line in lines:
        assert_spans_decode(impl, router, line)
        assert_agrees(impl, router, line.decode())
        kinds.add(router.route(line).kind)
    assert kinds >= {"request", "notification", "response"}


def test_agrees_on_the_generated_corpus(impl, router):
    kinds = set()
    for line in generate(2000):
        assert_spans_decode(impl, router, line)
        kinds.add(router.route(line).kind)
    assert kinds == {"request", "notification", "response", "refused"}


@pytest.mark.c_extension
def test_twins_agree_on_the_corpora():
    from rpcline._core import route_c, route_py

    lines = list(generate(2000))
    lines += traffic_lines()
    for line in lines:
        assert fields(route_c.route(line)) == fields(route_py.route(line)), line


def test_cli_bench_measures_route(tmp_path):
    import subprocess
    import sys

    import rpcline

    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"jsonrpc":"2.0","id":1,"method":"m"}\n{"jsonrpc":"2.0","result":1}\n')
    done = subprocess.run([sys.executable, "-m", "rpcline", "bench", str(path), "--rounds", "1",
                           "--json"], capture_output=True, check=True, cwd=tmp_path)
    names = [row["contender"] for row in orjson.loads(done.stdout)["contenders"]]
    assert f"rpcline.route ({rpcline.IMPLEMENTATION})" in names


def test_facade_exports_route():
    import rpcline

    assert rpcline.route(b'{"jsonrpc":"2.0","method":"m"}').kind == "notification"
    module = f"rpcline._core.route_{'c' if rpcline.IMPLEMENTATION == 'cython' else 'py'}"
    assert rpcline.route is importlib.import_module(module).route
    assert rpcline.Route is importlib.import_module(module).Route


def test_method_names_shared_by_threads_stay_intact(router):
    # The core keeps the str of recently routed method names for every thread (16 slots,
    # each replaced, and its name released, by the call that misses on it). A name handed
    # out must stay the caller's while other names churn its slot; and threads routing
    # names that share slots must each get their own. On a free-threaded build a slot
    # released while another thread compares or returns it would be a use after free
    # (issue 32 item 5); with the GIL this holds the slots' reference counting.
    import sys
    import threading

    names = [f"tools/{'x' * n}" for n in range(48)] + [f"n{n}/call" for n in range(48)]
    lines = [b'{"jsonrpc":"2.0","id":1,"method":"%s"}' % name.encode() for name in names]
    kept = [router.route(line).method for line in lines]
    failures: list[tuple[str, object]] = []

    def work(offset: int) -> None:
        for i in range(4000):
            k = (i * 7 + offset) % len(names)
            method = router.route(lines[k]).method
            if method != names[k]:
                failures.append((names[k], method))
                return

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the GIL allows
    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
    assert kept == names
