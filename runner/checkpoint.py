"""Write-behind checkpoints: node results reach MongoDB without making every node wait.

A settled node's result is queued and written after a short linger
(``LINGER_SECONDS``, 50 ms), together with everything else that settled
meanwhile; one write is in flight at a time. The walk never waits for a
write, so a run of fast nodes costs one round trip per 50 ms, not per node,
and a workflow that finishes within the linger costs its insert and its final
write only. Before anything leaves the runner (the final state, an early
webhook response, a pause) the queue is drained. A result waits at most the
linger plus the write in flight.

Guarantee: a node whose result was written never runs again. A node whose
result was still queued when the runner died runs again on the runner that
takes the execution over, like a node interrupted mid-run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

from .engine.model import ExecutionState, NodeResult
from .store.executions import ExecutionStore


class Aborted(Exception):
    """The execution is no longer this runner's to write: cancelled, or taken over."""


LINGER_SECONDS = 0.05
"""How long settled results may wait for a following node before they are written on their own."""


class Checkpointer:
    def __init__(self, store: ExecutionStore, state: ExecutionState, owner: str) -> None:
        self._store = store
        self._state = state
        self._owner = owner
        self._queued: dict[str, NodeResult] = {}
        self._inflight: asyncio.Task[bool] | None = None
        self._kick: asyncio.TimerHandle | None = None
        self.aborted = False

    def begin_with(self, first_write: Coroutine[Any, Any, bool]) -> None:
        """Make ``first_write`` (the insert of a new execution) the first write in flight: the walk
        starts at once, and what settles meanwhile goes out with the next write."""
        self._watch(asyncio.create_task(first_write))

    async def add(self, key: str, result: NodeResult) -> None:
        self._queued[key] = result
        if self._inflight is not None:
            if not self._inflight.done():
                return
            await self._collect()
        self._schedule()

    def _schedule(self) -> None:
        if self._kick is None:
            self._kick = asyncio.get_running_loop().call_later(LINGER_SECONDS, self._linger_over)

    def _start(self) -> None:
        if self._kick is not None:
            self._kick.cancel()
            self._kick = None
        batch, self._queued = self._queued, {}
        extra = {"steps": self._state.steps, "lastKey": self._state.lastKey}
        self._watch(asyncio.create_task(self._store.checkpoint(self._state.id, batch, owner=self._owner, extra=extra)))

    def _watch(self, task: asyncio.Task[bool]) -> None:
        self._inflight = task
        task.add_done_callback(self._written)

    def _written(self, task: asyncio.Task[bool]) -> None:
        """A write finished: results that settled meanwhile go out after the linger."""
        if task is self._inflight and self._queued:
            self._schedule()

    def _linger_over(self) -> None:
        self._kick = None
        inflight = self._inflight
        if not self._queued or (inflight is not None and not inflight.done()):
            return  # the write in flight schedules the next one when it finishes
        if inflight is None or task_ok(inflight):
            self._start()

    async def _collect(self) -> None:
        task, self._inflight = self._inflight, None
        if task is not None and not await task:
            self.aborted = True
            raise Aborted(self._state.id)

    async def drain(self) -> dict[str, NodeResult]:
        """Wait for the write in flight; return what is still queued (for the final write)."""
        try:
            while self._inflight is not None and not self._inflight.done():
                await asyncio.wait([self._inflight])
            await self._collect()
        finally:
            if self._kick is not None:
                self._kick.cancel()
                self._kick = None
            queued, self._queued = self._queued, {}
        return queued

    async def flush(self) -> None:
        queued = await self.drain()
        if queued:
            self._queued = queued
            self._start()
            await self._collect()


def task_ok(task: asyncio.Task[bool]) -> bool:
    return not task.cancelled() and task.exception() is None and task.result() is True
