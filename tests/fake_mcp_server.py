"""A tiny stdio MCP server for the proxy test: answers requests, echoes a bad line."""

import sys

import orjson

for line in sys.stdin.buffer:
    message = orjson.loads(line)
    if "id" in message and "method" in message:
        result = {"method": message["method"], "params": message.get("params", {})}
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        sys.stdout.buffer.write(orjson.dumps(reply) + b"\n")
        if message["method"] == "garble":
            sys.stdout.buffer.write(b"server log line, not JSON\n")
        sys.stdout.buffer.flush()
