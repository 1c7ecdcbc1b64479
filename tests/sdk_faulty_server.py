"""tests/sdk_server.py's server, whose stdout breaks the answers that ask for it.

    python tests/sdk_faulty_server.py

An answer holding ``cut:`` is cut short right after the marker (its LF kept), one holding
``utf8:`` gets two bytes that are not UTF-8 after it: ``echo("cut: ...")`` is a call
whose answer never arrives whole, as a server killed mid-write or a broken encoder sends
it. Everything else is written as the SDK writes it. For tests/test_sdk.py.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from sdk_server import server  # the same tools, resources and prompts


class FaultyStdout:
    """What ``stdio_server`` writes its lines through (``write`` and ``flush``)."""

    def __init__(self, out: Any) -> None:
        self.out = out

    async def write(self, text: str) -> None:
        data = text.encode()
        if (at := data.find(b"cut:")) >= 0:
            data = data[: at + 4] + b"\n"
        data = data.replace(b"utf8:", b"utf8:\xff\xfe")
        self.out.write(data)

    async def flush(self) -> None:
        self.out.flush()


async def main() -> None:
    lowlevel = server._lowlevel_server
    async with stdio_server(stdout=FaultyStdout(sys.stdout.buffer)) as (read, write):  # type: ignore[arg-type]
        await lowlevel.run(read, write, lowlevel.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
