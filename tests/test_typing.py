"""The annotations a user's type checker sees: ``mypy --strict`` over tests/typing_program.py.

mypy is not a test dependency (its version decides what it reports): .ci/run installs the
pinned one before the tests, and without it this test is skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(__file__).with_name("typing_program.py")
SOURCE = Path(__file__).parents[1] / "src"  # a clone's package; absent beside a wheel's tests


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install 'mypy==2.4.1'; .ci/run does)")
def test_types_follow_classify_under_mypy_strict(tmp_path: Path):
    env = dict(os.environ)
    if (SOURCE / "rpcline").is_dir():  # an editable install hides the package from mypy
        env["MYPYPATH"] = str(SOURCE)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), str(PROGRAM)],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
