"""The benchmark corpus generator: deterministic, realistic, and agreeing with ``parse``."""

from __future__ import annotations

import hashlib
import statistics
from collections import Counter
from pathlib import Path

import pytest

import rpcline
from rpcline import corpus

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
    assert digest == "b5208332583b7f899bfa6fad0c4e3450f73f8aa5ba54821401b45736728a6bab"
