"""The text of generated tool results, in the styles that cost JSON scanners the most.

``rpcline.corpus`` (which re-exports ``TEXT_STYLES``, ``TextStyle`` and ``long_results``)
writes a large tool result's text in one of five styles:

- ``prose``: words, now and then a non-ASCII one or a newline (most tool output);
- ``escaped``: an escape about every 25 bytes, a newline or a quote (code, logs, quoted
  text): a scanner that leaves its fast path at each escape pays for every one;
- ``cjk``: Chinese text, three UTF-8 bytes a character, every byte non-ASCII;
- ``emoji``: chat text with emoji among the words, four UTF-8 bytes each;
- ``embedded-json``: a JSON document encoded as a string, as MCP servers return
  structured results in a text content item: a quote escaped every few bytes.

Deterministic as ``rpcline.corpus`` is: only ``random.Random`` methods whose algorithm is
fixed (``randrange``, ``choice``), and orjson's output, which is fixed for the same input.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Final, Literal, TypeAlias

import orjson

__all__ = ("TEXT_STYLES", "TextStyle", "long_results", "styled_text")

TextStyle: TypeAlias = Literal["prose", "escaped", "cjk", "emoji", "embedded-json"]
TEXT_STYLES: Final[tuple[TextStyle, ...]] = ("prose", "escaped", "cjk", "emoji", "embedded-json")

_KIB: Final = 1024
_ASCII_WORDS: Final = (
    "the", "a", "of", "to", "and", "in", "for", "is", "on", "with", "query", "table", "row",
    "index", "file", "cache", "token", "request", "server", "client", "stream", "schema",
    "value", "error", "result", "update", "page", "user", "session", "build", "deploy",
)  # fmt: skip
# Prose keeps today's vocabulary: some non-ASCII words and newlines among ASCII ones.
PROSE_WORDS: Final = (
    *_ASCII_WORDS, "release", "branch", "commit", "review", "latency", "budget", "report",
    "summary", "café", "naïve", "20 °C", "→", "✓", "done.\n", "ok.\n", "\n", "- item\n",
)  # fmt: skip
_CJK_PUNCTUATION: Final = ("，", "。", "、", "：", "\n")
_EMOJI: Final = ("😀", "🚀", "✅", "🎉", "👍", "🔥", "🤔", "📦", "🐍", "⚠️", "👋🏽", "🇯🇵")


def styled_text(rng: random.Random, style: TextStyle, size: int) -> str:
    """Text of ``style`` that takes about ``size`` bytes (at most a piece more) as a JSON
    string, escapes included, so that a result's line is as long in every style."""
    piece = _PIECES[style]
    parts: list[str] = []
    total = 0
    while total < size:
        part = piece(rng)
        parts.append(part)
        total += len(orjson.dumps(part)) - 2  # escaped, without its quotes
    if style == "embedded-json":  # the records, comma-separated, make one JSON array
        return f"[{','.join(parts)}]"
    return "".join(parts)


def long_results(style: TextStyle, count: int, seed: int = 827) -> list[bytes]:
    """``count`` tool results of 64 KiB to 1 MiB whose text is in ``style``: the large
    tail of the corpus, one style at a time, for benchmarks of that style alone."""
    if style not in TEXT_STYLES:
        raise ValueError(f"style must be one of {', '.join(TEXT_STYLES)}, not {style!r}")
    rng = random.Random(seed)
    lines = []
    for id in range(1, count + 1):
        size = (64 * _KIB) << rng.randrange(4)  # as the corpus's tail: 64 KiB to 1 MiB
        content = {"type": "text", "text": styled_text(rng, style, size + rng.randrange(size))}
        result = {"content": [content], "isError": False}
        lines.append(orjson.dumps({"jsonrpc": "2.0", "id": id, "result": result}))
    return lines


def _prose(rng: random.Random) -> str:
    return rng.choice(PROSE_WORDS) + " "


def _escaped(rng: random.Random) -> str:
    # 23 or 24 bytes of words, then a newline or a quote: JSON escapes one every ~25 bytes.
    words = rng.choice(_ASCII_WORDS)
    while len(words) < 23:
        words += " " + rng.choice(_ASCII_WORDS)
    return words[:23] + rng.choice(("\n", '"', "\n"))


def _cjk(rng: random.Random) -> str:
    # CJK Unified Ideographs, a clause of 4 to 15 characters, then punctuation.
    clause = "".join(chr(rng.randrange(0x4E00, 0xA000)) for _ in range(rng.randrange(4, 16)))
    return clause + rng.choice(_CJK_PUNCTUATION)


def _emoji(rng: random.Random) -> str:
    return f"{rng.choice(_ASCII_WORDS)} {rng.choice(_EMOJI)} "


def _embedded_json(rng: random.Random) -> str:
    # One record of a listing; styled_text makes the records one JSON array.
    record = {
        "id": rng.randrange(1, 100_000),
        "name": f"{rng.choice(_ASCII_WORDS)}_{rng.choice(_ASCII_WORDS)}",
        "path": f"/srv/{rng.choice(_ASCII_WORDS)}/{rng.randrange(1000)}.json",
        "tags": [rng.choice(_ASCII_WORDS) for _ in range(rng.randrange(3))],
        "ok": rng.randrange(2) == 1,
    }
    return orjson.dumps(record).decode()


_PIECES: Final[dict[TextStyle, Callable[[random.Random], str]]] = {
    "prose": _prose,
    "escaped": _escaped,
    "cjk": _cjk,
    "emoji": _emoji,
    "embedded-json": _embedded_json,
}
