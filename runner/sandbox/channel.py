"""The runner's end of a worker's pipe, on the asyncio loop.

The worker writes frames with ``Connection.send_bytes``; here they are read
with non-blocking ``os.read`` from a permanently registered ``add_reader``
callback and split by their 4-byte length header. ``Connection.recv_bytes``
is not used on this side because it blocks until a whole frame is in: a
worker killed or stopped half-way through a frame would freeze the event
loop. A header above the frame limit ends the conversation (the worker is
then replaced) instead of being read. Nothing is ever unpickled.
"""

from __future__ import annotations

import asyncio
import os
import struct
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from runner.sandbox import protocol

_HEADER = struct.Struct("!i")
_READ_CHUNK = 256 * 1024


class WorkerGone(Exception):
    """The worker's end of the pipe is closed: it exited, crashed or was killed."""


class FrameChannel:
    """JSON messages to and from one worker, without ever blocking the loop."""

    def __init__(self, conn: Connection, *, max_frame: int, on_lost: Callable[[], None]) -> None:
        self._conn = conn  # owns the descriptor
        self._fd = conn.fileno()
        self._max_frame = max_frame
        self._on_lost = on_lost
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox = bytearray()
        self._frames: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._outbox = bytearray()
        self._lost: Exception | None = None

    @property
    def connection(self) -> Connection:
        return self._conn

    @property
    def lost(self) -> bool:
        return self._lost is not None

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        """Start reading on ``loop``; from now on the descriptor is non-blocking."""
        if self._loop is not None:
            if self._loop is not loop:
                raise RuntimeError("a sandbox worker channel is bound to another event loop")
            return
        if self._lost is not None:
            return
        os.set_blocking(self._fd, False)
        self._loop = loop
        loop.add_reader(self._fd, self._on_readable)

    # --- reading ------------------------------------------------------------------------------

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, _READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lose(WorkerGone(f"reading from the worker failed: {exc.strerror}"))
            return
        if not data:
            self._lose(WorkerGone("the worker closed its pipe"))
            return
        self._inbox += data
        self._split_frames()

    def _split_frames(self) -> None:
        inbox = self._inbox
        while len(inbox) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(inbox)
            if not 0 <= size <= self._max_frame:
                self._lose(protocol.ProtocolError(f"the worker sent a frame of {size} bytes (limit {self._max_frame})"))
                return
            end = _HEADER.size + size
            if len(inbox) < end:
                return
            self._frames.append(bytes(inbox[_HEADER.size : end]))
            del inbox[:end]
            self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _lose(self, reason: Exception) -> None:
        if self._lost is not None:
            return
        self._lost = reason
        self._detach()
        self._wake()
        self._on_lost()

    async def receive(self) -> dict[str, Any]:
        """The next message; raises :class:`WorkerGone` or :class:`protocol.ProtocolError`."""
        while not self._frames:
            if self._lost is not None:
                raise self._lost
            if self._loop is None:
                self.attach(asyncio.get_running_loop())
            assert self._loop is not None
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return protocol.decode(self._frames.popleft())

    # --- writing ------------------------------------------------------------------------------

    def send(self, data: bytes) -> None:
        """Queue one frame; what the pipe does not take now is written when it is writable."""
        if self._lost is not None:
            raise self._lost
        if self._loop is None:
            self.attach(asyncio.get_running_loop())
        frame = _HEADER.pack(len(data)) + data
        if self._outbox:
            self._outbox += frame
            return
        try:
            written = os.write(self._fd, frame)
        except (BlockingIOError, InterruptedError):
            written = 0
        except OSError as exc:
            gone = WorkerGone(f"writing to the worker failed: {exc.strerror}")
            self._lose(gone)
            raise gone from None
        if written < len(frame):
            self._outbox += frame[written:]
            assert self._loop is not None
            self._loop.add_writer(self._fd, self._on_writable)

    def _on_writable(self) -> None:
        try:
            written = os.write(self._fd, self._outbox)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            self._lose(WorkerGone(f"writing to the worker failed: {exc.strerror}"))
            return
        del self._outbox[:written]
        if not self._outbox and self._loop is not None:
            self._loop.remove_writer(self._fd)

    # --- closing ------------------------------------------------------------------------------

    def _detach(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.remove_reader(self._fd)
            self._loop.remove_writer(self._fd)
        self._outbox.clear()

    def close(self) -> None:
        """Stop reading and close the runner's end; the worker sees end-of-file and exits."""
        if self._lost is None:
            self._lost = WorkerGone("the channel was closed")
            self._detach()
            self._wake()
        self._conn.close()
