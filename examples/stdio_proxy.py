"""A minimal stdio MCP proxy built only on rpcline and asyncio.

    python examples/stdio_proxy.py -- SERVER_COMMAND [ARGS...]

It starts the server as a child process and relays newline-delimited JSON-RPC both ways.
Lines from the client are classified: valid messages go to the server, re-encoded
compactly; a refused line is answered to the client with rpcline.error_response (the
proxy is the server the client talks to). Lines from the server are relayed to the
client; a refused server line is reported on stderr and never answered, so two peers
can never answer each other's errors forever.
"""

from __future__ import annotations

import asyncio
import sys

import orjson

import rpcline
import rpcline.aio


def encode(message: rpcline.Incoming) -> bytes:
    """The compact line to forward for a valid message."""
    match message:
        case rpcline.Request(id, method, params):
            body = {"jsonrpc": "2.0", "id": id, "method": method, "params": params}
        case rpcline.Notification(method, params):
            body = {"jsonrpc": "2.0", "method": method, "params": params}
        case rpcline.ClientResponse(_, body):
            pass
        case _:
            raise TypeError(f"not a forwardable message: {message!r}")
    return orjson.dumps(body) + b"\n"


async def client_to_server(client: asyncio.StreamReader, server, out) -> None:
    async for message in rpcline.aio.messages(client):
        if isinstance(message, rpcline.Refused):
            out.write(rpcline.error_response(message) + b"\n")
            out.flush()
        else:
            server.write(encode(message))
            await server.drain()
    server.close()


async def server_to_client(server: asyncio.StreamReader, out) -> None:
    async for message in rpcline.aio.messages(server):
        if isinstance(message, rpcline.Refused):
            print(f"proxy: server sent a bad line: {message.error.reason}", file=sys.stderr)
        else:
            out.write(encode(message))
            out.flush()


async def main(command: list[str]) -> int:
    loop = asyncio.get_running_loop()
    client = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(client), sys.stdin)
    child = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
    )
    out = sys.stdout.buffer
    await asyncio.gather(
        client_to_server(client, child.stdin, out), server_to_client(child.stdout, out)
    )
    return await child.wait()


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        sys.exit("usage: stdio_proxy.py -- SERVER_COMMAND [ARGS...]")
    sys.exit(asyncio.run(main(args)))
