"""What every benchmark prints about the build it measured, and the verdicts it may give.

A benchmark that measured the pure-Python twin, or a core compiled without optimisation,
once reported on the core's targets (issue 23): ``rpcline._build_info`` names the build and
withholds a core verdict from any other.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = """
from rpcline._build_info import build, describe, verdict
print(build().implementation, repr(describe()), verdict(True), verdict(False), sep="|")
"""


def probe(twin: bool, tmp_path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "RPCLINE_NO_EXTENSIONS"}
    if twin:
        env["RPCLINE_NO_EXTENSIONS"] = "1"
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip().split("|")


def test_the_twin_is_named_and_judged_against_no_core_target(tmp_path):
    implementation, description, met, missed = probe(twin=True, tmp_path=tmp_path)
    assert implementation == "python"
    assert "pure-Python twin (RPCLINE_NO_EXTENSIONS is set)" in description
    assert met == missed == "not judged (the pure-Python twin ran, not the Cython core)"


@pytest.mark.c_extension
def test_the_core_is_named_with_its_optimisation_and_block_scans(tmp_path):
    from rpcline._core import scan_c

    implementation, description, met, missed = probe(twin=False, tmp_path=tmp_path)
    assert implementation == "cython"
    assert "the Cython core" in description
    assert f"block scan {scan_c.simd_path()} (of {', '.join(scan_c.SIMD_PATHS)})" in description
    if scan_c.OPTIMIZED is False:  # the debug build
        assert "NOT optimised" in description and met.startswith("not judged")
    else:
        assert (met, missed) == ("met", "NOT met")
