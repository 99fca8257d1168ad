"""What every runner does in the background, safely alongside other runners:

- claim queued executions (``pending → running``),
- wake due timers and parked retries, and end expired approvals and event
  waits by their ``onTimeout`` policy,
- take over executions whose runner stopped renewing its lease,
- renew the leases of its own running executions.

Each takes work with one conditional update; a runner that loses the race
simply moves on.
"""

from __future__ import annotations

import asyncio
import logging
import random
from typing import Any

from .engine.model import ResumeAnswer
from .resume import spent_record
from .runtime import MAX_RUNNING, Runtime, now_ms
from .scheduler import Clock, Scheduler, file_clock, start_queued, wall_clock
from .store.schedules import ScheduleStore

log = logging.getLogger(__name__)
BATCH = 20
CLOCK_SKEW_MS = 30_000
"""How far behind another runner's clock may be when it stamps createdAt on queued work."""


class Background:
    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._tasks: list[asyncio.Task[None]] = []
        self._pending_floor = 0
        self._floor_reset = 0
        clock_file = runtime.settings.scheduler_clock_file
        self.clock: Clock = file_clock(clock_file) if clock_file else wall_clock
        self.scheduler = Scheduler(runtime.store.workflows, ScheduleStore(runtime.store.db), start_queued(runtime))

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._loop(self.tick, self.runtime.settings.poll_interval_seconds, wake=True)),
            asyncio.create_task(self._loop(self.renew, self.runtime.settings.lease_seconds / 3)),
            asyncio.create_task(self._loop(self.fire_schedules, min(1.0, self.runtime.settings.poll_interval_seconds))),
        ]

    async def stop(self) -> None:
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _loop(self, step: Any, interval: float, *, wake: bool = False) -> None:
        event = self.runtime.work_available
        while True:
            busy = False
            try:
                busy = bool(await step())
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("background step %s failed; retrying", step.__name__)
            if busy and self._free():  # a full batch: more is probably waiting
                await asyncio.sleep(0)
                continue
            if wake:
                event.clear()
                try:
                    await asyncio.wait_for(event.wait(), interval)
                except TimeoutError:
                    pass
            else:
                await asyncio.sleep(interval)

    def _free(self) -> int:
        return max(0, MAX_RUNNING - len(self.runtime.handles))

    async def tick(self) -> bool:
        """One round of looking for work; True when a batch was full (look again at once)."""
        busy = False
        if self._free():
            busy |= await self.claim_queued()
        if self._free():
            busy |= await self.wake_due()
        if self._free():
            await self.take_over_lapsed()
        return busy

    async def fire_schedules(self) -> None:
        now = self.clock()
        if now is not None:
            await self.scheduler.tick(now)

    async def renew(self) -> None:
        until = now_ms() + int(self.runtime.settings.lease_seconds * 1000)
        await self.runtime.store.executions.renew_leases(self.runtime.runner_id, until)

    async def _claim_and_run(
        self,
        doc: dict[str, Any],
        expected: dict[str, Any],
        resume: ResumeAnswer | None,
        spent: dict[str, Any] | None = None,
    ) -> bool:
        store = self.runtime.store.executions
        lease = self.runtime.lease()
        if not await store.claim(
            doc["_id"], expected, owner=self.runtime.runner_id, lease_until=lease["until"], now_ms=now_ms(), spent=spent
        ):
            return False
        full = doc if "workflowSnapshot" in doc else await store.get(doc["_id"])
        if full is None:
            return False
        await self.runtime.continue_stored(full, resume)
        return True

    async def _oldest_pending(self, limit: int) -> list[dict[str, Any]]:
        """The oldest queued executions, read through a createdAt window that starts at the oldest one
        seen last time and widens until it holds ``limit`` (a query that matches the whole queue
        reads all of it on the embedded server). Once a minute the window starts from zero again,
        to catch executions queued by a runner whose clock runs behind."""
        store = self.runtime.store.executions
        now = now_ms()
        if now - self._floor_reset > 60_000:
            self._pending_floor, self._floor_reset = 0, now
        floor = self._pending_floor
        # a recent floor: one query up to now; an old one (or zero): small windows, widening
        window = now + CLOCK_SKEW_MS - floor if now - floor < 300_000 else 2000
        while True:
            upper = floor + window
            query = {"status": "pending", "createdAt": {"$gte": floor, "$lt": upper}}
            docs = await store.find_ids(query, sort=[("createdAt", 1)], limit=limit, whole=True)
            if len(docs) >= limit or upper > now + CLOCK_SKEW_MS:
                break
            window *= 8
        self._pending_floor = docs[0]["createdAt"] if docs else max(floor, now - CLOCK_SKEW_MS)
        return docs

    async def claim_queued(self) -> bool:
        """Oldest first; each runner tries them in its own random order, so that several runners
        draining one queue rarely collide on the same execution."""
        want = min(BATCH, self._free())
        docs = await self._oldest_pending(want * 2)
        random.shuffle(docs)
        claimed = 0
        for doc in docs:
            if claimed >= want:
                break
            claimed += await self._claim_and_run(doc, {"status": "pending"}, None)
        return len(docs) >= want * 2

    async def wake_due(self) -> bool:
        store = self.runtime.store.executions
        now = now_ms()
        limit = min(BATCH, self._free())
        due = {"status": "waiting", "wakeAt": {"$lte": now}}
        docs = await store.find_ids(due, sort=[("wakeAt", 1)], limit=limit, whole=True)
        for doc in docs:
            pause = doc.get("pause") or {}
            key = pause.get("key")
            if not key:
                continue
            # the version too: a migrate between this read and the claim makes the claim fail
            expected = {
                "status": "waiting",
                "pause.key": key,
                "wakeAt": doc.get("wakeAt"),
                "workflowVersion": doc.get("workflowVersion"),
            }
            kind = pause.get("kind")
            spent = None
            if kind in ("approval", "event"):
                answer = ResumeAnswer(key=key, by="timeout", at=now, timeout=True, expiresAt=pause.get("expiresAt"))
                spent = spent_record(pause, now=now, by="timeout", expired=True)
            elif kind == "timer":
                answer = ResumeAnswer(key=key, payload={"wokeAt": now}, by="timer", at=now)
            else:
                answer = ResumeAnswer(key=key)
            if await self._claim_and_run(doc, expected, answer, spent):
                log.info("execution %s: %s pause at %s ended (due)", doc["_id"], kind, key)
        return len(docs) >= limit

    async def take_over_lapsed(self) -> None:
        store = self.runtime.store.executions
        docs = await store.find_ids(
            {"status": "running", "lease.until": {"$lt": now_ms()}},
            sort=[("lease.until", 1)],
            limit=min(BATCH, self._free()),
        )
        for doc in docs:
            lease = doc.get("lease") or {}
            expected = {"status": "running", "lease.owner": lease.get("owner"), "lease.until": lease.get("until")}
            if await self._claim_and_run(doc, expected, None):
                log.warning("took over execution %s from runner %s (lease lapsed)", doc["_id"], lease.get("owner"))
