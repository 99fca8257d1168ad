"""The runner's side of the sandbox: a pool of worker processes that run node tasks.

``SandboxPool.run`` never raises for anything a node does: timeouts, CPU and
memory limits, crashes and protocol violations all come back as a
:class:`NodeOutcome` with an error, and the worker is replaced when it can no
longer be trusted. Only cancellation of the awaiting task propagates (the
worker it was using is killed and replaced).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from runner.sandbox import protocol
from runner.sandbox.channel import FrameChannel, WorkerGone
from runner.sandbox.logbook import LEVELS
from runner.sandbox.spawning import spawn_worker, start_forkserver
from runner.sandbox.types import JSON, HostApiError, HostCall, NodeOutcome, NodeTask, SandboxLimits

logger = logging.getLogger(__name__)

READY_TIMEOUT_SECONDS = 30.0
"""How long a new worker may take to report that it is ready."""

RESPAWN_BACKOFF_SECONDS = 1.0
_MAX_ERROR_CHARS = 4000


class PoolClosed(Exception):
    """The pool was closed while a run waited for a worker."""


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    channel: FrameChannel
    busy: bool = False
    retired: bool = False


def _read_ready_blocking(channel: FrameChannel, limits: SandboxLimits, timeout: float) -> dict[str, Any]:
    """Start-up only, before the channel is attached to a loop: a fresh worker has run no node yet."""
    conn = channel.connection
    if not conn.poll(timeout):
        raise RuntimeError(f"a sandbox worker did not start within {timeout:g} s")
    return protocol.decode(conn.recv_bytes(protocol.max_worker_frame(limits)))


def _clean_logs(value: object, limit: int) -> list[dict[str, JSON]]:
    """Log entries as the worker sent them, keeping only well-formed ones (the worker is not trusted)."""
    if not isinstance(value, list):
        return []
    logs: list[dict[str, JSON]] = []
    for entry in value[: limit + 1]:
        if (
            isinstance(entry, dict)
            and entry.get("level") in LEVELS
            and isinstance(entry.get("message"), str)
            and type(entry.get("at")) is int
        ):
            logs.append({"level": entry["level"], "message": entry["message"], "at": entry["at"]})
    return logs


def _failure(error: str) -> NodeOutcome:
    return NodeOutcome(ok=False, error=error)


class SandboxPool:
    """``size`` worker processes running node tasks one at a time each."""

    def __init__(self, limits: SandboxLimits, size: int = 4) -> None:
        if size < 1:
            raise ValueError(f"a sandbox pool needs at least one worker, got size={size}")
        self._limits = limits
        self._size = size
        self._idle: asyncio.Queue[_Worker | None] = asyncio.Queue()
        self._workers: set[_Worker] = set()
        self._background: set[asyncio.Task[None]] = set()
        self._dying: set[BaseProcess] = set()
        self._started = False
        self._closed = False
        self._notes_logged: set[str] = set()
        self._max_worker_frame = protocol.max_worker_frame(limits)
        self._max_host_frame = protocol.max_host_frame(limits)

    @property
    def limits(self) -> SandboxLimits:
        return self._limits

    # --- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        """Start the forkserver and the workers, and wait until every worker is ready.

        Call it early, before gRPC or pymongo objects (and their threads)
        exist: the forkserver is started here, with a scrubbed environment.
        Raises if a worker cannot start; :meth:`run` itself never raises.
        """
        if self._started:
            raise RuntimeError("the sandbox pool is already started")
        self._started = True
        start_forkserver()
        launched = [self._new_worker(*spawn_worker(self._limits)) for _ in range(self._size)]
        for worker in launched:
            try:
                ready = _read_ready_blocking(worker.channel, self._limits, READY_TIMEOUT_SECONDS)
                self._accept(worker, ready)
            except BaseException:
                for other in launched:
                    other.process.kill()
                    other.channel.close()
                raise
            self._idle.put_nowait(worker)

    def _new_worker(self, process: BaseProcess, conn: Connection) -> _Worker:
        worker: _Worker

        def lost() -> None:
            # An idle worker died (or broke the protocol): replace it now rather than at its next task.
            if not worker.busy and worker in self._workers:
                self._retire(worker)

        worker = _Worker(process, FrameChannel(conn, max_frame=self._max_worker_frame, on_lost=lost))
        return worker

    def _accept(self, worker: _Worker, ready: dict[str, Any]) -> None:
        info = ready.get("ready")
        if not isinstance(info, dict):
            raise RuntimeError(f"a sandbox worker failed to start: {str(ready.get('fail', ready))[:_MAX_ERROR_CHARS]}")
        for note in info.get("notes") or []:
            if note not in self._notes_logged:
                self._notes_logged.add(note)
                logger.warning("%s", note)
        self._workers.add(worker)

    async def _start_worker(self) -> _Worker:
        worker = self._new_worker(*spawn_worker(self._limits))
        worker.busy = True
        try:
            async with asyncio.timeout(READY_TIMEOUT_SECONDS):
                ready = await worker.channel.receive()
            self._accept(worker, ready)
        except BaseException:
            worker.process.kill()
            worker.channel.close()
            self._dying.add(worker.process)
            self._in_background(self._reap(worker.process))
            raise
        worker.busy = False
        return worker

    async def close(self) -> None:
        """Stop every worker; runs waiting for a worker get an error outcome."""
        if self._closed:
            return
        self._closed = True
        self._idle.put_nowait(None)
        for task in list(self._background):
            task.cancel()
        workers = list(self._workers)
        for worker in workers:
            if worker.busy:
                worker.process.kill()  # its run ends with "the sandbox pool was closed while the node ran"
            worker.channel.close()  # end-of-file: an idle worker exits by itself
        deadline = time.monotonic() + 2.0
        for worker in workers:
            while worker.process.exitcode is None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            if worker.process.exitcode is None:
                worker.process.kill()
        for worker in workers:
            self._dying.add(worker.process)
        self._workers.clear()
        for process in list(self._dying):
            if process in self._dying:  # a background reaper may have released it meanwhile
                if process.exitcode is None:
                    process.kill()
                await self._reap(process)

    # --- workers ------------------------------------------------------------------------------

    async def _acquire(self) -> _Worker:
        while True:
            if self._closed:
                raise PoolClosed
            worker = await self._idle.get()
            if worker is None:
                self._idle.put_nowait(None)  # wake the next waiter too
                raise PoolClosed
            if not worker.retired and not worker.channel.lost:
                worker.busy = True
                return worker

    def _release(self, worker: _Worker) -> None:
        worker.busy = False
        if worker.channel.lost or self._closed:
            self._retire(worker)
        else:
            self._idle.put_nowait(worker)

    def _retire(self, worker: _Worker) -> None:
        """Kill a worker that cannot be trusted any more and start its replacement."""
        if worker.retired:
            return
        worker.retired = True
        worker.busy = False
        self._workers.discard(worker)
        if worker.process.exitcode is None:
            worker.process.kill()
        worker.channel.close()
        self._dying.add(worker.process)
        self._in_background(self._reap(worker.process))
        if not self._closed:
            self._in_background(self._replace())

    def _in_background(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _reap(self, process: BaseProcess) -> None:
        """Collect a killed worker's exit status and release its handle (once, whoever gets there first)."""
        for _ in range(500):
            if process not in self._dying:
                return
            if process.exitcode is not None:
                self._dying.discard(process)
                process.close()
                return
            await asyncio.sleep(0.01)

    async def _replace(self) -> None:
        while not self._closed:
            try:
                worker = await self._start_worker()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("could not start a sandbox worker; retrying in %g s", RESPAWN_BACKOFF_SECONDS)
                await asyncio.sleep(RESPAWN_BACKOFF_SECONDS)
                continue
            if self._closed:
                self._retire(worker)
                return
            self._idle.put_nowait(worker)
            return

    async def _exit_code(self, process: BaseProcess, wait: float = 1.0) -> int | None:
        deadline = time.monotonic() + wait
        while process.exitcode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.002)
        return process.exitcode

    # --- running a node -----------------------------------------------------------------------

    async def run(self, task: NodeTask, host_call: HostCall) -> NodeOutcome:
        """Run one node script; every failure comes back as ``NodeOutcome(ok=False, error=...)``."""
        try:
            return await self._run(task, host_call)
        except asyncio.CancelledError:
            raise
        except PoolClosed:
            return _failure("the sandbox pool is closed")
        except Exception as exc:
            logger.exception("sandbox run of %s failed", task.script_path)
            return _failure(f"sandbox error while running {task.script_path}: {type(exc).__name__}: {exc}")

    async def _run(self, task: NodeTask, host_call: HostCall) -> NodeOutcome:
        if not self._started:
            return _failure("the sandbox pool is not started")
        budget = self._limits.wall_seconds if task.timeout_seconds is None else task.timeout_seconds
        if not budget > 0:
            return _failure(f"the node's time limit must be more than 0 seconds, got {budget!r}")
        payload = self._encode_task(task)
        if isinstance(payload, NodeOutcome):
            return payload
        worker = await self._acquire()
        started = time.perf_counter()
        keep = False
        timer = asyncio.timeout(budget)
        try:
            async with timer:
                outcome, keep = await self._converse(worker, payload, host_call)
        except TimeoutError:
            if not timer.expired():
                raise
            outcome = _failure(f"node exceeded its {protocol.seconds_text(budget)} s time limit")
        except WorkerGone:
            if self._closed:
                outcome = _failure("the sandbox pool was closed while the node ran")
            else:
                outcome = _failure(await self._death_message(worker))
        except protocol.ProtocolError as exc:
            logger.error("sandbox worker %s broke the protocol: %s", worker.process.pid, exc)
            outcome = _failure(f"the sandbox worker broke the protocol: {exc}")
        finally:
            if keep:
                self._release(worker)
            else:
                self._retire(worker)
        outcome.duration_ms = (time.perf_counter() - started) * 1000
        return outcome

    def _encode_task(self, task: NodeTask) -> bytes | NodeOutcome:
        body = {
            "script_path": task.script_path,
            "source": task.source,
            "ctx": task.ctx,
            "entry": task.entry,
            "answer": task.answer,
            "user_code": task.user_code,
        }
        try:
            payload = protocol.encode({"task": body})
        except (TypeError, ValueError) as exc:
            return _failure(f"the node's input is not JSON data: {exc}")
        if len(payload) > self._max_host_frame:
            limit = self._max_host_frame
            return _failure(f"the node's input is {len(payload)} bytes of JSON, above the {limit}-byte limit")
        return payload

    async def _converse(self, worker: _Worker, payload: bytes, host_call: HostCall) -> tuple[NodeOutcome, bool]:
        """Send the task, answer its calls, and return (outcome, worker still usable)."""
        channel = worker.channel
        channel.send(payload)
        while True:
            message = await channel.receive()
            if "call" in message:
                channel.send(await self._answer(message, host_call))
                continue
            logs = _clean_logs(message.get("logs"), self._limits.max_log_lines)
            if "done" in message:
                return NodeOutcome(ok=True, output=message["done"], logs=logs), True
            if "fail" in message:
                error = str(message["fail"])[:_MAX_ERROR_CHARS]
                return NodeOutcome(ok=False, error=error, logs=logs), message.get("retire") is not True
            raise protocol.ProtocolError(f"unexpected message with keys {sorted(message)[:5]}")

    async def _answer(self, message: dict[str, Any], host_call: HostCall) -> bytes:
        method, args = message.get("call"), message.get("args")
        if method not in protocol.CALLS or not isinstance(args, list):
            return protocol.encode({"error": f"unknown smartbotic call {str(method)[:100]!r}"})
        assert isinstance(method, str)
        try:
            result = await host_call(method, args)
        except HostApiError as exc:
            return protocol.encode({"error": str(exc) or f"smartbotic.{method} was refused"})
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            logger.exception("smartbotic.%s failed in the runner", method)
            return protocol.encode({"error": f"smartbotic.{method} failed in the runner ({type(exc).__name__})"})
        try:
            data = protocol.encode({"ok": result})
        except (TypeError, ValueError) as exc:
            logger.error("smartbotic.%s returned data that is not JSON: %s", method, exc)
            return protocol.encode({"error": f"smartbotic.{method} returned data that is not JSON"})
        if len(data) > self._max_host_frame:
            limit = self._max_host_frame
            return protocol.encode({"error": f"smartbotic.{method}: the result is {len(data)} bytes, above {limit}"})
        return data

    async def _death_message(self, worker: _Worker) -> str:
        code = await self._exit_code(worker.process)
        if code == -signal.SIGXCPU:
            return f"node exceeded its {protocol.cpu_budget(self._limits)} s CPU-time limit"
        if code == -signal.SIGKILL:
            return (
                "the node's worker process was killed (SIGKILL); it may have run out of memory "
                f"(limit {protocol.mib_text(self._limits.memory_bytes)})"
            )
        if code is None:
            return "the node's worker process closed its pipe and did not exit"
        if code < 0:
            return f"the node's worker process died from {signal.Signals(-code).name}"
        return f"the node's worker process exited unexpectedly with code {code}"
