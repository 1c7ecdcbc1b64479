"""The release configuration: cibuildwheel selects exactly the intended wheels.

A typo in ``[tool.cibuildwheel]`` (pyproject.toml) would silently drop or add wheels in the
release workflow, which this project's CI cannot run (it needs containers and macOS and
Windows runners). ``cibuildwheel --print-build-identifiers`` needs none of them, so the
selection is checked here, for every platform, with the cibuildwheel version the workflow
pins. Skipped where cibuildwheel is not installed (``.ci/run`` installs it) or where only the
tests were copied (cibuildwheel's own test step).
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
WORKFLOW = ROOT / ".github" / "workflows" / "wheels.yml"

# orjson's wheels decide these (pyproject.toml says how that was checked).
PYTHONS = ("cp311", "cp312", "cp313", "cp314", "cp315")
# orjson 3.13's cp315 wheels for glibc: manylinux_2_39 only.
CP315_GLIBC_TAGS = {"x86_64": "manylinux_2_39_x86_64", "aarch64": "manylinux_2_39_aarch64"}
EXPECTED = {
    "linux": [
        f"{python}-{libc}_{arch}"
        for python in PYTHONS
        for libc in ("manylinux", "musllinux")
        for arch in ("x86_64", "aarch64")
    ],
    "macos": [f"{python}-macosx_{arch}" for python in PYTHONS for arch in ("x86_64", "arm64")],
    "windows": [f"{python}-win_amd64" for python in PYTHONS],
}

needs_cibuildwheel = pytest.mark.skipif(
    importlib.util.find_spec("cibuildwheel") is None,
    reason="cibuildwheel is not installed (pip install cibuildwheel; .ci/run installs it)",
)


def config() -> dict:
    if not PYPROJECT.exists():
        pytest.skip(f"no pyproject.toml beside the tests ({PYPROJECT})")
    with PYPROJECT.open("rb") as file:
        return tomllib.load(file)


def build_identifiers(platform: str) -> list[str]:
    config()  # skips without a pyproject.toml
    # CIBW_* variables would override the file; the file alone is under test.
    env = {name: value for name, value in os.environ.items() if not name.startswith("CIBW_")}
    done = subprocess.run(
        [sys.executable, "-m", "cibuildwheel", "--print-build-identifiers",
         "--platform", platform, str(ROOT)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@needs_cibuildwheel
@pytest.mark.parametrize("platform", sorted(EXPECTED))
def test_cibuildwheel_selects_exactly_the_intended_wheels(platform):
    assert sorted(build_identifiers(platform)) == sorted(EXPECTED[platform])


def resolved_linux_options():
    """cibuildwheel's own resolution of the file's Linux options (overrides included)."""
    from cibuildwheel.options import CommandLineArguments, compute_options

    config()  # skips without a pyproject.toml
    args = CommandLineArguments.defaults()
    args.package_dir = ROOT
    args.platform = "linux"
    env = {name: value for name, value in os.environ.items() if not name.startswith("CIBW_")}
    return compute_options("linux", args, env)


@needs_cibuildwheel
def test_cp315_glibc_wheels_install_only_where_orjson_does():
    # orjson ships cp315 glibc wheels for manylinux_2_39 only. A cp315 wheel of ours tagged
    # manylinux_2_17 (auditwheel's default, or its added older tags without --only-plat)
    # would install on glibc 2.17 to 2.38, where pip cannot find orjson's. Nor can the
    # build container (glibc 2.34) install either wheel, so they are not tested there.
    options = resolved_linux_options()
    for arch, tag in CP315_GLIBC_TAGS.items():
        build = options.build_options(f"cp315-manylinux_{arch}")
        assert f"--only-plat --plat {tag} " in build.repair_command, build.repair_command
        assert not options.globals.test_selector(f"cp315-manylinux_{arch}")
        older = options.build_options(f"cp314-manylinux_{arch}")
        assert "--plat" not in older.repair_command  # manylinux2014: glibc 2.17, as orjson
        assert options.globals.test_selector(f"cp314-manylinux_{arch}")
    assert options.globals.test_selector("cp315-musllinux_x86_64")


@needs_cibuildwheel
def test_the_workflow_pins_the_cibuildwheel_checked_here():
    # The selection depends on cibuildwheel's version (newer ones add Pythons by default),
    # so the list checked above is the workflow's only when the versions agree.
    if not WORKFLOW.exists():
        pytest.skip(f"no workflow beside the tests ({WORKFLOW})")
    pins = set(re.findall(r"cibuildwheel==([0-9][0-9.]*)", WORKFLOW.read_text()))
    assert pins == {importlib.metadata.version("cibuildwheel")}


def test_wheel_tests_install_the_test_extra():
    project = config()
    assert project["tool"]["cibuildwheel"]["test-requires"] == (
        project["project"]["optional-dependencies"]["test"]
    )


def test_wheels_are_tested_outside_the_source_tree():
    cibw = config()["tool"]["cibuildwheel"]
    # Relative paths: cibuildwheel copies test-sources into a temporary working folder.
    assert "tests" in cibw["test-sources"]
    assert "{project}" not in cibw["test-command"] and "{package}" not in cibw["test-command"]
    assert not any(source.startswith("src") for source in cibw["test-sources"])


def test_release_builds_use_the_build_constraints():
    environment = config()["tool"]["cibuildwheel"]["environment"]
    constraints = ROOT / "build-constraints.txt"
    assert environment["PIP_CONSTRAINT"] == environment["PIP_BUILD_CONSTRAINT"] == constraints.name
    if constraints.exists():  # in the source tree and the sdist
        pins = {
            line.split("==")[0].lower(): line.split("==")[1]
            for line in constraints.read_text().splitlines()
            if line and not line.startswith("#")
        }
        assert {"cython", "setuptools"} <= pins.keys()


def test_release_builds_leave_cflags_to_setup_py():
    # CFLAGS in the environment replaces Python's own flags (its -O3 among them) on Linux
    # and macOS: setup.py gives the release flags instead, so no release build may set it.
    assert "CFLAGS" not in config()["tool"]["cibuildwheel"]["environment"]


def test_cython_modules_do_not_claim_free_threading():
    # README, Installation: orjson has no free-threaded build, and StreamParser keeps
    # unsynchronised per-instance state, so neither module may declare itself compatible.
    sources = sorted((ROOT / "src" / "rpcline").rglob("*.pyx"))
    if not sources:
        pytest.skip("the Cython sources are not beside the tests")
    for source in sources:
        directives = [line for line in source.read_text().splitlines()
                      if line.startswith("# cython:")]
        assert not any("freethreading_compatible" in line for line in directives), source.name
    assert "freethreading_compatible" not in (ROOT / "setup.py").read_text()
