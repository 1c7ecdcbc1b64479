"""The blocking and asyncio readers: no 64 KiB trap, nothing lost at EOF."""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time

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


@pytest.mark.parametrize("buffering", [0, -1])
def test_read_messages_waits_on_a_non_blocking_pipe(buffering):
    # Nothing waiting is not the end: the lines written later are read too.
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)

    def write_slowly() -> None:
        for _ in range(3):
            time.sleep(0.05)
            os.write(write_end, REQUEST + b"\n")
        os.close(write_end)

    writer = threading.Thread(target=write_slowly)
    writer.start()
    with open(read_end, "rb", buffering=buffering) as reader:
        results = list(rpcline.read_messages(reader))
    writer.join()
    assert results == [rpcline.parse(REQUEST)] * 3


def test_read_messages_passes_the_limit_on():
    data = b"x" * 100 + b"\n" + REQUEST + b"\n"
    results = list(rpcline.read_messages(io.BytesIO(data), max_line_bytes=50))
    assert kinds(results) == ["Refused", "Request"]
    assert results[0].error.reason == "line exceeds 50 bytes"


ROUTED = REQUEST + b"\n" + b"x" * 100 + b"\n" + b'{"jsonrpc":"2.0","id":1,"result":{}}\n'


def test_read_messages_takes_classify():
    routes = list(rpcline.read_messages(io.BytesIO(ROUTED), 50, classify=rpcline.route))
    assert [r.kind for r in routes] == ["request", "refused", "response"]
    assert routes[1].error.reason == "line exceeds 50 bytes"  # over-long: a refused Route
    assert list(rpcline.read_messages(io.BytesIO(ROUTED), 50, classify=len))[::2] == [
        len(REQUEST), len(b'{"jsonrpc":"2.0","id":1,"result":{}}')]
    defaults = rpcline.read_messages(io.BytesIO(ROUTED), 50, classify=None)
    assert list(defaults) == list(rpcline.read_messages(io.BytesIO(ROUTED), 50))


def test_aio_messages_takes_classify():
    async def main() -> list:
        reader = asyncio.StreamReader()
        reader.feed_data(ROUTED)
        reader.feed_eof()
        return [r async for r in rpcline.aio.messages(reader, 50, classify=rpcline.route)]

    assert [r.kind for r in asyncio.run(main())] == ["request", "refused", "response"]


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


# --- arguments that used to fail obscurely or yield nothing ------------------------------


def aio_messages(reader, **options):
    return rpcline.aio.messages(reader, **options)


READERS = {"read_messages": rpcline.read_messages, "aio.messages": aio_messages}


class EmptyReader:
    """A StreamReader at EOF (a real one needs a running loop in Python 3.11)."""

    async def read(self, size: int) -> bytes:
        return b""


@pytest.mark.parametrize("size", [0, -1, -(2**70)])
@pytest.mark.parametrize("name", list(READERS))
def test_readers_refuse_a_chunk_size_below_1_when_called(name, size):
    # read(0) returns b"" at once, which reads as EOF: the stream would yield nothing.
    source = io.BytesIO(REQUEST) if name == "read_messages" else EmptyReader()
    with pytest.raises(ValueError) as refused:
        READERS[name](source, chunk_bytes=size)  # at the call, not at the first read
    assert str(refused.value) == f"{name}() chunk_bytes must be at least 1, not {size}"


@pytest.mark.parametrize("size", [1.5, "64", None, True])
@pytest.mark.parametrize("name", list(READERS))
def test_readers_refuse_a_chunk_size_that_is_no_int(name, size):
    source = io.BytesIO(REQUEST) if name == "read_messages" else EmptyReader()
    with pytest.raises(TypeError, match=f"^{name}\\(\\) chunk_bytes must be an int"):
        READERS[name](source, chunk_bytes=size)


def test_a_chunk_size_of_1_reads_byte_by_byte():
    data = REQUEST + b"\n" + REQUEST
    assert list(rpcline.read_messages(io.BytesIO(data), chunk_bytes=1)) == rpcline.parse_lines(data)
    assert asyncio.run(_read_all([data], chunk_bytes=1)) == rpcline.parse_lines(data)


def assert_says_binary_mode(message: str, name: str) -> None:
    assert message.startswith(f"{name}() reads bytes"), message
    assert "'rb'" in message and "sys.stdin.buffer" in message, message
    assert "feed()" not in message, message


@pytest.mark.parametrize("name", list(READERS))
def test_readers_refuse_a_text_mode_file(name, tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(REQUEST + b"\n")
    with open(path) as text, pytest.raises(TypeError) as refused:
        READERS[name](text)
    assert_says_binary_mode(str(refused.value), name)
    assert "TextIOWrapper" in str(refused.value)
    with pytest.raises(TypeError) as refused:
        READERS[name](io.StringIO("{}\n"))
    assert_says_binary_mode(str(refused.value), name)


def test_aio_says_it_needs_a_stream_reader():
    with pytest.raises(TypeError, match="asyncio.StreamReader"):
        rpcline.aio.messages(io.StringIO("{}\n"))


def test_read_messages_refuses_a_reader_of_text_that_is_no_text_io():
    class Texts:  # duck-typed: read() returns str
        def read(self, size):
            return "{}\n"

    with pytest.raises(TypeError) as refused:
        list(rpcline.read_messages(Texts()))
    assert_says_binary_mode(str(refused.value), "read_messages")


def test_aio_refuses_a_reader_of_text():
    class Texts:
        async def read(self, size):
            return "{}\n"

    async def main():
        return [m async for m in rpcline.aio.messages(Texts())]

    with pytest.raises(TypeError) as refused:
        asyncio.run(main())
    assert_says_binary_mode(str(refused.value), "aio.messages")


def test_read_messages_of_sys_stdin_says_use_its_buffer():
    # The real sys.stdin (pytest replaces it in-process), in a fresh interpreter.
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", "import rpcline, sys; rpcline.read_messages(sys.stdin)"],
        input=REQUEST, capture_output=True, timeout=60, check=False,
    )
    assert done.returncode == 1
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last.startswith("TypeError: read_messages() reads bytes, but TextIOWrapper"), last
    assert "sys.stdin.buffer" in last


@pytest.mark.parametrize("data", [REQUEST, bytearray(REQUEST), memoryview(REQUEST),
                                  REQUEST.decode()], ids=lambda d: type(d).__name__)
@pytest.mark.parametrize("name", list(READERS))
def test_readers_refuse_a_buffer_when_called_and_point_to_parse_lines(name, data):
    # read_messages(b"...") once returned a generator that failed with AttributeError at
    # its first read (issue 31 item 9).
    with pytest.raises(TypeError) as refused:
        READERS[name](data)  # at the call
    message = str(refused.value)
    assert message.startswith(f"{name}() reads a file, not {type(data).__name__}"), message
    assert "parse_lines()" in message, message


@pytest.mark.parametrize("name", list(READERS))
def test_readers_refuse_what_has_no_read_method_when_called(name):
    with pytest.raises(TypeError, match=f"^{name}\\(\\) reads a binary file object .* not int$"):
        READERS[name](5)
