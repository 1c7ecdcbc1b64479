"""Render compare.py's --json results as a bar chart: cost per message, per class and contender.

    python benchmarks/compare.py --json   # writes .benchmarks/compare.json
    python benchmarks/chart.py [RESULTS.json] [-o docs/benchmark.png]

One bar per contender in each message class, on a log scale when the classes span decades
(a few hundred nanoseconds for a log line, a hundred microseconds for a 1 MB result).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only: no display on CI machines
import matplotlib.pyplot as plt  # after choosing the backend

from compare import DEFAULT_JSON


def render(report: dict[str, Any], out: Path) -> None:
    groups = list(report["groups"])
    names = list(report["groups"][groups[0]]["contenders"])
    width = 0.8 / len(names)
    figure, axes = plt.subplots(figsize=(max(8.0, 1.5 * len(groups)), 5), layout="constrained")
    every: list[float] = []
    for index, name in enumerate(names):
        costs = [
            report["groups"][g]["contenders"].get(name, {}).get("per_message", 0) for g in groups
        ]
        positions = [g + (index - (len(names) - 1) / 2) * width for g in range(len(groups))]
        axes.bar(positions, costs, width, label=name)
        every += [cost for cost in costs if cost > 0]
    # A log scale only where the costs span decades (a log line next to a 1 MB result);
    # on a narrow range it would shrink the differences the chart is there to show.
    scale = "log" if max(every) > 20 * min(every) else "linear"
    axes.set_yscale(scale)
    axes.set_xticks(range(len(groups)), [_label(g, report) for g in groups], fontsize=8)
    unit = "ns" if report["mode"] == "wall-clock" else "instructions"
    axes.set_ylabel(f"{unit} per message ({scale} scale, lower is better)")
    axes.set_title(f"{report['mode']}, {report['corpus']}, Python {report['python']}", fontsize=9)
    axes.legend(fontsize=8)
    axes.grid(axis="y", which="both", alpha=0.3)
    out.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(out, dpi=120)


def _label(group: str, report: dict[str, Any]) -> str:
    result = report["groups"][group]
    average = result["bytes"] / result["messages"]
    size = f"{average:.0f} B" if average < 10_000 else f"{average / 1024:.0f} KiB"
    return f"{group}\n{result['messages']} msgs, {size} avg"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", type=Path, default=DEFAULT_JSON)
    parser.add_argument("-o", "--out", type=Path, default=Path("docs/benchmark.png"))
    args = parser.parse_args(argv)
    render(json.loads(args.results.read_text()), args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
