"""Fires ``triggers/schedule`` nodes: each due minute starts one queued execution, across all runners.

Every runner runs a Scheduler; its background loop calls ``tick(now)`` with the
real time every second or so (tests drive the clock). A tick looks at the
minutes since this runner's previous tick, finds the schedule nodes due in
them (``runner/schedule.py``) and claims each (workflow, node, minute) with an
insert that a unique index lets succeed once (``ScheduleStore.try_fire``). The
one runner that wins stores a queued execution, which any runner then claims.
A tick in a minute this runner has already ticked does no database work.

Missed minutes (``catch_up``, default 5 minutes):

- A runner that keeps ticking never skips a minute: a tick fires every due
  minute since its previous tick, however late in the minute it lands and
  even when the previous tick was minutes ago (a stalled event loop, a slow
  poll interval), as long as the previous tick is within ``catch_up``.
- Minutes that passed while this runner was not ticking (it was down, just
  started, or stalled longer than ``catch_up``) are not replayed, except the
  most recent due minute, and only if it is at most ``catch_up`` old. After
  an outage a ``*/5 * * * *`` schedule fires once, not once per missed slot;
  a daily job missed by a restart of a few minutes still runs, late. Minutes
  that other runners served meanwhile are already claimed and do not fire
  again.
- A late minute is not fired once a later minute of the same schedule has
  fired (``ScheduleStore.last_fired`` is read before claiming it): late fires
  go out in order or not at all. Only clock skew between runners, or two
  runners catching up in the same instant, could still slip one through.
- A minute before the workflow was last saved or activated (its
  ``updatedAt``) never fires: activating a daily 10:00 job at 10:02 does not
  run it until tomorrow.

A claimed minute whose execution cannot be started (an invalid definition,
a database error) stays claimed — the schedule fires at most once per
minute — and the fire document keeps the error; it is logged, not retried.
Workflows whose schedule config is invalid are skipped with one warning per
version; ``runner.schedule.validate`` belongs in workflow validation.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .engine.model import JSON
from .schedule import MINUTE, CronSchedule, InvalidSchedule, as_utc, floor_minute, parse
from .store.schedules import ScheduleStore
from .store.workflows import WorkflowStore

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)

NODE_TYPE = "triggers/schedule"
CATCH_UP = timedelta(minutes=5)

StartExecution = Callable[[dict[str, Any], str, dict[str, JSON]], Awaitable[str]]
"""(workflow document, schedule node id, trigger input) → id of the queued execution it stored."""
Clock = Callable[[], datetime | None]
"""What the background loop passes to ``tick``; None: do not tick now."""


def wall_clock() -> datetime:
    return datetime.now(UTC)


def file_clock(path: Path) -> Clock:
    """A clock for tests of real runner processes: the time is the ISO 8601 instant the file holds.

    No file, an empty one or an unreadable time: no tick. Tests advance the file minute by minute.
    """

    def now() -> datetime | None:
        try:
            text = path.read_text().strip()
            return as_utc(datetime.fromisoformat(text)) if text else None
        except (OSError, ValueError):
            return None

    return now


def start_queued(runtime: Runtime) -> StartExecution:
    """The production ``start``: a queued execution of the workflow's current version, for any runner to claim."""

    async def start(doc: dict[str, Any], node_id: str, input_: dict[str, JSON]) -> str:
        state = runtime.new_state(doc["definition"], int(doc["version"]), input_, node_id)
        await runtime.start(state, queue=True)
        return state.id

    return start


def iso(t: datetime, timespec: str = "milliseconds") -> str:
    """UTC ISO 8601 ending in Z: ``2024-03-31T01:00:00.000Z``."""
    return as_utc(t).isoformat(timespec=timespec).replace("+00:00", "Z")


def schedule_nodes(definition: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(node id, config) of every enabled schedule node in a definition."""
    found = []
    for node in definition.get("nodes") or []:
        if isinstance(node, dict) and node.get("type") == NODE_TYPE and not node.get("disabled"):
            config = node.get("config")
            found.append((str(node.get("id")), config if isinstance(config, dict) else {}))
    return found


def _activated_floor(doc: dict[str, Any]) -> datetime | None:
    """Exclusive lower bound for due minutes: the minute before the first whole minute after ``updatedAt``."""
    updated = doc.get("updatedAt")
    if not isinstance(updated, int | float):
        return None
    at = datetime.fromtimestamp(updated / 1000, UTC)
    first = floor_minute(at) if at == floor_minute(at) else floor_minute(at) + MINUTE
    return first - MINUTE


class Scheduler:
    def __init__(
        self, workflows: WorkflowStore, fires: ScheduleStore, start: StartExecution, *, catch_up: timedelta = CATCH_UP
    ) -> None:
        if catch_up < MINUTE:
            raise ValueError(f"catch_up {catch_up} is shorter than a minute; a late tick would skip minutes")
        self.workflows = workflows
        self.fires = fires
        self.start = start
        self.catch_up = catch_up
        self._last_tick: datetime | None = None
        self._warned: set[tuple[str, object, str]] = set()

    async def tick(self, now_utc: datetime) -> list[str]:
        """Fire what is due up to the minute holding ``now_utc``; returns the ids of the executions started."""
        now_minute = floor_minute(now_utc)
        oldest = now_minute - self.catch_up - MINUTE  # exclusive: a minute at most catch_up old may fire
        last = self._last_tick
        live = last is not None and oldest <= last <= now_minute
        if live and last == now_minute:
            return []
        after = last if live and last is not None else oldest
        started: list[str] = []
        for doc in await self.workflows.active_with_node_type(NODE_TYPE):
            floor = _activated_floor(doc)
            window_start = max(after, floor) if floor is not None else after
            for node_id, config in schedule_nodes(doc["definition"]):
                schedule = self._schedule(doc, node_id, config)
                if schedule is None:
                    continue
                due = schedule.due_minutes(window_start, now_minute)
                if not live:
                    due = due[-1:]
                started += await self._fire(doc, node_id, due, now_minute, as_utc(now_utc))
        self._last_tick = now_minute
        return started

    def _schedule(self, doc: dict[str, Any], node_id: str, config: dict[str, Any]) -> CronSchedule | None:
        try:
            return parse(config.get("cron"), config.get("timezone"))
        except InvalidSchedule as exc:
            key = (str(doc["_id"]), doc.get("version"), node_id)
            if key not in self._warned:
                self._warned.add(key)
                log.warning("workflow %s v%s: schedule node %s never fires: %s", key[0], key[1], node_id, exc)
            return None

    async def _fire(
        self, doc: dict[str, Any], node_id: str, due: list[datetime], now_minute: datetime, now: datetime
    ) -> list[str]:
        workflow_id = str(doc["_id"])
        if any(m < now_minute for m in due):
            fired = await self.fires.last_fired(workflow_id, node_id)
            if fired is not None:
                due = [m for m in due if m > fired]
        started = []
        for minute in due:
            if not await self.fires.try_fire(workflow_id, node_id, minute, fired_at=now):
                continue
            input_: dict[str, JSON] = {"scheduledFor": iso(minute, "seconds"), "firedAt": iso(now)}
            try:
                execution_id = await self.start(doc, node_id, input_)
            except Exception as exc:
                log.exception(
                    "workflow %s: schedule node %s fired for %s but no execution started",
                    workflow_id,
                    node_id,
                    iso(minute),
                )
                await self.fires.record_error(workflow_id, node_id, minute, f"{type(exc).__name__}: {exc}")
                continue
            log.info(
                "workflow %s: schedule node %s fired for %s: execution %s",
                workflow_id,
                node_id,
                iso(minute),
                execution_id,
            )
            started.append(execution_id)
        return started
