"""Third-party stdio MCP servers from PyPI, each in a venv of its own, pinned (issue 38).

tests/test_serve_pypi_servers.py serves them through ``rpcline serve --config``; .ci/run
installs them once beforehand (``python tests/pypi_servers.py DIR``) and names DIR in
``RPCLINE_TEST_PYPI_SERVERS_DIR``, so every pytest run of CI reuses them. The pins live
here only.

The 2026.10.10 releases are the last to pin the handshake-era SDK (``mcp<2``): a child
that speaks only the 2025 protocol, which the gateway must serve to clients of both eras.
mcp-server-time's newest release (on ``mcp>=2.3``) comes too, as a child of the 2026 SDK.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import subprocess
import sys
import venv
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# name in the config: (distribution, exact version, console script)
SERVERS: dict[str, tuple[str, str, str]] = {
    "time": ("mcp-server-time", "2026.10.10", "mcp-server-time"),
    "git": ("mcp-server-git", "2026.10.10", "mcp-server-git"),
    "fetch": ("mcp-server-fetch", "2026.10.10", "mcp-server-fetch"),
    "time-mcp2": ("mcp-server-time", "2026.10.19", "mcp-server-time"),
}
MARKER = "rpcline-installed.txt"  # holds "distribution==version" once the install succeeded


class Unavailable(Exception):
    """The server could not be installed; its message is the reason, one line."""


def install(home: Path, name: str) -> Path:
    """The console script of server ``name``, installed under ``home/name`` unless a venv
    there already holds the pinned version; raises Unavailable saying why it cannot be."""
    distribution, version, script = SERVERS[name]
    pin = f"{distribution}=={version}"
    root = home / name
    marker = root / MARKER
    command = root / "bin" / script
    if marker.is_file() and marker.read_text().strip() == pin and command.exists():
        return command
    marker.unlink(missing_ok=True)
    # This interpreter's pip installs into the venv when it can (pip --python): no pip of
    # the venv's own to install first, seconds saved on each.
    ours = (importlib.util.find_spec("pip") is not None
            and int(importlib.metadata.version("pip").split(".")[0]) >= 23)
    venv.create(root, with_pip=not ours, clear=True)
    python = str(root / "bin" / "python")
    pip = [sys.executable, "-m", "pip", "--python", python] if ours else [python, "-m", "pip"]
    done = subprocess.run([*pip, "install", "-q", "--disable-pip-version-check", pin],
                          check=False, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not command.exists():
        said = [line for line in (done.stderr + done.stdout).splitlines()
                if line.strip() and not line.startswith("WARNING: Location")]
        raise Unavailable(f"cannot install {pin}: " + (said[-1].strip() if said else
                                                        f"pip exited {done.returncode}"))
    marker.write_text(pin + "\n")
    return command


def install_all(home: Path) -> dict[str, Path | Unavailable]:
    """Every server, two installs at a time: its command, or why it is unavailable."""
    home.mkdir(parents=True, exist_ok=True)

    def one(name: str) -> Path | Unavailable:
        try:
            return install(home, name)
        except Unavailable as reason:
            return reason

    with ThreadPoolExecutor(2) as pool:
        return dict(zip(SERVERS, pool.map(one, SERVERS)))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python tests/pypi_servers.py DIR", file=sys.stderr)
        return 2
    for name, got in install_all(Path(argv[0])).items():
        print(f"{name}: {got}", file=sys.stderr if isinstance(got, Unavailable) else sys.stdout)
    return 0  # an unavailable server is the tests' to skip, saying why


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
