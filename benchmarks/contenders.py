"""What the benchmarks compare and on what: contenders, workloads and the one timed loop.

Shared by the pytest-benchmark suite, ``compare.py``, ``guard.py`` and the callgrind child,
so that every measurement calls every contender through the same Python loop on the same
lines. A contender is loaded by name and raises ``ImportError`` where it is not installed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

Parser = Callable[[bytes], object]
Labelled = tuple[str, bytes]  # (kind from rpcline.corpus, or "" for a file's line; line)

BASELINE = "orjson.loads"
SMALL_BYTES = 200
WHOLE = "whole corpus"
SMALL = f"small (<{SMALL_BYTES} B)"


def _orjson() -> Parser:
    import orjson

    return orjson.loads


def _rpcline_cython() -> Parser:
    from rpcline._core.message_c import parse as compiled  # ImportError where not built

    parse: Parser = compiled
    return parse


def _rpcline_python() -> Parser:
    from rpcline._core.message_py import parse

    return parse


def _rpcline_route() -> Parser:
    # Classification without decoding params or result (rpcline.route), Cython core.
    from rpcline._core.route_c import route as compiled  # ImportError where not built

    route: Parser = compiled
    return route


def _json_rules() -> Parser:
    # The twin's rules after the standard library's decoder: what the Cython core and
    # orjson buy over the obvious implementation.
    from rpcline._core.message_py import _classify

    loads = json.loads

    def parse(line: bytes) -> object:
        return _classify(loads(line))

    return parse


def _pysimdjson() -> Parser:
    # pysimdjson's lazy parse reading what a router reads (id and method): simdjson's
    # stage 1 validates the whole line, and nothing else is built. A non-object line
    # raises, as refusals do in other contenders; so does a parse while an id or method
    # that is an object still holds the parser, which run_pass never keeps.
    import simdjson

    parser = simdjson.Parser()

    def lazy(line: bytes) -> object:
        document = parser.parse(line)
        return document.get("id"), document.get("method")

    return lazy


def _ssrjson() -> Parser:
    # ssrjson (PyPI), a SIMD JSON decoder (SSE4.2, AVX2 or AVX-512 chosen at run time): a
    # whole decode, as orjson.loads does, large strings built included.
    import ssrjson

    loads: Parser = ssrjson.loads
    return loads


def _msgspec_raw() -> Parser:
    # msgspec decoding into a Struct of the members a router reads: jsonrpc, id and method
    # decoded, params, result and error kept as msgspec.Raw (the bytes, not decoded): the
    # peer closest to route's design. Skipped values are checked as JSON but their strings'
    # UTF-8 is not (b'"\xff"' passes), which route checks. A non-object line, or an id
    # of another type, raises ValidationError, as refusals raise in other contenders.
    import msgspec

    raw = msgspec.Raw
    envelope = msgspec.defstruct("Envelope", [
        ("jsonrpc", str | None, None), ("id", int | str | None, None),
        ("method", str | None, None), ("params", raw, raw()), ("result", raw, raw()),
        ("error", raw, raw()),
    ])
    decode: Parser = msgspec.json.Decoder(envelope).decode
    return decode


def _mcp_sdk() -> Parser:
    # What the official SDK's stdio transport calls for every line it reads.
    try:
        from mcp_types.jsonrpc import jsonrpc_message_adapter  # mcp 2.x
    except ImportError:
        from mcp.types import jsonrpc_message_adapter  # mcp 1.x
    validate: Parser = jsonrpc_message_adapter.validate_json
    return validate


CONTENDERS: dict[str, Callable[[], Parser]] = {
    BASELINE: _orjson,
    "rpcline-cython": _rpcline_cython,
    "rpcline-python": _rpcline_python,
    "rpcline-route": _rpcline_route,
    "json+rules": _json_rules,
    "mcp-sdk": _mcp_sdk,
    "pysimdjson": _pysimdjson,
    "ssrjson": _ssrjson,
    "msgspec-raw": _msgspec_raw,
}


def load(name: str) -> Parser:
    """The contender's parse function; ``ImportError`` when it is not installed or built."""
    return CONTENDERS[name]()


def available(names: list[str]) -> dict[str, Parser]:
    found = {}
    for name in names:
        try:
            found[name] = load(name)
        except ImportError as error:
            print(f"skipped {name}: {error}")
    return found


def run_pass(parse: Parser, lines: list[bytes]) -> None:
    """One pass over ``lines``: the loop every contender is timed in.

    Some contenders refuse a line by raising; catching costs nothing on the other lines
    (zero-cost ``try`` since Python 3.11) and is what their callers must do anyway. Not
    ``contextlib.suppress``: entering a context manager per line would cost more than
    parsing a small message.
    """
    for line in lines:
        try:  # noqa: SIM105 - see above
            parse(line)
        except Exception:
            pass


def load_jsonl(path: str | Path) -> list[bytes]:
    """The non-blank lines of a ``.jsonl`` file, or of every one in a folder, without LFs.

    ``benchmarks/data``, the project's recorded SDK sessions, is real traffic to measure.
    """
    path = Path(path)
    files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
    return [line for file in files for line in file.read_bytes().split(b"\n") if line.strip()]


def load_corpus(path: str | Path | None = None) -> list[Labelled]:
    """A file's lines (kind ``""``), or the generated corpus with its kinds when no path."""
    if path is not None:
        return [("", line) for line in load_jsonl(path)]
    from rpcline.corpus import DEFAULT_SEED, DEFAULT_SIZE, generate_labelled

    return list(generate_labelled(DEFAULT_SIZE, DEFAULT_SEED))


# Message classes: by size for any corpus, by generated kind for the generated one.
GROUPS: dict[str, Callable[[str, bytes], bool]] = {
    WHOLE: lambda kind, line: True,
    SMALL: lambda kind, line: len(line) < SMALL_BYTES,
    "tiny notification": lambda kind, line: kind == "notification" and len(line) < 100,
    "typical request": lambda kind, line: kind == "request",
    "typical response": lambda kind, line: kind == "response",
    "large tool result": lambda kind, line: kind == "large",
    "invalid JSON": lambda kind, line: kind == "malformed",
    "stray log line": lambda kind, line: kind == "stray",
}


# The large tail one text style at a time (rpcline.corpus.long_results): classes beside
# the generated corpus, not in it, so they leave its whole-corpus figures alone.
LONG_TEXTS = {
    "large plain ASCII": "plain-ascii",  # large_ascii_results: nothing to escape
    "large escaped text": "escaped",
    "large CJK text": "cjk",
    "large emoji text": "emoji",
    "large embedded JSON": "embedded-json",
}
LONG_TEXT_COUNT = 8
LARGE_ASCII_BYTES = 512 * 1024


def large_ascii_results(count: int = 4) -> list[bytes]:
    """``count`` tool results of 512 KiB of plain ASCII text, nothing to escape: the
    scanner's fastest case (the guard's "large ASCII results")."""
    words = b"the quick brown fox jumps over the lazy dog; " * (LARGE_ASCII_BYTES // 45)
    return [b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"'
            % n + words + b'"}]}}' for n in range(count)]


def workloads(
    labelled: list[Labelled], groups: list[str] | None = None, long_texts: bool = False
) -> dict[str, list[bytes]]:
    """The lines of each message class that has any, in corpus order; with ``long_texts``
    (the generated corpus's measurements) the ``LONG_TEXTS`` classes too."""
    chosen = groups or [*GROUPS, *(LONG_TEXTS if long_texts else ())]
    found: dict[str, list[bytes]] = {}
    for name in chosen:
        if name in GROUPS:
            found[name] = [line for kind, line in labelled if GROUPS[name](kind, line)]
        elif long_texts:
            from rpcline.corpus import long_results

            style = LONG_TEXTS[name]
            found[name] = (large_ascii_results() if style == "plain-ascii"
                           else long_results(style, LONG_TEXT_COUNT))  # type: ignore[arg-type]
    return {name: lines for name, lines in found.items() if lines}
