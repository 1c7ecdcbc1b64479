"""Write the hand-made seeds of fuzz/corpus/: one small file per interesting input.

    python fuzz/make_seeds.py      # rewrites fuzz/corpus/seed-* and fuzz/corpus-sse/seed-*;
                                   # other files are kept

fuzz/corpus-sse/ holds the SSE target's (fuzz/fuzz_sse.py): a 4-byte head (limit, classify
and cut points, see tests/_sse_oracle.py) and a stream: the SDK's shape, every field, line
ends of each kind, long lines of every field around the limits, floods of blank lines.

Every result kind and refusal reason, the policies (float and out-of-range ids, batches,
duplicate names, a BOM), the framing cases (CRLF, a lone CR, blank lines, a BOM at the
start and later), stray lines, and encodings (escapes, non-ASCII, invalid UTF-8, NUL),
plus a few lines of the project's own generated corpus. The fuzzer mutates from these;
the files it adds itself (named by their SHA-1) come from merged long runs.
"""

from __future__ import annotations

from pathlib import Path

from rpcline.corpus import generate, iter_http

R = b'{"jsonrpc":"2.0",'
SEEDS: dict[str, bytes] = {
    "request": R + b'"id":1,"method":"tools/call","params":{"name":"x","arguments":{}}}',
    "request-text-id": R + b'"id":"a-1","method":"ping"}',
    "request-big-id": R + b'"id":18446744073709551615,"method":"m"}',
    "request-negative-id": R + b'"id":-9223372036854775808,"method":"m"}',
    "notification": R + b'"method":"notifications/initialized"}',
    "notification-bad-params": R + b'"method":"n","params":[1,2]}',
    "response": R + b'"id":1,"result":{"content":[{"type":"text","text":"hi"}]}}',
    "response-error": R + b'"id":"7","error":{"code":-32601,"message":"no"}}',
    "response-no-id": R + b'"result":{}}',
    "response-null-id": R + b'"id":null,"error":{"code":-32700,"message":"x"}}',
    "refused-params": R + b'"id":3,"method":"m","params":null}',
    "refused-method": R + b'"id":3,"method":5}',
    "refused-method-null-result": R + b'"id":3,"method":null,"result":1}',
    "refused-jsonrpc": b'{"jsonrpc":"1.0","id":3,"method":"m"}',
    "refused-no-jsonrpc": b'{"id":3,"method":"m"}',
    "refused-float-id": R + b'"id":1.0,"method":"m"}',
    "refused-exp-id": R + b'"id":1e2,"method":"m"}',
    "refused-huge-id": R + b'"id":18446744073709551616,"method":"m"}',
    "refused-bool-id": R + b'"id":true,"method":"m"}',
    "batch": b'[{"jsonrpc":"2.0","id":1,"method":"m"}]',
    "empty-batch": b"[]",
    "number": b"5",
    "string": b'"2.0"',
    "null": b"null",
    "duplicates": R + b'"id":1,"id":"1","method":"a","method":"b","params":{},"params":[]}',
    "escaped-names": b'{"\\u006asonrpc":"2.0","\\u0069d":1,"m\\u0065thod":"\\u0000"}',
    "non-ascii": R + b'"id":"\xc3\xa9","method":"\xf0\x9f\x98\x80","params":{"\xe2\x82\xac":1}}',
    "invalid-utf8": R + b'"id":1,"method":"\xff"}',
    "surrogate-utf8": R + b'"id":1,"method":"\xed\xa0\x80"}',
    "escaped-surrogate": R + b'"id":1,"method":"\\ud800"}',
    "nul": R + b'"id":1,"method":"a\x00"}',
    "truncated": R + b'"id":1,"method":',
    "trailing": R + b'"method":"m"} x',
    "stray": b"INFO listening on :8080",
    "stray-indented": b" \t\rWARN: x",
    "plus": b"+1",
    "dot": b".5",
    "bom-start": b"\xef\xbb\xbf" + R + b'"method":"m"}\n' + R + b'"method":"m"}',
    "bom-later": R + b'"method":"m"}\n\xef\xbb\xbf' + R + b'"method":"m"}',
    "crlf": R + b'"method":"a"}\r\n' + R + b'"id":1,"method":"b"}\r\n',
    "lone-cr": R + b'"method":"a"}\r' + R + b'"method":"b"}',
    "blank-lines": b"\n \n\t\r\n" + R + b'"method":"m"}\n\n',
    "mixed-lines": b"x\n[]\n5\n{}\n" + R + b'"id":2,"result":1}\n' + R + b'"id":2',
    "deep": b'{"jsonrpc":"2.0","method":"m","params":{"a":' + b"[" * 40 + b"]" * 40 + b"}}",
    "whitespace": b" \t\r\n" + R + b'"method":"m"} \t\r\n',
    "empty": b"",
    # Long strings, which the core checks 64 bytes a step (scan_long.h): escapes every
    # few bytes, runs of backslashes, embedded JSON, and text in 2-, 3- and 4-byte UTF-8.
    "long-escaped": R + b'"id":1,"result":"' + b'line\\n \\"q\\" \\\\ x\\n' * 12 + b'"}',
    "long-embedded-json": R + b'"id":1,"result":"' + b'{\\"k\\":[1,\\"v\\\\n\\"]},' * 10 + b'"}',
    "long-non-ascii": R + b'"id":1,"result":"' + "café 中文 😀 ".encode() * 10 + b'"}',
    "long-unicode-escapes": R + b'"id":1,"result":"' + b"\\u00e9\\ud83d\\ude00 ab" * 12 + b'"}',
}
# check_request's inputs (tests/_http_oracle.py): a body, this separator, header lines.
HTTP_SEPARATOR = b"\n\x00\n"
_CALL = (R + b'"id":1,"method":"tools/call","params":{"name":"echo","arguments":{"region":"eu",'
         b'"count":7},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
         b'"io.modelcontextprotocol/clientCapabilities":{}}}}')  # fmt: skip
_ROUTING = b"mcp-protocol-version:2026-07-28\nmcp-method:tools/call\nmcp-name:echo"
SEEDS.update({
    "http-mirrored": _CALL,  # no separator: the oracle sends the headers a client would
    "http-param-base64": _CALL + HTTP_SEPARATOR + _ROUTING + b"\nmcp-param-region:=?base64?ZXU=?=",
    "http-name-raw-byte": _CALL + HTTP_SEPARATOR + b"mcp-protocol-version:2026-07-28\n"
                          b"mcp-method:tools/call\nmcp-name:=?base64?\xe9?=",
    "http-str-surrogate": _CALL + HTTP_SEPARATOR + _ROUTING
                          + b"\nmcp-param-count:7\n~mcp-param-region:=?base64?\xff?=",
    "http-notification-surrogate": R + b'"method":"notifications/initialized"}' + HTTP_SEPARATOR
                                   + b"~mcp-protocol-version:\xff",
    "http-duplicated": _CALL + HTTP_SEPARATOR + _ROUTING + b"\nMcp-Param-Count:7\nmcp-param-count:7",
})  # fmt: skip


SDK = b"event: message\r\ndata: %s\r\n\r\n"
RESPONSE = R + b'"id":7,"result":{"content":[{"type":"text","text":"hi"}]}}'
SSE_SEEDS: dict[str, bytes] = {
    # head[0]: limit index (+128: route), head[1:]: cut points in 255ths of the stream
    "sdk": b"\x07\x40\x80\xc0" + SDK % RESPONSE + SDK % (R + b'"method":"m"}'),
    "sdk-route": b"\x87\x10\x55\xf0" + SDK % RESPONSE,
    "fields": b"\x06\x20\x60\xa0" + b"\xef\xbb\xbfid: 1\nretry: 10\nevent: e\n: c\nfoo: b\n"
              b"data: " + RESPONSE + b"\ndata\n\nid\ndata:\n\n",
    "line-ends": b"\x05\x01\x7f\xfe" + b"data: 1\rdata: 2\r\n\rdata: 3\n\r\n\r\r",
    "multi-line": b"\x06\x33\x66\x99" + b"data: {\"jsonrpc\":\ndata: \"2.0\",\"method\":\"m\"}\n\n",
    "over-long-data": b"\x04\x30\x50\x70" + b"data: " + RESPONSE + b"\n\ndata: " + RESPONSE[:30]
                      + b"\n\n",
    "long-comment": b"\x05\x10\x40\x90" + b"data: " + RESPONSE + b"\n: " + b"c" * 80 + b"\n\n"
                    + SDK % RESPONSE,
    "long-id": b"\x05\x20\x80\xd0" + b"data: " + RESPONSE + b"\nid: " + b"i" * 40 + b"\n\n",
    "small-limit": b"\x01\x08\x10\x18" + SDK % b"1" + b"data: 12345678\n\n",
    "blank-flood": b"\x06\x02\x80\xfd" + b"data: 1\n" + b"\r" * 200 + b"\r\n" * 50 + b"data: 2\n\n",
    "nul-and-utf8": b"\x06\x11\x22\x33" + b"id: a\0b\nevent: \xe2\x82\nid: \xff\ndata: \xc3\xa9\n\n",
}


def write(folder: str, seeds: dict[str, bytes]) -> None:
    """Each seed as fuzz/FOLDER/seed-NAME, in place of the seeds written before."""
    out = Path(__file__).resolve().parent / folder
    out.mkdir(exist_ok=True)
    for old in out.glob("seed-*"):
        old.unlink()
    for name, data in seeds.items():
        (out / f"seed-{name}").write_bytes(data)


def main() -> None:
    # A sample of the generated traffic, short lines only (the fuzzer's max_len is 4096).
    lines = [line for line in generate(400, seed=7) if len(line) <= 1024]
    generated = {f"generated-{number:02d}": line for number, line in enumerate(lines[::10])}
    # A few POSTs of every label of the generated 2026-07-28 traffic, as check_request's.
    http: dict[str, bytes] = {}
    taken: dict[str, int] = {}
    for label, body, pairs in iter_http(3000, seed=7):
        block = b"\n".join(name + b":" + value for name, value in pairs)
        if (taken.get(label, 0) == 3 or len(body) + len(block) > 2048
                or any(b"\n" in name + value for name, value in pairs)):
            continue
        number = taken[label] = taken.get(label, 0) + 1
        http[f"http-{label}-{number}"] = body + HTTP_SEPARATOR + block
    write("corpus", SEEDS | generated | http)
    write("corpus-sse", SSE_SEEDS)


if __name__ == "__main__":
    main()
