"""The blocking and asyncio readers: no 64 KiB trap, nothing lost at EOF."""

from __future__ import annotations

import asyncio
import io
import os
import threading

import pytest

import rpcline
import rpcline.aio

REQUEST = b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
BIG = b'{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"%s"}]}}'


def kinds(results) -> list[str]:
    return [type(r).__name__ for r in results]


def test_read_messages_over_a_file_object():
    data = REQUEST + b"\n\nINFO x\n" + REQUEST
    results = list(rpcline.read_messages(io.BytesIO(data), chunk_bytes=7))
    assert results == rpcline.parse_lines(data)
    assert kinds(results) == ["Request", "Refused", "Request"]


def test_read_messages_yields_a_line_as_soon_as_it_arrives():
    read_end, write_end = os.pipe()
    with open(read_end, "rb", buffering=0) as reader, open(write_end, "wb", buffering=0) as writer:
        messages = rpcline.read_messages(reader)
        writer.write(REQUEST + b"\n")
        assert next(messages) == rpcline.parse(REQUEST)  # does not wait for 64 KiB or EOF
        writer.close()
        assert list(messages) == []


def test_read_messages_passes_the_limit_on():
    data = b"x" * 100 + b"\n" + REQUEST + b"\n"
    results = list(rpcline.read_messages(io.BytesIO(data), max_line_bytes=50))
    assert kinds(results) == ["Refused", "Request"]
    assert results[0].error.reason == "line exceeds 50 bytes"


async def _read_all(data_chunks, close_early=False, **options):
    reader = asyncio.StreamReader()
    for chunk in data_chunks:
        reader.feed_data(chunk)
    reader.feed_eof()
    return [message async for message in rpcline.aio.messages(reader, **options)]


def test_aio_reads_a_10_mb_line():
    big = BIG % (b"a" * (10 * 1024 * 1024))
    results = asyncio.run(_read_all([big + b"\n", REQUEST + b"\n"]))
    assert kinds(results) == ["ClientResponse", "Request"]
    assert len(results[0].body["result"]["content"][0]["text"]) == 10 * 1024 * 1024


def test_aio_eof_without_trailing_newline():
    results = asyncio.run(_read_all([REQUEST + b"\n" + REQUEST]))
    assert results == [rpcline.parse(REQUEST)] * 2


def test_aio_peer_closing_mid_line_yields_the_fragment_as_a_refusal():
    results = asyncio.run(_read_all([REQUEST + b"\n" + REQUEST[:20]]))
    assert kinds(results) == ["Request", "Refused"]
    assert results[1].error.code == -32700


def test_aio_over_a_real_socket_pair():
    async def main():
        received = []

        async def serve(reader, writer):
            received.extend([m async for m in rpcline.aio.messages(reader, max_line_bytes=1000)])
            writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(REQUEST + b"\n" + b"y" * 5000 + b"\n" + REQUEST)
        await writer.drain()
        writer.close()
        await writer.wait_closed()
        for _ in range(100):
            if len(received) == 3:
                break
            await asyncio.sleep(0.01)
        server.close()
        await server.wait_closed()
        return received

    assert kinds(asyncio.run(main())) == ["Request", "Refused", "Request"]


def test_readers_share_one_parser_per_stream_across_threads():
    # Separate parsers in separate threads give the same results as one thread.
    data = (REQUEST + b"\nINFO x\n") * 2000
    want = rpcline.parse_lines(data)
    outcomes = []

    def work():
        outcomes.append(list(rpcline.read_messages(io.BytesIO(data), chunk_bytes=4096)))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(outcome == want for outcome in outcomes)
    assert len(outcomes) == 4


@pytest.mark.parametrize("bad", [0, -5])
def test_readers_reject_a_bad_limit(bad):
    with pytest.raises(ValueError):
        next(rpcline.read_messages(io.BytesIO(REQUEST), max_line_bytes=bad))
