"""A user's program, checked by ``mypy --strict`` in tests/test_typing.py (never run).

What it holds: the parsers, readers and events are typed by what ``classify`` returns,
so a route's ``.kind`` or ``.id`` needs no cast (issue 26: before, every parser said
``list[Incoming]`` and mypy reported ``union-attr`` on routes).
"""

from __future__ import annotations

import asyncio
from typing import BinaryIO, assert_type

import rpcline
from rpcline import aio, sse


def routes(chunk: bytes) -> list[str]:
    parser = rpcline.StreamParser(classify=rpcline.route)
    assert_type(parser, rpcline.StreamParser[rpcline.Route])
    return [route.kind for route in parser.feed(chunk) + parser.close()]


def messages(chunk: bytes) -> list[rpcline.Incoming]:
    parser = rpcline.StreamParser()
    assert_type(parser.feed(chunk), list[rpcline.Incoming])
    assert_type(rpcline.StreamParser(1024, classify=rpcline.parse).close(),
                list[rpcline.Incoming])
    return parser.feed(chunk)


def sizes(chunk: bytes) -> list[int | rpcline.Refused]:
    # Any other classify: its results, and the refusal of an over-long line.
    return rpcline.StreamParser(classify=len).feed(chunk)


def ids(file: BinaryIO) -> list[rpcline.RequestId | None]:
    assert_type(next(rpcline.read_messages(file)), rpcline.Incoming)
    return [route.id for route in rpcline.read_messages(file, classify=rpcline.route)]


async def methods(reader: asyncio.StreamReader) -> list[str | None]:
    async for message in aio.messages(reader):
        assert_type(message, rpcline.Incoming)
    return [route.method async for route in aio.messages(reader, classify=rpcline.route)]


def events(chunk: bytes) -> list[str]:
    parser = sse.EventStreamParser(classify=rpcline.route)
    kinds: list[str] = [event.message.kind for event in parser.feed(chunk)
                        if event.message is not None]
    for event in sse.EventStreamParser().feed(chunk):
        assert_type(event.message, rpcline.Incoming | None)
    return kinds


def encoded(text: str) -> bytes:
    return sse.encode(text)


def answers(response: rpcline.ClientResponse) -> tuple[object, object]:
    return response.result, response.error
