"""Check what rpcline's distributions carry, and print it.

    python .ci/check_dist.py dist/*.tar.gz wheelhouse/*.whl

A binary wheel holds the package's Python modules (the twins included), ``py.typed``, one
compiled module per ``.pyx`` (on Linux without debug info) and its metadata, and nothing
else: no C, no Cython sources, no tests. A pure-Python wheel (``RPCLINE_NO_EXTENSIONS=1``,
tag ``py3-none-any``) holds the same without compiled modules. An sdist holds what a build
without git needs: the Cython sources, ``.pxd`` and C headers, the build files, the pinned build
constraints, the tests and the example they run, and no generated C or build output.

The expected files come from the source tree this script sits in (git's list of tracked
files when it is a checkout), so a module added there is expected everywhere. Exits 1 and
says why when a distribution is off.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "rpcline"
# auditwheel / delvewheel put vendored shared libraries here; rpcline links none today,
# but a repair tool adding one is not a build leftover.
VENDORED = f"{PACKAGE}.libs/"
LEFTOVER_SUFFIXES = (".c", ".h", ".pyx", ".pxd", ".pyc", ".pyo", ".html", ".o")


def tracked(folder: str, suffix: str) -> list[PurePosixPath]:
    """Tracked files below ``folder`` (at any depth) whose names end in ``suffix`` (the file
    system outside a checkout)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "--", folder],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        listed = [path.relative_to(ROOT).as_posix() for path in (ROOT / folder).rglob("*")]
    return sorted(PurePosixPath(name) for name in listed if name.endswith(suffix))


def source_files() -> dict[str, list[PurePosixPath]]:
    src = f"src/{PACKAGE}"  # the package and its wings (rpcline/_core, ...)
    return {
        "python": tracked(src, ".py"),
        "cython": tracked(src, ".pyx"),
        "pxd": tracked(src, ".pxd"),
        "headers": tracked(src, ".h"),
        "tests": tracked("tests", ".py"),
        "examples": [*tracked("examples", ".py"), *tracked("examples", ".json")],
        "traffic": tracked("benchmarks/data", ".jsonl"),
    }


def in_wheel(source: PurePosixPath) -> PurePosixPath:
    """Where a file of ``src/`` lands in a wheel: ``rpcline/_core/scan_py.py``."""
    return source.relative_to("src")


def check_wheel(path: Path, sources: dict[str, list[PurePosixPath]]) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        names = [name for name in archive.namelist() if not name.endswith("/")]
        debug = {name for name in names if _has_debug_info(archive.read(name))}
    pure = path.name.endswith("-py3-none-any.whl")
    problems = []
    expected = {str(in_wheel(module)) for module in sources["python"]} | {
        f"{PACKAGE}/py.typed"
    }
    # A compiled module sits where its .pyx is, named "<stem>.<ABI tag>.so".
    compiled = {str(in_wheel(module).with_suffix("")): [] for module in sources["cython"]}
    for name in names:
        top = name.split("/", 1)[0]
        if top.endswith(".dist-info") or name.startswith(VENDORED):
            continue
        if name in expected:
            expected.discard(name)
            continue
        member = PurePosixPath(name)
        stem = str(member.with_name(member.name.split(".", 1)[0]))
        if name.endswith((".so", ".pyd")) and stem in compiled:
            compiled[stem].append(name)
            if name in debug:
                problems.append(f"{name}: carries debug info (setup.py's release flags carry -g0)")
            continue
        kind = "a build leftover" if name.endswith(LEFTOVER_SUFFIXES) else "unexpected"
        problems.append(f"{name}: {kind}")
    problems += [f"missing {name}" for name in sorted(expected)]
    for stem, found in sorted(compiled.items()):
        if pure and found:
            problems.append(f"a pure-Python wheel carries compiled {found}")
        elif not pure and len(found) != 1:
            problems.append(f"expected one compiled module {stem}, found {found or 'none'}")
    if not any(name.endswith(".dist-info/METADATA") for name in names):
        problems.append("no .dist-info/METADATA")
    return problems


def _has_debug_info(module: bytes) -> bool:
    # An ELF module names its sections in a string table, DWARF's among them.
    return module.startswith(b"\x7fELF") and b".debug_info" in module


def check_sdist(path: Path, sources: dict[str, list[PurePosixPath]]) -> list[str]:
    with tarfile.open(path) as archive:
        members = [member.name for member in archive.getmembers() if member.isfile()]
    roots = {name.split("/", 1)[0] for name in members}
    if len(roots) != 1:
        return [f"expected one top-level folder, found {sorted(roots)}"]
    names = {name.split("/", 1)[1] for name in members}
    required = {
        "PKG-INFO", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md",
        "build-constraints.txt", f"src/{PACKAGE}/py.typed",
    }
    for group in ("python", "cython", "pxd", "headers", "tests", "examples", "traffic"):
        required |= {str(file) for file in sources[group]}
    problems = [f"missing {name}" for name in sorted(required - names)]
    for name in sorted(names):
        parts = PurePosixPath(name).parts
        if name.endswith((".c", ".so", ".pyd", ".pyc", ".o", ".html")) or "__pycache__" in parts:
            problems.append(f"{name}: a build leftover")
        elif parts[0] in ("build", "dist", "wheelhouse", ".hypothesis", ".benchmarks"):
            problems.append(f"{name}: build or cache output")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dists", nargs="+", type=Path, help="wheels (.whl) and sdists (.tar.gz)")
    args = parser.parse_args(argv)
    sources = source_files()
    if not sources["python"] or not sources["cython"]:
        print(f"no sources found under {ROOT}/src/{PACKAGE}", file=sys.stderr)
        return 2
    failed = False
    for path in args.dists:
        if path.name.endswith(".whl"):
            problems = check_wheel(path, sources)
            with zipfile.ZipFile(path) as archive:
                listing = [(info.file_size, info.filename) for info in archive.infolist()
                           if not info.filename.endswith("/")]
        elif path.name.endswith(".tar.gz"):
            problems = check_sdist(path, sources)
            with tarfile.open(path) as archive:
                listing = [(member.size, member.name) for member in archive.getmembers()
                           if member.isfile()]
        else:
            print(f"{path}: neither a wheel nor an sdist", file=sys.stderr)
            return 2
        print(f"{path.name}:")
        for size, name in listing:
            print(f"  {size:>9}  {name}")
        if problems:
            failed = True
            for problem in problems:
                print(f"  PROBLEM: {problem}")
        else:
            print("  ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
