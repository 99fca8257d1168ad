"""The runner's end of the pipe, against a real socket pair: it never blocks the loop on a bad peer."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import struct
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection

import pytest

from runner.sandbox.channel import FrameChannel, WorkerGone
from runner.sandbox.protocol import ProtocolError, encode

Pipe = tuple[FrameChannel, Connection, list[str]]
"""The runner's channel, the worker's end of the pipe, and the channel's lost notifications."""


def write_raw(conn: Connection, data: bytes) -> None:
    """Bytes on the wire as they are, e.g. half a frame."""
    os.write(conn.fileno(), data)


@pytest.fixture
def pipe() -> Iterator[Pipe]:
    runner_end, worker_end = multiprocessing.Pipe(duplex=True)
    lost: list[str] = []
    channel = FrameChannel(runner_end, max_frame=1000, on_lost=lambda: lost.append("lost"))
    yield channel, worker_end, lost
    channel.close()
    worker_end.close()


async def test_frames_split_across_reads_are_reassembled(pipe: Pipe) -> None:
    channel, worker_end, _ = pipe
    data = encode({"done": "x" * 500})
    frame = struct.pack("!i", len(data)) + data
    receiving = asyncio.create_task(channel.receive())
    for i in range(0, len(frame), 7):
        write_raw(worker_end, frame[i : i + 7])
        await asyncio.sleep(0)
    assert await receiving == {"done": "x" * 500}


async def test_messages_written_with_send_bytes_arrive_in_order(pipe: Pipe) -> None:
    channel, worker_end, _ = pipe
    for n in range(3):
        worker_end.send_bytes(encode({"n": n}))
    assert [await channel.receive() for _ in range(3)] == [{"n": 0}, {"n": 1}, {"n": 2}]
    channel.send(encode({"ok": 1}))
    assert worker_end.recv_bytes(100) == b'{"ok":1}'


async def test_half_a_frame_then_silence_does_not_block_the_loop(pipe: Pipe) -> None:
    channel, worker_end, lost = pipe
    write_raw(worker_end, struct.pack("!i", 100) + b'{"done":')
    ticks = 0
    receiving = asyncio.create_task(channel.receive())
    started = time.monotonic()
    while time.monotonic() - started < 0.2:
        await asyncio.sleep(0.01)
        ticks += 1
    assert ticks >= 10 and not receiving.done()  # the loop kept running
    worker_end.close()  # the worker dies mid-frame
    with pytest.raises(WorkerGone):
        await receiving
    assert lost == ["lost"]


async def test_oversized_frame_header_is_a_protocol_error_not_a_read(pipe: Pipe) -> None:
    channel, worker_end, lost = pipe
    write_raw(worker_end, struct.pack("!i", 10**9))
    with pytest.raises(ProtocolError, match="a frame of 1000000000 bytes"):
        await channel.receive()
    assert lost == ["lost"]


async def test_a_frame_that_is_not_a_json_object_is_a_protocol_error(pipe: Pipe) -> None:
    channel, worker_end, _ = pipe
    worker_end.send_bytes(b"[1, 2]")
    with pytest.raises(ProtocolError, match="must be a JSON object"):
        await channel.receive()
    worker_end.send_bytes(b"\x80not json")
    with pytest.raises(ProtocolError, match="not JSON"):
        await channel.receive()


async def test_large_sends_are_flushed_when_the_peer_reads(pipe: Pipe) -> None:
    channel, worker_end, _ = pipe
    big = encode({"ok": "y" * 3_000_000})
    channel.send(big)  # more than the socket buffer: the rest waits for the writer callback
    received = await asyncio.to_thread(worker_end.recv_bytes, 4_000_000)
    assert received == big
