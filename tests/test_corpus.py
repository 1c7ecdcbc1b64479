"""The benchmark corpus generator: deterministic, realistic, and agreeing with ``parse``."""

from __future__ import annotations

import hashlib
import inspect
import statistics
from collections import Counter
from pathlib import Path
from types import ModuleType

import orjson
import pytest

import rpcline
import rpcline.http
from rpcline import corpus
from rpcline._core.http_schema import ParamHeaders

# Large enough for every kind of line, small enough to generate in a blink.
COUNT = 2000

EXPECTED_RESULT = {
    "request": rpcline.Request,
    "notification": rpcline.Notification,
    "response": rpcline.ClientResponse,
    "error": rpcline.ClientResponse,
    "large": rpcline.ClientResponse,
    "stray": rpcline.Refused,
    "malformed": rpcline.Refused,
    "invalid": rpcline.Refused,
}


@pytest.fixture(scope="module")
def labelled() -> list[tuple[corpus.Kind, bytes]]:
    return corpus.generate_labelled(COUNT)


@pytest.fixture(scope="module")
def lines(labelled: list[tuple[corpus.Kind, bytes]]) -> list[bytes]:
    return [line for _, line in labelled]


def test_same_seed_same_bytes(lines: list[bytes]) -> None:
    assert corpus.generate(COUNT) == lines
    assert corpus.generate(300, seed=7) == corpus.generate(300, seed=7)


def test_different_seed_different_lines(lines: list[bytes]) -> None:
    assert corpus.generate(COUNT, seed=corpus.DEFAULT_SEED + 1) != lines


def test_prefix_stable() -> None:
    # A shorter corpus is the start of a longer one: sizes can change without reshuffling.
    assert corpus.generate(500) == corpus.generate(1000)[:500]


@pytest.mark.parametrize("count", [0, 1, 2, 3, 37, 1001])
def test_count_respected(count: int) -> None:
    assert len(corpus.generate(count, seed=count)) == count


def test_negative_count() -> None:
    with pytest.raises(ValueError, match="count"):
        corpus.generate(-1)


def test_lines_are_single_utf8_lines(lines: list[bytes]) -> None:
    for line in lines:
        assert type(line) is bytes
        assert line and b"\n" not in line and b"\r" not in line
        line.decode("utf-8")  # raises if not UTF-8


def test_labels_agree_with_parse(labelled: list[tuple[corpus.Kind, bytes]]) -> None:
    for kind, line in labelled:
        assert type(rpcline.parse(line)) is EXPECTED_RESULT[kind], (kind, line[:200])


def test_every_kind_present(labelled: list[tuple[corpus.Kind, bytes]]) -> None:
    assert set(Counter(kind for kind, _ in labelled)) == set(EXPECTED_RESULT)
    results = Counter(type(rpcline.parse(line)).__name__ for _, line in labelled)
    assert all(results[name] > 0 for name in ("Request", "Notification", "ClientResponse"))
    # A few percent of refusals, as in captured traffic.
    assert 0.01 * COUNT <= results["Refused"] <= 0.06 * COUNT


def test_refusals_cover_each_error(lines: list[bytes]) -> None:
    codes = Counter(
        result.error.code for result in map(rpcline.parse, lines) if type(result) is rpcline.Refused
    )
    assert set(codes) == {-32700, -32600, -32602}


def test_ids_both_integers_and_strings(lines: list[bytes]) -> None:
    ids = [result.id for result in map(rpcline.parse, lines) if type(result) is rpcline.Request]
    assert any(type(id) is int for id in ids) and any(type(id) is str for id in ids)


def test_size_distribution_realistic(labelled: list[tuple[corpus.Kind, bytes]]) -> None:
    small = [len(line) for kind, line in labelled if kind != "large"]
    assert 100 <= statistics.median(small) <= 300
    assert min(small) < 60 and 1000 < max(small) < 8 * 1024


def test_large_tail_rare_and_sized(labelled: list[tuple[corpus.Kind, bytes]]) -> None:
    large = [len(line) for kind, line in labelled if kind == "large"]
    assert 1 <= len(large) <= 0.01 * COUNT
    assert all(64 * 1024 <= size <= 1100 * 1024 for size in large)


def test_default_corpus_a_few_megabytes() -> None:
    size = sum(map(len, corpus.generate(corpus.DEFAULT_SIZE)))
    assert 1_000_000 < size < 12_000_000


def test_write_jsonl_round_trips(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "corpus.jsonl"
    corpus.write_jsonl(path, COUNT)
    data = path.read_bytes()
    assert data.endswith(b"\n")
    assert data.split(b"\n")[:-1] == lines


def test_cli_writes_the_same(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    corpus.main([str(path), "--count", "50", "--seed", "3"])
    assert path.read_bytes() == b"".join(line + b"\n" for line in corpus.generate(50, 3))


def test_pinned_output() -> None:
    # Byte-identical on every Python and run; when the generator changes on purpose, update
    # the digest (and know that benchmark results before and after do not compare).
    digest = hashlib.sha256(b"\n".join(corpus.generate(1000))).hexdigest()
    assert digest == "f965600903e65e537c4385983432b2749d854ce85333854e092e122b8ebeb129"


# --- the text styles of large results ----------------------------------------------------


@pytest.fixture(scope="module")
def styled() -> dict[str, list[bytes]]:
    return {style: corpus.long_results(style, 3, seed=5) for style in corpus.TEXT_STYLES}


def _texts(lines: list[bytes]) -> list[str]:
    return [orjson.loads(line)["result"]["content"][0]["text"] for line in lines]


def test_long_results_are_the_large_tail(styled: dict[str, list[bytes]]) -> None:
    for style, lines in styled.items():
        assert lines == corpus.long_results(style, 3, seed=5), style  # deterministic
        for line in lines:
            assert 64 * 1024 <= len(line) <= 1100 * 1024, (style, len(line))
            assert type(rpcline.parse(line)) is rpcline.ClientResponse
            assert rpcline.route(line).kind == "response"


def test_escaped_text_escapes_every_25_bytes(styled: dict[str, list[bytes]]) -> None:
    for line in styled["escaped"]:
        escapes = line.count(b'\\n') + line.count(b'\\"')
        assert 20 <= len(line) / escapes <= 30


def test_cjk_and_emoji_texts_are_non_ascii(styled: dict[str, list[bytes]]) -> None:
    for text in _texts(styled["cjk"]):
        ideographs = sum("\u4e00" <= c <= "\u9fff" for c in text)
        assert ideographs > 0.8 * len(text)
    for text in _texts(styled["emoji"]):
        assert sum(c >= "\U0001f000" for c in text) > 0.1 * len(text)


def test_embedded_json_is_a_json_document(styled: dict[str, list[bytes]]) -> None:
    for line, text in zip(styled["embedded-json"], _texts(styled["embedded-json"]), strict=True):
        records = orjson.loads(text)
        assert type(records) is list and len(records) > 100
        assert line.count(b'\\"') > len(line) / 20  # a quote escaped every few bytes


def test_prose_is_the_corpus_vocabulary(styled: dict[str, list[bytes]]) -> None:
    for text in _texts(styled["prose"]):
        assert "café" in text or "→" in text
        assert text.isascii() is False and text.count("\n") > 100


def test_long_results_refuse_unknown_styles() -> None:
    with pytest.raises(ValueError, match="style must be one of"):
        corpus.long_results("klingon", 1)  # type: ignore[arg-type]


def _style_of(text: str) -> str:
    if text.startswith('[{"id":'):
        return "embedded-json"
    if sum("\u4e00" <= c <= "\u9fff" for c in text) > len(text) / 2:
        return "cjk"
    if any(c >= "\U0001f000" for c in text):
        return "emoji"
    return "escaped" if text.count("\n") + text.count('"') > len(text) / 30 else "prose"


def test_large_results_come_in_several_styles() -> None:
    # The corpus's own large tail mixes binary data and the text styles.
    large = [line for kind, line in corpus.generate_labelled(corpus.DEFAULT_SIZE) if kind == "large"]
    results = [orjson.loads(line)["result"] for line in large]
    items = [(result.get("content") or result["contents"])[0] for result in results]
    styles = {_style_of(item["text"]) for item in items if "text" in item}
    assert len(styles) >= 3 and len(styles) < len(items)  # and some binary
    for style in corpus.TEXT_STYLES:  # the detector above tells each style apart
        assert {_style_of(text) for text in _texts(corpus.long_results(style, 1))} == {style}


# --- the 2026-07-28 era of the line corpus --------------------------------------------------

V2026 = "2026-07-28"


def test_both_eras_and_their_rules(lines: list[bytes]) -> None:
    """A conversation opened by server/discover is stateless: every client request carries
    the envelope, every result its resultType, and there is no initialize or ping; one
    opened by initialize has neither envelope nor resultType."""
    era = None
    seen: Counter[str] = Counter()
    for line in lines:
        message = orjson.loads(line) if type(rpcline.parse(line)) is not rpcline.Refused else None
        if not isinstance(message, dict):
            continue
        method = message.get("method")
        if method in ("server/discover", "initialize"):
            era = method
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta = params.get("_meta", {})
        if "id" in message and method is not None and method != "roots/list":
            seen[f"{era} {method}"] += 1
            stateless = corpus.VERSION_KEY in meta
            assert stateless == (era == "server/discover"), line[:300]
            if stateless:
                assert meta[corpus.VERSION_KEY] == V2026 and type(meta[corpus.CAPABILITIES_KEY]) is dict
                assert method not in ("initialize", "ping"), line[:300]
        result = message.get("result")
        if isinstance(result, dict):
            assert ("resultType" in result) == (era == "server/discover"), line[:300]
            seen[f"{era} {result.get('resultType')}"] += 1
    assert seen["server/discover server/discover"] and seen["initialize initialize"]
    assert seen["server/discover subscriptions/listen"] and seen["server/discover tools/call"]
    assert seen["server/discover complete"] and seen["server/discover input_required"]


def test_stateless_requests_pass_the_http_ladder(labelled: list[tuple[corpus.Kind, bytes]]) -> None:
    # Without headers, check_request runs the body's rungs: envelope, version, envelope shape.
    checked = 0
    for kind, line in labelled:
        if kind == "request" and b'"io.modelcontextprotocol/protocolVersion"' in line:
            verdict = rpcline.http.check_request(line, None)
            assert (verdict.status, verdict.error) == (200, None), line[:300]
            checked += 1
    assert checked > 0.05 * COUNT


# --- HTTP POSTs ---------------------------------------------------------------------------

HTTP_COUNT = 3000


@pytest.fixture(scope="module")
def posts() -> list[corpus.HttpPost]:
    return list(corpus.iter_http(HTTP_COUNT))


@pytest.fixture(scope="module")
def http_tools() -> dict[str, ParamHeaders]:
    return {name: ParamHeaders(schema) for name, schema in corpus.HTTP_TOOLS.items()}


def mcp_headers(pairs: list[tuple[bytes, bytes]]) -> list[tuple[str, str]]:
    return [(n.decode().lower(), v.decode("latin-1")) for n, v in pairs if n[:4].lower() == b"mcp-"]


def test_http_deterministic_and_prefix_stable(posts: list[corpus.HttpPost]) -> None:
    assert list(corpus.iter_http(HTTP_COUNT)) == posts
    assert list(corpus.iter_http(700)) == posts[:700]
    assert list(corpus.iter_http(300, seed=5)) == list(corpus.iter_http(300, seed=5))
    assert list(corpus.iter_http(300, seed=5)) != posts[:300]
    assert inspect.signature(corpus.iter_http).parameters["seed"].default == corpus.DEFAULT_SEED
    assert [len(list(corpus.iter_http(n))) for n in (0, 1, 41)] == [0, 1, 41]
    with pytest.raises(ValueError, match="count"):
        next(corpus.iter_http(-1))


def test_http_pinned_output() -> None:
    # As test_pinned_output: update on purpose, knowing http_check.py figures then change.
    digest = hashlib.sha256()
    for label, body, pairs in corpus.iter_http(1000):
        digest.update(b"\n".join([label.encode(), body, *(n + b": " + v for n, v in pairs)]))
    assert digest.hexdigest() == "5f4a83fa426c42ace6b4838c10f173ef723358bacf3ccd376402d93c4b52afc0"


def test_http_posts_as_asgi_gives_them(posts: list[corpus.HttpPost]) -> None:
    for _, body, pairs in posts:
        assert type(body) is bytes and all(type(n) is type(v) is bytes for n, v in pairs)
        usual = {n: v for n, v in pairs if n[:4].lower() != b"mcp-"}
        assert set(usual) >= {b"host", b"accept", b"content-type", b"user-agent", b"content-length"}
        assert all(n == n.lower() for n in usual) and usual[b"content-length"] == str(len(body)).encode()


def test_http_shares(posts: list[corpus.HttpPost]) -> None:
    shares = Counter(label for label, _, _ in posts)
    assert set(shares) == set(corpus.HTTP_ANSWERS)
    assert 0.86 * HTTP_COUNT <= shares["ok"] + shares["notification"] <= 0.94 * HTTP_COUNT
    assert 0.03 * HTTP_COUNT <= shares["mismatch"] <= 0.08 * HTTP_COUNT


def test_http_labels_agree_with_check_request(
    hmod: ModuleType, posts: list[corpus.HttpPost], http_tools: dict[str, ParamHeaders]
) -> None:
    for label, body, pairs in posts:
        verdict = hmod.check_request(body, pairs, tools=http_tools)
        code = None if verdict.error is None else verdict.error.code
        assert (verdict.status, code) == corpus.HTTP_ANSWERS[label], (label, body[:300], pairs)
        if verdict.status == 400:
            assert orjson.loads(verdict.response)["error"]["code"] == code
        if label == "ok":  # what a router reads, as the mirrored headers said it
            headers = dict(mcp_headers(pairs))
            assert verdict.protocol_version == V2026
            assert verdict.route.method == headers["mcp-method"]


def test_http_covers_each_defect(posts: list[corpus.HttpPost]) -> None:
    """Each kind of header the guard must see through occurs, with the label it deserves."""
    found: Counter[str] = Counter()
    for label, body, pairs in posts:
        headers = mcp_headers(pairs)
        names = [n for n, _ in headers]
        message = orjson.loads(body) if label not in ("parse-error",) else None
        params = message.get("params") if isinstance(message, dict) else None
        params = params if isinstance(params, dict) else {}
        named = params.get("name", params.get("uri")) if isinstance(message, dict) else None
        sent = dict(headers).get("mcp-name")
        facts = {
            "sentinel": any(v.startswith("=?base64?") for _, v in headers),
            "mixed-case": any(n[:4] == b"Mcp-" for n, _ in pairs),
            "nested-param": "mcp-param-region" in names,
            "listen": isinstance(message, dict) and message.get("method") == "subscriptions/listen",
            "discover": isinstance(message, dict) and message.get("method") == "server/discover",
            "duplicate": len(set(names)) < len(names),
            "nul": any("\x00" in v for _, v in headers),
            "huge": any(len(v) > 8192 for _, v in headers),
            "trailing-space": any(v != v.rstrip() for _, v in headers),
            "prefix": isinstance(named, str) and sent is not None and sent != named
            and named.startswith(sent),
            "other-tool": sent in ("delete_repository", "run_query") and sent != named,
            "no-meta": "id" in (message or {}) and "_meta" not in params,
            "batch": isinstance(message, list),
            "posted-response": isinstance(message, dict) and ("result" in message or "error" in message),
            "notification": isinstance(message, dict) and "id" not in message,
            "empty": body == b"",
        }
        found.update(f"{label} {fact}" for fact, present in facts.items() if present)
    for expected in (
        "ok sentinel", "ok mixed-case", "ok nested-param", "ok listen", "ok discover",
        "mismatch sentinel", "mismatch duplicate", "mismatch nul", "mismatch huge",
        "mismatch trailing-space", "mismatch prefix", "mismatch other-tool",
        "mismatch nested-param", "invalid-params no-meta", "invalid-request batch",
        "invalid-request posted-response", "unsupported notification", "parse-error empty",
    ):  # fmt: skip
        assert found[expected], expected


def test_http_labels_agree_with_the_sdk(
    posts: list[corpus.HttpPost], http_tools: dict[str, ParamHeaders]
) -> None:
    """The SDK's own ladder (as test_http.py's oracle runs it) answers each POST the same,
    apart from the differences docs/gateways.md lists."""
    pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                        "installed: nothing to compare the labels with")  # fmt: skip
    from test_http import expected_from_sdk, sdk_verdict

    schemas = dict(corpus.HTTP_TOOLS)
    for label, body, pairs in posts:
        ours = rpcline.http.check_request(body, pairs, tools=http_tools)
        sdk = expected_from_sdk(body, sdk_verdict(body, pairs, schemas), ours)
        assert sdk == corpus.HTTP_ANSWERS[label], (label, body[:300], pairs)
