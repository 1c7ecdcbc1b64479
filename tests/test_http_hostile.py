"""rpcline.http.check_request never raises for what a client sends (issue 25).

Hostile header bytes (raw non-ASCII inside a base64 sentinel, lone surrogates in ``str``
headers, empty and huge values, duplicates), a ``tools`` mapping that drops the caller's
headers while the core still reads them, and bodies at the nesting limit: each gets a
verdict, the same one from both implementations. Tests taking ``hmod`` run on both.
"""

from __future__ import annotations

import gc
import importlib
from types import ModuleType

import orjson
import pytest
from test_http import TOOLS, V, code, headers_for, request

from rpcline._core.http_schema import ParamHeaders

NAME = b"mcp-name"
SENTINELS = [b"=?base64?\xe9?=", b"=?base64?ZXU\xff?=", b"=?base64?\x00?=", b"=?base64?\xc3\xa9?="]


def fields(verdict: object) -> tuple:
    return (verdict.status, verdict.route, verdict.name, verdict.protocol_version,
            verdict.error, verdict.response)  # fmt: skip


def twin_fields(verdict: object) -> tuple:
    """A verdict's fields that compare across the implementations' classes."""
    error = verdict.error
    return (verdict.status, verdict.name, verdict.protocol_version, verdict.response,
            None if error is None else (error.code, error.reason))  # fmt: skip


@pytest.mark.parametrize("sentinel", SENTINELS)
def test_non_ascii_sentinel_in_mcp_name_never_matches(hmod: ModuleType, sentinel: bytes) -> None:
    """It used to raise ValueError (base64 of a non-ASCII str) in both implementations."""
    pairs = headers_for(name=None) + [(NAME, sentinel)]
    for form in (pairs, [(n.decode("latin-1"), v.decode("latin-1")) for n, v in pairs]):
        v = hmod.check_request(request(name="é"), form)
        assert (v.status, code(v)) == (400, -32020)
        assert b'"id":1' in v.response and "mcp-name" in v.error.reason


@pytest.mark.parametrize("sentinel", SENTINELS)
def test_non_ascii_sentinel_in_param_header_never_matches(hmod: ModuleType, sentinel: bytes) -> None:
    body = request(name="echo", arguments={"region": "eu"})
    pairs = headers_for() + [(b"mcp-param-region", sentinel)]
    v = hmod.check_request(body, pairs, tools=TOOLS)
    assert (v.status, code(v)) == (400, -32020)
    assert v.error.reason == "Mcp-Param-Region header carries a malformed base64 sentinel value"


def test_surrogate_sentinel_in_a_str_header(hmod: ModuleType) -> None:
    """What a server that decodes with surrogateescape hands over for a 0xff byte."""
    name = b"=?base64?\xff?=".decode("utf-8", "surrogateescape")
    v = hmod.check_request(request(name="e"), headers_for(name=None) + [("mcp-name", name)])
    assert code(v) == -32020
    pairs = headers_for() + [("mcp-param-region", name)]
    v = hmod.check_request(request(name="echo", arguments={"region": "e"}), pairs, tools=TOOLS)
    assert code(v) == -32020


NOTIFICATION = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


@pytest.mark.parametrize("version", ["\udcff", "2026-07-28\udcff", "\ud800x", "é\udc80"])
def test_surrogate_version_on_a_notification_is_refused_and_encodes(
    hmod: ModuleType, version: str
) -> None:
    """-32022 (the version is not served), its ``requested`` made encodable: the response
    used to raise TypeError when orjson met the lone surrogate."""
    v = hmod.check_request(NOTIFICATION, [("mcp-protocol-version", version)])
    assert (v.status, code(v)) == (400, -32022)
    expected = version.encode("utf-8", "backslashreplace").decode()
    assert v.error.requested == expected and "\\u" in expected
    assert orjson.loads(v.response)["error"]["data"] == {"supported": [V], "requested": expected}
    assert orjson.dumps(v.error.to_json())  # the error alone encodes too


def test_latin1_version_bytes_are_echoed_as_latin1(hmod: ModuleType) -> None:
    v = hmod.check_request(NOTIFICATION, [(b"mcp-protocol-version", b"\xff\x00")])
    assert orjson.loads(v.response)["error"]["data"]["requested"] == "ÿ\x00"


def test_surrogate_version_on_a_request_is_a_mismatch(hmod: ModuleType) -> None:
    pairs = [("mcp-protocol-version", "\udcff"), ("mcp-method", "tools/call"), ("mcp-name", "e")]
    v = hmod.check_request(request(name="e"), pairs)
    assert (v.status, code(v)) == (400, -32020)
    assert orjson.loads(v.response)["id"] == 1


HOSTILE_VALUES = [b"", b" ", b"\x00", b"\xff" * 3, b"=?base64?\xff\xfe?=", b"=?base64??=", b"=?base64?=", b"=?", b"?=",
                  b"=?base64?ZQ==?=\n", b"=?BASE64?ZQ==?=", b"x" * (1 << 20),
                  b"=?base64?" + b"A" * (1 << 20) + b"?=", b"9" * 5000, b"-0", b"1e3",
                  b"4" * 4400 + b".0"]  # fmt: skip


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=lambda v: repr(v[:20]))
@pytest.mark.parametrize("header", [b"mcp-protocol-version", b"mcp-method", NAME,
                                    b"mcp-param-region", b"mcp-param-count", b"MCP-PARAM-FLAG"])
def test_hostile_values_get_a_verdict(hmod: ModuleType, header: bytes, value: bytes) -> None:
    """Any value in any mirrored header, as bytes, latin-1 str and surrogateescape str,
    alone or duplicated: a verdict, and the same from both implementations."""
    body = request(name="echo", arguments={"region": "eu", "count": 7, "flag": True})
    base = [p for p in headers_for() if p[0] != header.lower()]
    verdicts = []
    for twin in ("rpcline._core.http_c", "rpcline._core.http_py"):
        other = importlib.import_module(twin) if twin != hmod.__name__ else hmod
        for pairs in (base + [(header, value)], base + [(header, value), (header, value)]):
            for form in (pairs, [(n.decode("latin-1"), v.decode("latin-1")) for n, v in pairs],
                         [(n.decode(), v.decode("utf-8", "surrogateescape")) for n, v in pairs]):
                v = other.check_request(body, form, tools=TOOLS)
                assert v.status in (200, 400) and (v.response is None) == (v.status == 200)
                if v.response is not None:
                    orjson.loads(v.response)
                verdicts.append(twin_fields(v))
    half = len(verdicts) // 2
    assert verdicts[:half] == verdicts[half:]


def test_header_types_the_caller_gets_wrong_raise_type_error(hmod: ModuleType) -> None:
    """Types are the caller's (a server never hands a client's bytes over as an int):
    a clear TypeError, not a verdict that would hide the bug. Content is never one."""
    body = request(name="echo")
    for pairs in ([(5, "x")], [("mcp-name", 5)], [(b"mcp-name", None)], {"mcp-method": 1.0}):
        with pytest.raises(TypeError, match="a header (name|value) is str or bytes"):
            hmod.check_request(body, headers_for()[:2] + list(dict(pairs).items()))
    # A name that is not an mcp-* header is never read, whatever its value.
    assert hmod.check_request(body, headers_for() + [(b"x-other", 5)]).status == 200


def nested_request(depth: int) -> bytes:
    """A valid tools/call whose body nests ``depth`` levels in all (the top object is one),
    the innermost arrays in an unannotated argument."""
    body = request(name="echo", arguments={"deep_list": "X"})
    inner = depth - 3  # the top object, params and arguments
    return body.replace(b'"X"', b"[" * inner + b"]" * inner)


@pytest.mark.parametrize(("depth", "status", "error"), [
    (1000, 200, None), (1022, 200, None), (1024, 200, None), (1025, 400, -32700), (5000, 400, -32700)])  # fmt: skip
def test_nesting_limit_is_orjsons(hmod: ModuleType, depth: int, status: int, error: int | None) -> None:
    """1024 levels accepted, 1025 a parse error (DESIGN, as for parse): deliberate, and
    a difference from the SDK, whose json.loads hits the recursion limit near 1000."""
    body = nested_request(depth)
    if depth <= 1024:
        orjson.loads(body)
    v = hmod.check_request(body, headers_for(), tools=TOOLS)
    assert (v.status, code(v)) == (status, error)
    if error is not None:
        assert orjson.loads(v.response)["id"] is None


class Dropping(dict):
    """A tools mapping whose ``get`` drops the caller's header pairs (and with them the
    only references to their values) and fills the freed memory with other bytes, as
    another thread or a careless mapping might. The verdict must not change: the ladder
    decides on the headers as they were when it was called, as the twin does."""

    def __init__(self, tools: dict, headers: list, replace: bool) -> None:
        super().__init__(tools)
        self.headers, self.replace = headers, replace

    def get(self, name, default=None):
        if self.replace:  # the same names, other values
            self.headers[:] = [(n, b"=?base64?eHg=?=" if n.startswith(b"mcp-param") else v)
                               for n, v in self.headers]  # fmt: skip
        else:
            self.headers.clear()
        gc.collect()
        self.filler = [bytes([120]) * n for n in range(1, 64) for _ in range(64)]
        return super().get(name, default)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("region", [b"eu", b"=?base64?ZXU=?=", b"xx"])
def test_tools_get_dropping_the_headers_gives_the_twins_verdict(
    hmod: ModuleType, replace: bool, region: bytes
) -> None:
    """The Cython core used to keep pointers into the header values across ``tools.get``
    and read the Mcp-Param-* ones after it (ASan: heap-use-after-free), then fold the
    headers again: a verdict other than the twin's."""
    body = request(name="echo", arguments={"region": "eu", "count": 12})

    def fresh() -> list:  # values made here, referenced only by the list
        return [(bytes(n), bytes(bytearray(v))) for n, v in headers_for()] + [
            (b"mcp-param-region", bytes(bytearray(region))), (b"mcp-param-count", b"12")]

    expected = hmod.check_request(body, fresh(), tools=TOOLS)
    assert (expected.status, code(expected)) == ((400, -32020) if region == b"xx" else (200, None))
    for _ in range(20):
        pairs = fresh()
        v = hmod.check_request(body, pairs, tools=Dropping(TOOLS, pairs, replace))
        assert fields(v) == fields(expected)
        assert bool(pairs) == replace  # get ran, and dropped or replaced them


@pytest.mark.parametrize("sent", [None, b"eu"])
def test_annotated_property_name_with_a_lone_surrogate(hmod: ModuleType, sent: bytes | None) -> None:
    """What ``json.loads`` makes of ``"\\ud800"`` in an upstream ``tools/list``: the core
    raised UnicodeEncodeError on every call of the tool (issue 29, item 9). No body can
    hold that name (orjson refuses lone surrogates), so the argument is absent, as in the
    twin and the SDK."""
    schema = {"type": "object", "properties": {
        "\ud800": {"type": "string", "x-mcp-header": "Odd"},
        "region": {"type": "string", "x-mcp-header": "Region"}}}  # fmt: skip
    tools = {"echo": ParamHeaders(schema)}
    pairs = headers_for() + [(b"mcp-param-region", b"eu")]
    if sent is not None:
        pairs.append((b"mcp-param-odd", sent))
    v = hmod.check_request(request(name="echo", arguments={"region": "eu"}), pairs, tools=tools)
    if sent is None:
        assert (v.status, v.error) == (200, None)
    else:
        assert (v.status, code(v)) == (400, -32020)
        assert v.error.reason == ("Mcp-Param-Odd header is present but the request body's "
                                  "'\\ud800' argument is absent")  # fmt: skip
