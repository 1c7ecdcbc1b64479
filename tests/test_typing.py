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
SDK_PROGRAM = Path(__file__).with_name("typing_sdk_program.py")  # rpcline.sdk with the SDK
SOURCE = Path(__file__).parents[1] / "src"  # a clone's package; absent beside a wheel's tests


NO_MYPY = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                             reason="mypy is not installed (pip install 'mypy==2.4.1'; .ci/run does)")


def mypy_strict(program: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    if (SOURCE / "rpcline").is_dir():  # an editable install hides the package from mypy
        env["MYPYPATH"] = str(SOURCE)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), str(program)],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )


@NO_MYPY
def test_types_follow_classify_under_mypy_strict(tmp_path: Path):
    done = mypy_strict(PROGRAM, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr


@NO_MYPY
@pytest.mark.skipif(importlib.util.find_spec("mcp") is None,
                    reason="the official MCP SDK is not installed (pip install '.[sdk]')")
def test_the_sdk_transport_types_as_the_sdk_s_under_mypy_strict(tmp_path: Path):
    done = mypy_strict(SDK_PROGRAM, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
