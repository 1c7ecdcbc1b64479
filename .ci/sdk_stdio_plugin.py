"""pytest plugin: the MCP SDK's own stdio tests, run against rpcline's transports.

    python -m pytest -p sdk_stdio_plugin mcp-X.Y.Z/tests/client/test_stdio.py
    python -m pytest -p sdk_stdio_plugin mcp-X.Y.Z/tests/server/test_stdio.py

(with this folder on PYTHONPATH; .ci/run does it). It puts ``rpcline.sdk.stdio_client``
and ``rpcline.sdk.stdio_server`` where the SDK's are (``mcp.client.stdio``,
``mcp.server.stdio`` and the name ``MCPServer.run_stdio_async`` calls in
``mcp.server.mcpserver.server``) before the tests import them. The tests' patches of the
SDK's helpers (spawn, tree kill, timeouts; the descriptor claim) then reach rpcline's
transports, which look them up on the SDK's modules at each use. ``anyio_backend`` and
BlockBuster (blocking calls in the event loop, rpcline's included) stand in for the SDK's
root conftest, which needs logfire.
"""

from __future__ import annotations

from collections.abc import Iterator

import mcp.client.stdio
import mcp.server.mcpserver.server
import mcp.server.stdio
import pytest

# Each takes the SDK's own transport (its fallback) before the swap below.
import rpcline._gateway.sdk_client  # noqa: F401
import rpcline._gateway.sdk_server  # noqa: F401
import rpcline.sdk

OURS = {"stdio_client": rpcline.sdk.stdio_client, "stdio_server": rpcline.sdk.stdio_server}
mcp.client.stdio.stdio_client = rpcline.sdk.stdio_client
mcp.server.stdio.stdio_server = rpcline.sdk.stdio_server  # type: ignore[assignment]
mcp.server.mcpserver.server.stdio_server = rpcline.sdk.stdio_server  # type: ignore[assignment]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Fail the run, not pass it vacuously, if a test module kept an SDK transport."""
    for item in items:
        module = getattr(item, "module", None)
        for name, ours in OURS.items():
            if getattr(module, name, ours) is not ours:
                raise pytest.UsageError(f"{item.nodeid} runs the SDK's {name}, not rpcline's")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def blockbuster() -> Iterator[None]:
    try:
        from blockbuster import BlockBuster
    except ImportError:  # optional: .ci/run installs it
        yield
        return
    guard = BlockBuster(["mcp", "mcp_types", "rpcline"])
    guard.activate()
    try:
        yield
    finally:
        guard.deactivate()
