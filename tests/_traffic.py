"""Recorded traffic for the real-traffic tests.

By default the project's own recording, ``benchmarks/data/*.jsonl`` (sessions between the
official MCP SDK's client and server, made by ``benchmarks/record_traffic.py``);
``RPCLINE_TRAFFIC=FILE[:FILE...]`` points the tests at any other capture.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "benchmarks" / "data"


def traffic_files() -> list[Path]:
    named = os.environ.get("RPCLINE_TRAFFIC")
    if named:
        return [Path(name) for name in named.split(os.pathsep)]
    return sorted(DATA.glob("*.jsonl"))


def traffic_lines() -> list[bytes]:
    """Every non-blank line of the recorded traffic; skips, saying why, when there is none."""
    files = traffic_files()
    if not files:
        pytest.skip(f"no recorded traffic: {DATA} holds no .jsonl files (a copy of the tests "
                    "without benchmarks/data?) and RPCLINE_TRAFFIC names none")
    return [line for path in files for line in path.read_bytes().split(b"\n") if line.strip()]
