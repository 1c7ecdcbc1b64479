"""pytest plugin: the MCP SDK's own stdio client tests, run against rpcline's transport.

    python -m pytest -p sdk_stdio_plugin mcp-X.Y.Z/tests/client/test_stdio.py

(with this folder on PYTHONPATH; .ci/run does it). It puts ``rpcline.sdk.stdio_client``
where the SDK's is, before the tests import it; the tests' patches of the SDK's helpers
(spawn, tree kill, timeouts) then reach rpcline's transport, which looks them up on
``mcp.client.stdio`` at each use. ``anyio_backend`` and BlockBuster (blocking calls in the
event loop, rpcline's included) stand in for the SDK's root conftest, which needs logfire.
"""

from __future__ import annotations

from collections.abc import Iterator

import mcp.client.stdio
import pytest

import rpcline._gateway.sdk_client  # noqa: F401 - takes the SDK's own transport before the swap
import rpcline.sdk

SDK_TRANSPORT = mcp.client.stdio.stdio_client
mcp.client.stdio.stdio_client = rpcline.sdk.stdio_client


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Fail the run, not pass it vacuously, if a test module kept the SDK's transport."""
    for item in items:
        module = getattr(item, "module", None)
        used = getattr(module, "stdio_client", rpcline.sdk.stdio_client)
        if used is not rpcline.sdk.stdio_client:
            raise pytest.UsageError(f"{item.nodeid} runs the SDK's stdio_client, not rpcline's")


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
