"""pytest plugin: the MCP SDK's own stdio server tests, run against rpcline's transport.

    python -m pytest -p sdk_stdio_server_plugin mcp-X.Y.Z/tests/server/test_stdio.py

(with this folder on PYTHONPATH; .ci/run does it). It puts ``rpcline.sdk.stdio_server``
where the SDK's is (``mcp.server.stdio`` and the name ``MCPServer.run_stdio_async`` calls
in ``mcp.server.mcpserver.server``) before the tests import it. The tests' patches of the
descriptor claim reach rpcline's transport, which looks ``_claim_fd`` and friends up on
``mcp.server.stdio`` at each start. ``anyio_backend`` and BlockBuster stand in for the
SDK's root conftest, which needs logfire.
"""

from __future__ import annotations

from collections.abc import Iterator

import mcp.server.mcpserver.server
import mcp.server.stdio
import pytest

import rpcline._gateway.sdk_server  # noqa: F401 - takes the SDK's own transport before the swap
import rpcline.sdk

mcp.server.stdio.stdio_server = rpcline.sdk.stdio_server  # type: ignore[assignment]
mcp.server.mcpserver.server.stdio_server = rpcline.sdk.stdio_server  # type: ignore[assignment]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Fail the run, not pass it vacuously, if a test module kept the SDK's transport."""
    for item in items:
        module = getattr(item, "module", None)
        used = getattr(module, "stdio_server", rpcline.sdk.stdio_server)
        if used is not rpcline.sdk.stdio_server:
            raise pytest.UsageError(f"{item.nodeid} runs the SDK's stdio_server, not rpcline's")


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
