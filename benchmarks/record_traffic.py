"""Record real MCP traffic: the official SDK's client and server, through ``rpcline proxy``.

    python benchmarks/record_traffic.py [--out benchmarks/data/sdk-session] [--calls 1000]

Runs one session of the SDK's stdio client against ``tests/sdk_server.py`` (an SDK
``MCPServer``) through ``rpcline proxy --record PREFIX``, which writes every byte each side
sent to ``PREFIX.client.jsonl`` and ``PREFIX.server.jsonl``. The session is a seeded mix
of what real ones carry: initialize, listings, many tool calls with varied arguments and
results (text with escapes and non-ASCII, numbers, errors), progress, resources, prompts,
pings, and the server's requests to the client (roots, sampling). The project's
real-traffic tests and benchmarks read these files (``RPCLINE_TRAFFIC`` points them at
any other capture). Needs the ``interop`` extra.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import anyio
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "tests" / "sdk_server.py"
# Tool traffic is mostly plain ASCII text; now and then an escape or a non-ASCII word, at
# about the rates of recorded MCP sessions (a few in every thousand bytes).
WORDS = ("the", "file", "tool", "result", "server", "client", "request", "list", "read",
         "write", "search", "query", "data", "value", "name", "path", "error", "status",
         "project", "config", "update", "user", "message", "content", "resource", "line")
RARE = ("résumé", "東京", "🙂", "line\nbreak", 'quote "q"', "tab\there", "path\\to", "€")


async def sampling(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", model="recorder",
                                     content=types.TextContent(type="text", text="sampled"))


async def list_roots(context) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///srv/project")])


def text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(RARE if rng.random() < 0.005 else WORDS) for _ in range(words))


async def session(prefix: Path, calls: int, seed: int) -> None:
    rng = random.Random(seed)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "rpcline", "proxy", "--record", str(prefix), "--", sys.executable,
              str(SERVER)],
        env={"PYTHONPATH": str(ROOT / "src")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, sampling_callback=sampling,
                                 list_roots_callback=list_roots) as s:
            await s.initialize()
            await s.list_tools()
            await s.list_resources()
            await s.list_prompts()
            for i in range(calls):
                choice = rng.random()
                if choice < 0.45:
                    await s.call_tool("echo", {"text": text(rng, rng.randint(1, 40))})
                elif choice < 0.6:
                    await s.call_tool("add", {"a": rng.randint(-10**6, 10**6),
                                              "b": rng.choice([1, 2**40, 2**70])})
                elif choice < 0.7:
                    values = [rng.choice([rng.random() * 1e6, rng.randint(0, 99), -0.5])
                              for _ in range(rng.randint(1, 30))]
                    await s.call_tool("numbers", {"values": values})
                elif choice < 0.78:
                    await s.call_tool("big", {"size": rng.choice([200, 1000, 4000])})
                elif choice < 0.82:
                    await s.call_tool("progress", {"steps": rng.randint(1, 4)},
                                      progress_callback=_ignore)
                elif choice < 0.85:
                    await s.call_tool("fail", {"message": text(rng, 3)})
                elif choice < 0.87:
                    await s.call_tool("roots", {})
                elif choice < 0.89:
                    await s.call_tool("sample", {"prompt": text(rng, 5)})
                elif choice < 0.93:
                    await s.read_resource(rng.choice(["test://greeting",
                                                      f"test://items/{rng.randint(1, 999)}"]))
                elif choice < 0.96:
                    await s.get_prompt("review", {"code": text(rng, 8)})
                else:
                    await s.send_ping()


async def _ignore(*args: object) -> None:
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "data" / "sdk-session",
                        help="the prefix of the two files (default: %(default)s)")
    parser.add_argument("--calls", type=int, default=1000, help="default: %(default)s")
    parser.add_argument("--seed", type=int, default=2026, help="default: %(default)s")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    anyio.run(session, args.out, args.calls, args.seed)
    for side in ("client", "server"):
        path = args.out.with_name(f"{args.out.name}.{side}.jsonl")
        data = path.read_bytes()
        lines = data.count(b"\n")
        print(f"{path}: {lines} lines, {len(data):,} bytes")


if __name__ == "__main__":
    main()
