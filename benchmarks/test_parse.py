"""One benchmark per contender and message class, grouped by class (orjson bench/ style)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from contenders import Parser, run_pass


def test_parse(
    benchmark: Any, parser: Parser, lines: list[bytes], record: Callable[[], None]
) -> None:
    benchmark(run_pass, parser, lines)
    record()
