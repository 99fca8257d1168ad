"""The worker process: confine itself, then run node tasks one at a time.

Started by :class:`runner.sandbox.pool.SandboxPool` through the forkserver,
which has this module preloaded. It must never import grpc, pymongo or
aiohttp: the worker holds no client and no credentials, only a pipe.
"""

from __future__ import annotations

import os
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from runner.sandbox import jsondata, protocol
from runner.sandbox.api import SmartboticError
from runner.sandbox.confine import confine, set_cpu_budget
from runner.sandbox.execution import CodeCache, memory_message, run_task
from runner.sandbox.types import JSON, SandboxLimits


def _leave() -> NoReturn:
    # os._exit: no atexit handlers, no multiprocessing clean-up of descriptors that are already closed.
    os._exit(0)


class PipeChannel:
    """The worker's side of ``smartbotic.*`` calls: a request frame, then a blocking wait for the answer."""

    def __init__(self, conn: Connection, limits: SandboxLimits) -> None:
        self._conn = conn
        self._max_reply = protocol.max_host_frame(limits)
        self._max_args = limits.max_output_bytes

    def call(self, method: str, args: list[JSON]) -> JSON:
        try:
            data = jsondata.encode(args, "arguments")
        except jsondata.NotJsonError as exc:
            raise TypeError(f"smartbotic.{method}: {exc}") from None
        if len(data) > self._max_args:
            size, limit = len(data), self._max_args
            raise SmartboticError(f"smartbotic.{method}: the arguments are {size} bytes of JSON, above {limit}")
        self.send(b'{"call":' + protocol.encode_value(method) + b',"args":' + data + b"}")
        reply = self.receive()
        if "ok" in reply:
            return reply["ok"]
        error = reply.get("error")
        if isinstance(error, str):
            raise SmartboticError(error)
        _leave()  # the runner broke the protocol: nothing sensible left to do

    def send(self, frame: bytes) -> None:
        try:
            self._conn.send_bytes(frame)
        except OSError:
            _leave()  # the runner is gone

    def receive(self) -> dict[str, Any]:
        try:
            return protocol.decode(self._conn.recv_bytes(self._max_reply))
        except (EOFError, OSError, protocol.ProtocolError):
            _leave()


def _serve(conn: Connection, limits: SandboxLimits) -> None:
    channel = PipeChannel(conn, limits)
    codes = CodeCache()
    budget = protocol.cpu_budget(limits)
    out_of_memory = protocol.encode({"fail": memory_message(limits), "logs": [], "retire": True})
    while True:
        task = channel.receive().get("task")
        if not isinstance(task, dict):
            _leave()
        set_cpu_budget(budget)
        try:
            frame, retire = run_task(task, channel, limits, codes)
        except MemoryError:
            frame, retire = out_of_memory, True
        except BaseException as exc:  # a defect here, not in the script: report it and make way for a fresh worker
            frame = protocol.encode({"fail": f"sandbox worker error: {exc!r}", "logs": [], "retire": True})
            retire = True
        del task
        channel.send(frame)
        if retire:
            _leave()


def worker_main(conn: Connection, limits: SandboxLimits) -> None:
    """Process entry point."""
    try:
        conn, notes = confine(conn, limits)
        conn.send_bytes(protocol.encode({"ready": {"uid": os.getuid(), "notes": notes}}))
    except BaseException as exc:
        try:
            conn.send_bytes(protocol.encode({"fail": f"sandbox worker could not start: {exc!r}"}))
        finally:
            _leave()
    _serve(conn, limits)
    _leave()
