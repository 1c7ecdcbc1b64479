"""The module card, rule by rule: its nine steps, prohibited paths, edge cases, grill log,
and the policies DESIGN.md fixes where the card is silent.

Every table row runs for both implementations and all four input types (str, bytes,
bytearray, memoryview). A ParseError's expected reason is the decoder's own message for
that very input (``DECODER``); every other reason is the library's exact text.
"""

from __future__ import annotations

import importlib.metadata

import orjson
import pytest
from _support import (
    BAD_ID,
    BAD_JSONRPC,
    BAD_METHOD,
    BAD_PARAMS,
    BATCHING,
    DECODER,
    NOT_AN_OBJECT,
    describe,
    notification,
    parse_error,
    parse_reason,
    refused,
    request,
    resolve,
    response,
    typed,
)

IR, IP, PE = "InvalidRequest", "InvalidParams", "ParseError"

REQ = '{"jsonrpc":"2.0","id":1,"method":"m"}'
NOTE = '{"jsonrpc":"2.0","method":"m"}'


def row(line: str, expected: dict, id: str) -> object:
    return pytest.param(line, expected, id=id)


def answered(line: str, id: object, id_name: str) -> object:
    """A response line: ClientResponse(id, the decoded object)."""
    return pytest.param(line, response(id, orjson.loads(line)), id=id_name)


def with_id(template: str, expected, ids=((7, "7"), ("7", '"7"'))) -> list:
    """The same row with an integer id and a string id: the refusal keeps each one's type."""
    return [
        pytest.param(template.replace("ID", literal), expected(id), id=f"{template}-id{literal}")
        for id, literal in ids
    ]


STEP_1_DECODE = [
    row("", parse_error(), "empty line"),
    row(" ", parse_error(), "space only"),
    row("\t", parse_error(), "tab only"),
    row("\r\n", parse_error(), "CRLF only"),
    row(" \t\r\n ", parse_error(), "JSON whitespace only"),
    row("{", parse_error(), "lone brace"),
    row('{"jsonrpc":"2.0","method":"m"', parse_error(), "truncated object"),
    row('{"jsonrpc":"2.0","method":"m', parse_error(), "truncated string"),
    row(NOTE + " x", parse_error(), "trailing garbage"),
    row(NOTE + "{}", parse_error(), "second document"),
    row(NOTE + ",", parse_error(), "trailing comma after document"),
    row('{"jsonrpc":"2.0","method":"m",}', parse_error(), "trailing comma in object"),
    row("{'jsonrpc':'2.0','method':'m'}", parse_error(), "single quotes"),
    row(NOTE + " // comment", parse_error(), "comment"),
    row("NaN", parse_error(), "NaN"),
    row("Infinity", parse_error(), "Infinity"),
    row("-Infinity", parse_error(), "-Infinity"),
    row('{"jsonrpc":"2.0","id":NaN,"method":"m"}', parse_error(), "NaN id"),
    row('{"jsonrpc":"2.0","id":Infinity,"method":"m"}', parse_error(), "Infinity id"),
    row('{"jsonrpc":"2.0","method":"m","params":{"x":NaN}}', parse_error(), "NaN in params"),
    row('{"jsonrpc":"2.0","method":"m","params":{"x":-Infinity}}', parse_error(),
        "-Infinity in params"),
    row('{"jsonrpc":"2.0","method":"a\x01b"}', parse_error(), "raw control char in string"),
    row('{"jsonrpc":"2.0","method":"\\x41"}', parse_error(), "invalid escape"),
    row('{"jsonrpc":"2.0","method":"\ud800"}', parse_error(), "lone surrogate"),
    row('{"jsonrpc":"2.0","method":"m","params":{"\udfff":1}}', parse_error(),
        "lone low surrogate in key"),
    # Policy: a UTF-8 BOM is not JSON whitespace.
    row("\ufeff" + NOTE, parse_error(), "BOM"),
    row("\ufeff" + REQ, parse_error(), "BOM before request"),
    # Policy: only JSON whitespace (space, tab, CR, LF) may surround the JSON.
    row("\u00a0" + REQ, parse_error(), "leading NBSP"),
    row(REQ + "\u00a0", parse_error(), "trailing NBSP"),
    row("\v" + REQ, parse_error(), "leading VT"),
    row(REQ + "\v", parse_error(), "trailing VT"),
    row("\f" + REQ, parse_error(), "leading FF"),
    row(REQ + "\f", parse_error(), "trailing FF"),
    row("\u2028" + REQ, parse_error(), "leading LINE SEPARATOR"),
    row("\u3000" + REQ, parse_error(), "leading IDEOGRAPHIC SPACE"),
    row("\x85" + REQ, parse_error(), "leading NEL"),
    row(REQ + "\x00", parse_error(), "trailing NUL"),
    row("\x00" + REQ, parse_error(), "leading NUL"),
]

WHITESPACE_AROUND = [
    row(" " + REQ + " ", request(1), "spaces around"),
    row("\t" + REQ + "\t", request(1), "tabs around"),
    row("\r" + REQ + "\r", request(1), "CRs around"),
    row("\n" + REQ + "\n", request(1), "LFs around"),
    row(REQ + "\r\n", request(1), "CRLF after"),
    row(" \t\r\n" + NOTE + "\n\r\t ", notification(), "all four around"),
    row('{ "jsonrpc" : "2.0" ,\n"id"\t:\r1 , "method" : "m" }', request(1), "inside"),
]

STEP_2_BATCH = [
    row("[]", refused(None, IR, BATCHING), "empty batch"),
    row("[ ]", refused(None, IR, BATCHING), "empty batch with space"),
    row(" [] ", refused(None, IR, BATCHING), "empty batch surrounded"),
    row("[1]", refused(None, IR, BATCHING), "array of number"),
    row("[[]]", refused(None, IR, BATCHING), "nested array"),
    row("[" + REQ + "]", refused(None, IR, BATCHING), "batch of one request"),
    row("[" + REQ + "," + NOTE + "]", refused(None, IR, BATCHING), "batch of two"),
]

STEP_3_NOT_OBJECT = [
    row("5", refused(None, IR, NOT_AN_OBJECT), "number"),
    row("-1.5", refused(None, IR, NOT_AN_OBJECT), "fraction"),
    row("0", refused(None, IR, NOT_AN_OBJECT), "zero"),
    row('"x"', refused(None, IR, NOT_AN_OBJECT), "string"),
    row('"{}"', refused(None, IR, NOT_AN_OBJECT), "string holding an object"),
    row("null", refused(None, IR, NOT_AN_OBJECT), "null"),
    row("true", refused(None, IR, NOT_AN_OBJECT), "true"),
    row("false", refused(None, IR, NOT_AN_OBJECT), "false"),
    row(" 5 ", refused(None, IR, NOT_AN_OBJECT), "number surrounded"),
]


def id_row(literal: str, expected: dict, name: str) -> object:
    return row('{"jsonrpc":"2.0","id":' + literal + ',"method":"m"}', expected, f"id {name}")


STEP_4_ID = [
    id_row("1", request(1), "1"),
    id_row('"1"', request("1"), '"1"'),
    id_row("0", request(0), "0"),
    id_row('""', request(""), "empty string"),
    id_row("-1", request(-1), "-1"),
    id_row("-0", request(0), "-0 (an integer)"),
    id_row(str(2**63), request(2**63), "2**63"),
    id_row(str(2**64 - 1), request(2**64 - 1), "2**64-1"),
    id_row(str(-(2**63)), request(-(2**63)), "-2**63"),
    id_row('"abc-\u00e9-\U0001f600"', request("abc-\u00e9-\U0001f600"), "non-ASCII string"),
    id_row('"\\u0000"', request("\x00"), "escaped NUL string"),
    id_row('"1E2"', request("1E2"), "numeric-looking string"),
    # Policy: a fraction, an integral float and out-of-range integers are not ids.
    id_row("null", refused(None, IR, BAD_ID), "null"),
    id_row("true", refused(None, IR, BAD_ID), "true"),
    id_row("false", refused(None, IR, BAD_ID), "false"),
    id_row("1.0", refused(None, IR, BAD_ID), "1.0"),
    id_row("1e2", refused(None, IR, BAD_ID), "1e2"),
    id_row("1E2", refused(None, IR, BAD_ID), "1E2"),
    id_row("-0.0", refused(None, IR, BAD_ID), "-0.0"),
    id_row("1.5", refused(None, IR, BAD_ID), "1.5"),
    id_row(str(2**64), refused(None, IR, BAD_ID), "2**64"),
    id_row(str(-(2**63) - 1), refused(None, IR, BAD_ID), "-2**63-1"),
    id_row(str(10**30), refused(None, IR, BAD_ID), "10**30"),
    id_row("[]", refused(None, IR, BAD_ID), "array"),
    id_row("[1]", refused(None, IR, BAD_ID), "array of 1"),
    id_row("{}", refused(None, IR, BAD_ID), "object"),
    # Card step 4 and the grill log: a null id is refused without an id, whatever else.
    row('{"jsonrpc":"2.0","id":null,"result":{}}', refused(None, IR, BAD_ID),
        "response with null id"),
    row('{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"x"}}',
        refused(None, IR, BAD_ID), "error response with null id"),
    row('{"jsonrpc":"2.0","id":1.0,"result":{}}', refused(None, IR, BAD_ID),
        "response with float id"),
    row('{"jsonrpc":"2.0","id":true,"method":"m","params":{}}', refused(None, IR, BAD_ID),
        "true id with params"),
]

STEP_5_JSONRPC = [
    *with_id('{"id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":"1.0","id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":2.0,"id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":2,"id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":"2.0 ","id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":" 2.0","id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":"2","id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":"2.00","id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":"","id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":"2.0\\u0000","id":ID,"method":"m"}',
             lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":"\uff12.0","id":ID,"method":"m"}',
             lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":null,"id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":true,"id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":["2.0"],"id":ID,"method":"m"}',
             lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"jsonrpc":{"v":"2.0"},"id":ID,"method":"m"}',
             lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"JSONRPC":"2.0","id":ID,"method":"m"}', lambda id: refused(id, IR, BAD_JSONRPC)),
    *with_id('{"id":ID,"result":{}}', lambda id: refused(id, IR, BAD_JSONRPC)),
    # Prohibited path: a broken envelope is refused even without an id.
    row('{"method":"m"}', refused(None, IR, BAD_JSONRPC), "notification without jsonrpc"),
    row('{"jsonrpc":"1.0","method":"m"}', refused(None, IR, BAD_JSONRPC),
        "notification with jsonrpc 1.0"),
    row("{}", refused(None, IR, BAD_JSONRPC), "empty object"),
    row('{"jsonrpc":"\\u0032.0","id":1,"method":"m"}', request(1), "escaped 2.0 is 2.0"),
]

STEP_6_RESPONSE = [
    answered('{"jsonrpc":"2.0","id":1,"result":{}}', 1, "result"),
    answered('{"jsonrpc":"2.0","id":"1","result":{}}', "1", "result, string id"),
    answered('{"jsonrpc":"2.0","id":0,"result":null}', 0, "null result"),
    answered('{"jsonrpc":"2.0","id":"","result":[1,2]}', "", "array result"),
    answered('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}', 1, "error"),
    answered('{"jsonrpc":"2.0","id":1,"error":null}', 1, "null error"),
    answered('{"jsonrpc":"2.0","id":1,"result":1,"error":2}', 1, "result and error"),
    answered('{"jsonrpc":"2.0","result":{"a":1}}', None, "no id"),
    answered('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}', None,
             "error without id"),
    answered('{"jsonrpc":"2.0","id":1,"result":{},"params":5}', 1, "params ignored"),
    answered('{"jsonrpc":"2.0","id":1,"result":{},"extra":[1]}', 1, "extra member"),
    answered(f'{{"jsonrpc":"2.0","id":{2**64 - 1},"result":true}}', 2**64 - 1, "huge id"),
    # Policy: step 6 needs the method member absent; "method": null is a bad method.
    *with_id('{"jsonrpc":"2.0","id":ID,"method":null,"result":{}}',
             lambda id: refused(id, IR, BAD_METHOD)),
    row('{"jsonrpc":"2.0","method":null,"error":{}}', refused(None, IR, BAD_METHOD),
        "method null with error, no id"),
    row('{"jsonrpc":"2.0","id":1,"method":5,"result":{}}', refused(1, IR, BAD_METHOD),
        "method 5 with result"),
    row('{"jsonrpc":"2.0","id":1,"method":"m","result":{}}', request(1), "method and result"),
    row('{"jsonrpc":"2.0","method":"m","error":{}}', notification(), "method and error"),
]

STEP_7_METHOD = [
    *with_id('{"jsonrpc":"2.0","id":ID}', lambda id: refused(id, IR, BAD_METHOD)),
    *with_id('{"jsonrpc":"2.0","id":ID,"method":5}', lambda id: refused(id, IR, BAD_METHOD)),
    *with_id('{"jsonrpc":"2.0","id":ID,"method":null}', lambda id: refused(id, IR, BAD_METHOD)),
    *with_id('{"jsonrpc":"2.0","id":ID,"method":["m"]}', lambda id: refused(id, IR, BAD_METHOD)),
    *with_id('{"jsonrpc":"2.0","id":ID,"method":{}}', lambda id: refused(id, IR, BAD_METHOD)),
    *with_id('{"jsonrpc":"2.0","id":ID,"method":true}', lambda id: refused(id, IR, BAD_METHOD)),
    *with_id('{"jsonrpc":"2.0","id":ID,"params":{}}', lambda id: refused(id, IR, BAD_METHOD)),
    row('{"jsonrpc":"2.0"}', refused(None, IR, BAD_METHOD), "no method, no id"),
    row('{"jsonrpc":"2.0","method":1}', refused(None, IR, BAD_METHOD), "number method, no id"),
    row('{"jsonrpc":"2.0","id":1,"method":""}', request(1, ""), "empty method is a string"),
    row('{"jsonrpc":"2.0","id":1,"method":"tools/call \u00e9\U0001f600"}',
        request(1, "tools/call \u00e9\U0001f600"), "non-ASCII method"),
    row('{"jsonrpc":"2.0","id":1,"method":"\\u006d"}', request(1, "m"), "escaped method"),
]

BAD_PARAMS_LITERALS = ["null", "[]", "[1,2]", "5", "-1.5", '"x"', '""', "true", "false"]

STEP_8_PARAMS = [
    row('{"jsonrpc":"2.0","id":1,"method":"m","params":{}}', request(1, "m", {}), "{}"),
    row('{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,{"b":null}],"c":"d"}}',
        request(1, "m", {"a": [1, {"b": None}], "c": "d"}), "nested object"),
    row('{"jsonrpc":"2.0","method":"m","params":{"a":1}}', notification("m", {"a": 1}),
        "notification with object"),
    # The grill log: no by-position params; and the card's edge case: params null.
    *[
        p
        for literal in BAD_PARAMS_LITERALS
        for p in with_id('{"jsonrpc":"2.0","id":ID,"method":"m","params":' + literal + "}",
                         lambda id: refused(id, IP, BAD_PARAMS))
    ],
    # Prohibited path: a notification with a valid envelope is never refused.
    *[
        row('{"jsonrpc":"2.0","method":"m","params":' + literal + "}", notification("m", {}),
            f"notification params {literal}")
        for literal in BAD_PARAMS_LITERALS
    ],
]

STEP_9_KIND = [
    row(REQ, request(1), "id: request"),
    row(NOTE, notification(), "no id: notification"),
    row('{"method":"m","id":"x","jsonrpc":"2.0"}', request("x"), "members in any order"),
    row('{"jsonrpc":"2.0","method":"m","params":{"id":1}}', notification("m", {"id": 1}),
        "an id inside params is not the id"),
    row('{"jsonrpc":"2.0","method":"m","ID":1,"Id":2}', notification(), "id is case-sensitive"),
    row('{"\\u006asonrpc":"2.0","\\u0069d":1,"\\u006dethod":"m"}', request(1),
        "escaped member names"),
    row('{"jsonrpc":"2.0","id":1,"method":"m","extra":[1,{"x":2}],"result":null}',
        request(1), "extra members ignored"),
]

# Policy: duplicate member names, the last one wins (as the decoder does).
DUPLICATES = [
    row('{"jsonrpc":"2.0","id":1,"id":"a","method":"m"}', request("a"), "id 1 then 'a'"),
    row('{"jsonrpc":"2.0","id":"a","id":1,"method":"m"}', request(1), "id 'a' then 1"),
    row('{"jsonrpc":"2.0","id":null,"id":1,"method":"m"}', request(1), "id null then 1"),
    row('{"jsonrpc":"2.0","id":1,"id":null,"method":"m"}', refused(None, IR, BAD_ID),
        "id 1 then null"),
    row('{"jsonrpc":"2.0","id":1,"id":1.5,"method":"m"}', refused(None, IR, BAD_ID),
        "id 1 then 1.5"),
    row('{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"m"}', request(1),
        "jsonrpc 1.0 then 2.0"),
    row('{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"m"}', refused(1, IR, BAD_JSONRPC),
        "jsonrpc 2.0 then 1.0"),
    row('{"jsonrpc":"2.0","id":1,"method":5,"method":"m"}', request(1), "method 5 then m"),
    row('{"jsonrpc":"2.0","id":1,"method":"m","method":5}', refused(1, IR, BAD_METHOD),
        "method m then 5"),
    row('{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}', request(1, "b"), "method a then b"),
    row('{"jsonrpc":"2.0","id":1,"method":"m","params":[],"params":{"a":1}}',
        request(1, "m", {"a": 1}), "params [] then object"),
    row('{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":null}',
        refused(1, IP, BAD_PARAMS), "params object then null"),
    row('{"jsonrpc":"2.0","method":"m","params":{"a":1},"params":{"a":2,"a":3}}',
        notification("m", {"a": 3}), "duplicates inside params"),
]

# Rules are applied in the card's order: the first failing rule names the error.
RULE_ORDER = [
    row('{"jsonrpc":"1.0","id":null,"method":5,"params":5}', refused(None, IR, BAD_ID),
        "bad id before bad jsonrpc"),
    row('{"id":true,"result":{}}', refused(None, IR, BAD_ID), "bad id before response"),
    row('{"id":1,"method":5,"params":5}', refused(1, IR, BAD_JSONRPC),
        "bad jsonrpc before bad method"),
    row('{"jsonrpc":"1.0","id":"1","result":{}}', refused("1", IR, BAD_JSONRPC),
        "bad jsonrpc before response"),
    row('{"jsonrpc":"2.0","id":1,"method":5,"params":5}', refused(1, IR, BAD_METHOD),
        "bad method before bad params"),
    row('{"jsonrpc":"2.0","method":null,"params":5}', refused(None, IR, BAD_METHOD),
        "bad method before notification params"),
    row("[{}]", refused(None, IR, BATCHING), "batch before its contents"),
]

CARD_TABLE = (
    STEP_1_DECODE
    + WHITESPACE_AROUND
    + STEP_2_BATCH
    + STEP_3_NOT_OBJECT
    + STEP_4_ID
    + STEP_5_JSONRPC
    + STEP_6_RESPONSE
    + STEP_7_METHOD
    + STEP_8_PARAMS
    + STEP_9_KIND
    + DUPLICATES
    + RULE_ORDER
)


@pytest.mark.parametrize(("line", "expected"), CARD_TABLE)
def test_card_table(impl, as_input, line, expected):
    data = as_input(line)
    assert describe(impl.parse(data)) == resolve(expected, data)


# A stray line (a log line on stdout, a shell trace) is refused before the decoder runs,
# with the decoder's own message: the fast path must say exactly what orjson would.
STRAY_LINES = [
    "INFO listening on :8080",
    "  INFO listening on :8080",
    "\tINFO listening on :8080",
    "\r\rINFO listening on :8080",
    " \t\r INFO listening on :8080",
    "\r\nINFO listening on :8080",
    "\nINFO listening on :8080",
    "Traceback (most recent call last):",
    "WARNING: something \u00e9\U0001f600 happened",
    "}",
    "]",
    ":",
    ",",
    "'single quoted'",
    "<html>",
    "#!/bin/sh",
    "\x1b[31mERROR\x1b[0m",
    "\x00",
    "\x7f",
    "Infinity",
    "NaN",
    "None",
    "True",
    "undefined",
    # A bash `set -x` trace line, a Java stack-trace tail and a Latin-1 log line (one byte
    # that is not UTF-8; a lone surrogate in str form): real stdout noise too.
    "+ ./serve.sh --port 8080",
    "\t... 3 more",
    "INFO caf\udce9 opened",
]


@pytest.mark.parametrize("line", STRAY_LINES)
def test_stray_line_reason_is_the_decoders(impl, as_input, line):
    data = as_input(line)
    assert describe(impl.parse(data)) == refused(None, PE, parse_reason(data))


# Invalid UTF-8 in bytes input; in str input the same text with lone surrogates.
INVALID_UTF8 = [
    b"\xff",
    b"\xc3",
    b"\xc0\xaf",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b'{"jsonrpc":"2.0","method":"\xff"}',
    b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"caf\xe9"}}',
    b'{"jsonrpc":"2.0","id":1,"method":"m"}\xff',
    b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\xf0\x9f\x98"}}',
    b"  \xff",
]


@pytest.mark.parametrize("raw", INVALID_UTF8)
@pytest.mark.parametrize("form", ["str", "bytes", "bytearray", "memoryview"])
def test_invalid_utf8_is_a_parse_error(impl, raw, form):
    data = {
        "str": raw.decode("utf-8", "surrogateescape"),
        "bytes": raw,
        "bytearray": bytearray(raw),
        "memoryview": memoryview(raw),
    }[form]
    assert describe(impl.parse(data)) == refused(None, PE, parse_reason(data))


# (line, what parse says, what route says): parse's decoder checks all of a line's UTF-8
# before its syntax, so the first bad byte anywhere is named; route, scanning the syntax
# first, may stop earlier (a stray byte outside a string is a syntax error).
UTF8_REASONS = [
    (b'{"a":"\xff"}', "invalid UTF-8 at byte 6", "invalid UTF-8 at byte 6"),
    (b'{"jsonrpc":"2.0","id":1,"method":"caf\xe9"}', "invalid UTF-8 at byte 37",
     "invalid UTF-8 at byte 37"),
    (b'{"a":"\xf0\x9f\x98\x80\xed\xa0\x80"}', "invalid UTF-8 at byte 10",
     "invalid UTF-8 at byte 10"),
    (b"\xff", "invalid UTF-8 at byte 0", "unexpected character at byte 0"),
    (b'{"a":1}  \xc0\xaf', "invalid UTF-8 at byte 9",
     "content after the document at byte 9"),
    ('{"a":"x\ud800"}', "str is not valid UTF-8: a surrogate at char 7",
     "str is not valid UTF-8: a surrogate at char 7"),
]


@pytest.mark.parametrize(("line", "parsed", "routed"), UTF8_REASONS)
@pytest.mark.parametrize("form", [bytes, bytearray, memoryview])
def test_invalid_utf8_names_its_offset_as_route_does(impl, line, parsed, routed, form):
    from importlib import import_module

    router = import_module(impl.__name__.replace(".message_", ".route_"))
    data = line if isinstance(line, str) else form(line)
    assert describe(impl.parse(data)) == refused(None, PE, parsed)
    assert router.route(data).error.reason == routed


def nested_request(depth: int) -> str:
    """A request whose total nesting depth (the outer object counted) is ``depth``."""
    inner = '{"a":' * (depth - 2) + "{}" + "}" * (depth - 2)
    return '{"jsonrpc":"2.0","id":1,"method":"m","params":' + inner + "}"


def test_depth_1024_is_accepted(impl, as_input):
    result = impl.parse(as_input(nested_request(1024)))
    assert type(result).__name__ == "Request"
    params, levels = result.params, 1  # params is level 2
    while params:
        params, levels = params["a"], levels + 1
    assert levels + 1 == 1024


def test_depth_1025_is_a_parse_error(impl, as_input):
    data = as_input(nested_request(1025))
    assert describe(impl.parse(data)) == refused(None, PE, parse_reason(data))


def test_array_depth_1024_is_a_batch_and_1025_a_parse_error(impl, as_input):
    assert describe(impl.parse(as_input("[" * 1024 + "]" * 1024))) == refused(
        None, IR, BATCHING
    )
    data = as_input("[" * 1025 + "]" * 1025)
    assert describe(impl.parse(data)) == refused(None, PE, parse_reason(data))


def test_params_absent_is_a_fresh_dict_each_time(impl, as_input):
    for line in (REQ, NOTE, '{"jsonrpc":"2.0","method":"m","params":null}'):
        first = impl.parse(as_input(line))
        assert first.params == {}
        first.params["leak"] = 1
        second = impl.parse(as_input(line))
        assert second.params == {}
        assert second.params is not first.params


def test_decoded_params_and_body_are_the_decoded_objects(impl, as_input):
    line = '{"jsonrpc":"2.0","id":5,"method":"m","params":{"x":[1,2.5,"s",null,true]}}'
    assert impl.parse(as_input(line)).params == orjson.loads(line)["params"]
    line = '{"jsonrpc":"2.0","id":5,"result":{"x":[1,2.5,"s",null,true]}}'
    body = impl.parse(as_input(line)).body
    assert body == orjson.loads(line)
    assert type(body) is dict


def test_string_and_integer_ids_are_different_ids(impl, as_input):
    # Prohibited path: "1" and 1 are never the same id, in any kind of result.
    pairs = [
        ('{"jsonrpc":"2.0","id":1,"method":"m"}', '{"jsonrpc":"2.0","id":"1","method":"m"}'),
        ('{"jsonrpc":"2.0","id":1,"result":1}', '{"jsonrpc":"2.0","id":"1","result":1}'),
        ('{"jsonrpc":"1.0","id":1,"method":"m"}', '{"jsonrpc":"1.0","id":"1","method":"m"}'),
        ('{"jsonrpc":"2.0","id":1,"method":"m","params":[]}',
         '{"jsonrpc":"2.0","id":"1","method":"m","params":[]}'),
    ]
    for number_line, text_line in pairs:
        number, text = impl.parse(as_input(number_line)), impl.parse(as_input(text_line))
        assert type(number.id) is int and number.id == 1
        assert type(text.id) is str and text.id == "1"
        assert number != text
        assert not (number == text)


def test_no_hidden_line_limit(impl, as_input):
    big = "x" * (1 << 20)
    line = '{"jsonrpc":"2.0","id":1,"method":"m","params":{"blob":"' + big + '"}}'
    assert describe(impl.parse(as_input(line))) == request(1, "m", {"blob": big})


def test_null_id_is_answered_with_invalid_request_and_null_id(impl, as_input):
    # Grill log: answer a null id with -32600 and "id": null.
    result = impl.parse(as_input('{"jsonrpc":"2.0","id":null,"method":"m"}'))
    assert orjson.loads(impl.error_response(result)) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32600, "message": "Invalid Request", "data": BAD_ID},
    }


def test_refusal_with_a_readable_id_is_answered_with_that_id(impl, as_input):
    # Governance: a Refused with an id is answered with it, so the caller does not hang.
    for literal, id in (("7", 7), ('"7"', "7")):
        line = '{"jsonrpc":"2.0","id":' + literal + ',"method":"m","params":[1]}'
        reply = orjson.loads(impl.error_response(impl.parse(as_input(line))))
        assert typed(reply["id"]) == typed(id)
        assert reply["error"] == {"code": -32602, "message": "Invalid params",
                                  "data": BAD_PARAMS}


def test_parse_error_is_answered_with_null_id(impl, as_input):
    # Even when a readable id precedes the damage, a parse error never echoes it.
    result = impl.parse(as_input('{"jsonrpc":"2.0","id":42,"method":"m",'))
    assert result.id is None
    assert orjson.loads(impl.error_response(result))["id"] is None


def test_orjson_is_the_declared_decoder():
    # Policy: orjson >= 3.10 is a hard dependency of both implementations.
    requirements = importlib.metadata.requires("rpcline") or []
    assert any(r.replace(" ", "").startswith("orjson>=3.10") for r in requirements), requirements


def test_decoder_sentinel_is_only_used_for_parse_errors():
    # Guards the table itself: DECODER must never stand for a library reason.
    for param in CARD_TABLE:
        expected = param.values[1]
        assert (expected.get("reason") is DECODER) == (expected.get("error") == PE)
