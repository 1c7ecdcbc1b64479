"""Interleaved wall-clock rounds: the one timing method of ``rpcline bench`` and compare.py.

Every contender makes one pass over the same lines from the same Python loop, in turn,
round after round; medians of those passes are compared within one run, so a noisy
machine shifts every contender alike.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

Contender = Callable[[Any], object]


@dataclass(frozen=True)
class Timing:
    name: str
    seconds_per_pass: float  # the median pass
    messages: int
    bytes: int
    passes: tuple[float, ...]  # every timed pass, in seconds: how far to trust the median

    @property
    def fastest(self) -> float:
        return min(self.passes)

    @property
    def slowest(self) -> float:
        return max(self.passes)

    @property
    def spread(self) -> float:
        """The middle half of the passes (quartile to quartile) as a share of the median.

        Quartiles, not the extremes: one pass interrupted by another process says little,
        a wide middle half says the median itself moved.
        """
        if len(self.passes) < 2:
            return 0.0
        low, _, high = statistics.quantiles(self.passes, n=4, method="inclusive")
        return (high - low) / self.seconds_per_pass

    @property
    def ns_per_message(self) -> float:
        return self.seconds_per_pass * 1e9 / self.messages

    @property
    def messages_per_second(self) -> float:
        return self.messages / self.seconds_per_pass

    @property
    def megabytes_per_second(self) -> float:
        return self.bytes / self.seconds_per_pass / 1e6


def one_pass(contender: Contender, lines: Sequence[Any]) -> float:
    """One timed pass; every contender runs in this same loop, so its cost is in all."""
    start = time.perf_counter()
    for line in lines:
        try:  # free when nothing is raised; a decoder's error is its answer to a bad line
            contender(line)
        except ValueError:
            pass
    return time.perf_counter() - start


def interleaved(
    contenders: dict[str, Contender], lines: Sequence[bytes], rounds: int = 15,
    after_pass: Callable[[], object] | None = None,
) -> list[Timing]:
    """The median pass of each contender over ``lines``, measured in interleaved rounds.

    ``after_pass`` is called after every pass, warm-up included (``(rounds + 1) *
    len(contenders)`` calls), between the timed regions: a progress bar costs no timing.
    """
    passes: dict[str, list[float]] = {name: [] for name in contenders}
    for contender in contenders.values():  # warm caches and freelists once
        one_pass(contender, lines)
        if after_pass is not None:
            after_pass()
    for _ in range(rounds):
        for name, contender in contenders.items():
            passes[name].append(one_pass(contender, lines))
            if after_pass is not None:
                after_pass()
    size = sum(map(len, lines))
    return [
        Timing(name, statistics.median(times), len(lines), size, tuple(times))
        for name, times in passes.items()
    ]
