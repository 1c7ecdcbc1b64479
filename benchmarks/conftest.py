"""pytest-benchmark fixtures: every contender on every message class, read per message.

    python -m pytest benchmarks/ [--corpus FILE.jsonl] [--benchmark-json out.json]

Each benchmark is one full pass over a class's lines through ``contenders.run_pass``;
``extra_info`` carries messages, bytes, ns/message and MB/s, and a summary table at the
end gives ns/message and the ratio to orjson.loads per class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from contenders import (
    BASELINE,
    CONTENDERS,
    GROUPS,
    LONG_TEXTS,
    Parser,
    load,
    load_corpus,
    workloads,
)

RESULTS = pytest.StashKey[dict[str, dict[str, float]]]()  # group -> contender -> ns/message


def pytest_report_header(config: pytest.Config) -> str:
    from rpcline._build_info import describe

    return f"measuring {describe()}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--corpus", help="benchmark this .jsonl file (default: the generated corpus)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "group" in metafunc.fixturenames:
        metafunc.parametrize("group", [*GROUPS, *LONG_TEXTS])
    if "contender" in metafunc.fixturenames:
        metafunc.parametrize("contender", list(CONTENDERS))


@pytest.fixture(scope="session")
def classes(pytestconfig: pytest.Config) -> dict[str, list[bytes]]:
    path = pytestconfig.getoption("--corpus")
    return workloads(load_corpus(path), long_texts=path is None)


@pytest.fixture
def lines(classes: dict[str, list[bytes]], group: str) -> list[bytes]:
    if group not in classes:
        pytest.skip(f"no {group} lines in this corpus")
    return classes[group]


@pytest.fixture
def parser(contender: str) -> Parser:
    try:
        return load(contender)
    except ImportError as error:
        pytest.skip(f"{contender} is not available: {error}")


@pytest.fixture
def record(
    request: pytest.FixtureRequest, benchmark: Any, group: str, contender: str, lines: list[bytes]
) -> Callable[[], None]:
    """Call after the benchmark: adds the per-message figures to the report and the summary."""
    size = sum(map(len, lines))
    benchmark.group = group
    benchmark.extra_info.update(messages=len(lines), bytes=size)

    def done() -> None:
        # None with --benchmark-disable; absent under pytest-codspeed (--codspeed), whose
        # fixture measures and reports by itself.
        if getattr(benchmark, "stats", None) is None:
            return
        ns = benchmark.stats.stats.median * 1e9 / len(lines)
        benchmark.extra_info.update({"ns/message": ns, "MB/s": size / len(lines) / ns * 1e3})
        request.config.stash.setdefault(RESULTS, {}).setdefault(group, {})[contender] = ns

    return done


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    results = config.stash.get(RESULTS, {})
    if not results:
        return
    write = terminalreporter.write_line
    terminalreporter.section("per message (median)")
    for group, figures in results.items():
        write(f"{group}:")
        base = figures.get(BASELINE)
        for name, ns in figures.items():
            ratio = f"{ns / base:6.2f}x {BASELINE}" if base else ""
            write(f"  {name:<16} {ns:10.0f} ns/message  {ratio}")
