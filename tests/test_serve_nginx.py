"""Scale-out: two ``rpcline serve`` instances behind nginx, configured as docs/scale-out.md says.

Stateless 2026-07-28 requests go round robin; 2025-era sessions by a consistent hash of
``Mcp-Session-Id``, the instances sharing a session key. The SDK's client runs sessions of
both eras through nginx; nginx's own log says which instance served each request. Runs
where nginx is installed (``.ci/run`` installs Debian's).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.path.exists(p)), None)
DOC = Path(__file__).parents[1] / "docs" / "scale-out.md"
pytestmark = [
    pytest.mark.skipif(NGINX is None, reason="nginx is not installed (apt-get install "
                       "nginx-light; .ci/run does)"),
    pytest.mark.skipif(not DOC.exists(), reason="needs a clone's docs"),
    pytest.mark.real_parts,
]
mcp = pytest.importorskip("mcp", reason="the official MCP SDK (the interop extra) is not "
                          "installed")
pytest.importorskip("uvicorn", reason="uvicorn (the serve extra) is not installed")
pytestmark.append(pytest.mark.anyio)  # the anyio plugin comes with the SDK

SERVER = [sys.executable, str(Path(__file__).parent / "sdk_server.py")]


def free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    for s in sockets:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in sockets]
    for s in sockets:
        s.close()
    return ports


def wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, f"exited with {process.returncode}"
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on {port}")


def nginx_config(tmp: Path, listen: int, a: int, b: int) -> Path:
    """The documented block, its ports replaced, in an ``http`` block of a config of its own."""
    block = re.search(r"```nginx\n(.*?)```", DOC.read_text(), re.S)
    assert block is not None, "docs/scale-out.md lost its nginx block"
    http = (block.group(1).replace("127.0.0.1:8001", f"127.0.0.1:{a}")
            .replace("127.0.0.1:8002", f"127.0.0.1:{b}")
            .replace("127.0.0.1:8000", f"127.0.0.1:{listen}"))
    temp = "\n".join(f"    {kind}_temp_path {tmp}/{kind};"
                     for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    config = tmp / "nginx.conf"
    config.write_text(f"""
worker_processes 1;
error_log {tmp}/error.log;
pid {tmp}/nginx.pid;
events {{ worker_connections 1024; }}
http {{
{temp}
    log_format routed '$upstream_addr $http_mcp_session_id $http_mcp_protocol_version';
    access_log {tmp}/access.log routed;
{http}
}}
""")
    return config


@pytest.fixture
def balanced(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    listen, a, b = free_ports(3)
    env = {**os.environ, "RPCLINE_TEST_SESSION_KEY": "k" * 64}
    instances = [subprocess.Popen(
        [sys.executable, "-m", "rpcline", "serve", "--port", str(port),
         "--session-key-env", "RPCLINE_TEST_SESSION_KEY", "--", *SERVER], env=env)
        for port in (a, b)]
    nginx = None
    try:
        for port, process in zip((a, b), instances, strict=True):
            wait_for_port(port, process)
        assert NGINX is not None
        nginx = subprocess.Popen([NGINX, "-p", str(tmp_path), "-c",
                                  str(nginx_config(tmp_path, listen, a, b)), "-g", "daemon off;"])
        wait_for_port(listen, nginx)
        yield f"http://127.0.0.1:{listen}/mcp", tmp_path / "access.log"
    finally:
        for process in [*instances, *([nginx] if nginx else [])]:
            process.terminate()
        for process in [*instances, *([nginx] if nginx else [])]:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def test_two_instances_behind_nginx_serve_both_eras(balanced: tuple[str, Path]) -> None:
    url, access_log = balanced

    async def session(mode: str, n: int) -> str:
        async with mcp.Client(url, mode=mode) as client:
            texts = []
            for call in range(3):
                result = await client.call_tool("echo", {"text": f"{mode} {n}.{call}"})
                texts.append(result.content[0].text)  # type: ignore[union-attr]
            return " ".join(texts)

    modes = ["legacy", "2026-07-28"]
    got = await asyncio.gather(*(session(mode, n) for mode in modes for n in range(12)))
    assert got == [" ".join(f"{mode} {n}.{c}" for c in range(3))
                   for mode in modes for n in range(12)]

    time.sleep(0.2)  # nginx writes its log line as each response ends
    served: dict[str, set[str]] = defaultdict(set)
    stateless: set[str] = set()
    for line in access_log.read_text().splitlines():
        upstream, session_id, version = line.split(" ")
        if session_id != "-":
            served[session_id].add(upstream)
        elif version == "2026-07-28":
            stateless.add(upstream)
    assert len(stateless) == 2  # round robin: both instances
    assert len(served) == 12 and all(len(up) == 1 for up in served.values())  # affinity
    assert len(set().union(*served.values())) == 2  # sessions hashed over both
