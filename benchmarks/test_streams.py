"""parse_lines and StreamParser.feed on the whole corpus as one buffer, one group."""

from __future__ import annotations

from typing import Any

import pytest
from streams import contenders, workload

RUNS = contenders()


@pytest.fixture(scope="module")
def buffer_and_lines(pytestconfig: pytest.Config) -> tuple[bytes, list[bytes]]:
    return workload(pytestconfig.getoption("--corpus"))


@pytest.mark.parametrize("name", list(RUNS))
def test_buffer(benchmark: Any, buffer_and_lines: tuple[bytes, list[bytes]], name: str) -> None:
    buffer, lines = buffer_and_lines
    benchmark.group = "whole corpus as one buffer"
    benchmark.extra_info.update(messages=len(lines), bytes=len(buffer))
    results = benchmark(RUNS[name], buffer, lines)
    assert len(results) == len(lines)  # every line yields exactly one result
