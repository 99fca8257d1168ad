"""Schedules against the real MongoDB-compatible server: at most once per minute across runners, missed minutes.

The scheduler's clock is driven (``tick(now)``); no test waits for a real minute.
Run as ``python -m tests.integration.test_schedules worker ...`` this module is one
of the separate scheduler processes of the concurrency test.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import OperationFailure

from runner.engine.model import JSON
from runner.scheduler import NODE_TYPE, Scheduler, start_queued
from runner.settings import Settings
from runner.store.collections import INDEXES, SCHEDULE_FIRES
from runner.store.schedules import ScheduleStore
from runner.store.workflows import WorkflowStore
from tests.integration.conftest import Stack

ROOT = Path(__file__).resolve().parents[2]
MIN = timedelta(minutes=1)
T0 = datetime(2030, 7, 1, 10, 0, tzinfo=UTC)  # a Monday; saved workflows are older (updatedAt is real time)
Db = AsyncDatabase[dict[str, Any]]


def at(minutes: int, seconds: int = 0) -> datetime:
    return T0 + minutes * MIN + timedelta(seconds=seconds)


def ms(t: datetime) -> int:
    return int(t.timestamp() * 1000)


def scheduled(
    wf_id: str, cron: str, *, timezone: str | None = None, node_id: str = "tick", disabled: bool = False
) -> dict[str, Any]:
    config: dict[str, Any] = {"cron": cron} | ({"timezone": timezone} if timezone else {})
    node: dict[str, Any] = {"id": node_id, "type": NODE_TYPE, "config": config}
    if disabled:
        node["disabled"] = True
    return {
        "id": wf_id,
        "name": wf_id,
        "nodes": [node, {"id": "after", "type": "core/noop", "config": {}}],
        "connections": [{"from": node_id, "to": "after"}],
    }


async def save(db: Db, definition: dict[str, Any], *, active: bool = True, saved_at: datetime | None = None) -> None:
    await WorkflowStore(db).publish(
        definition["id"],
        definition,
        previous_version=0,
        active=active,
        change_note="",
        saved_by="test",
        now_ms=ms(saved_at) if saved_at else ms(datetime.now(UTC)),
    )


@dataclass
class Recorder:
    """The scheduler's ``start``: remembers what it was asked to start."""

    calls: list[tuple[str, str, dict[str, JSON]]] = field(default_factory=list)
    fail_for: set[str] = field(default_factory=set)

    async def __call__(self, doc: dict[str, Any], node_id: str, input_: dict[str, JSON]) -> str:
        if doc["_id"] in self.fail_for:
            raise RuntimeError(f"cannot start {doc['_id']}")
        self.calls.append((doc["_id"], node_id, input_))
        return f"exec-{len(self.calls)}"

    def minutes(self, wf_id: str, node_id: str = "tick") -> list[str]:
        return [str(i["scheduledFor"]) for w, n, i in self.calls if (w, n) == (wf_id, node_id)]


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.fixture
async def db(mongo_uri: str, db_name: str) -> AsyncIterator[Db]:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(mongo_uri, tz_aware=True, retryWrites=False)
    database = client[db_name]
    for name, indexes in INDEXES.items():
        await database[name].create_indexes(indexes)
    yield database
    await client.drop_database(db_name)
    await client.close()


def scheduler(db: Db, start: Any) -> Scheduler:
    return Scheduler(WorkflowStore(db), ScheduleStore(db), start)


# -- at most once per minute, across processes ------------------------------------------------------


async def _worker(mongo_uri: str, db_name: str, runner: str, minutes: list[str]) -> None:
    """One runner's scheduler in its own process and client; records starts in a collection all can count."""
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(mongo_uri, tz_aware=True, retryWrites=False)
    db = client[db_name]

    async def start(doc: dict[str, Any], node_id: str, input_: dict[str, JSON]) -> str:
        result = await db["started"].insert_one(
            {"workflowId": doc["_id"], "nodeId": node_id, "runner": runner, "scheduledFor": input_["scheduledFor"]}
        )
        return str(result.inserted_id)

    sched = scheduler(db, start)
    await db.command("ping")
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    started = []
    for minute in minutes:
        started += await sched.tick(datetime.fromisoformat(minute))
    print(json.dumps(started), flush=True)
    await client.close()


async def test_three_runner_processes_fire_each_due_minute_exactly_once(db: Db, mongo_uri: str, db_name: str) -> None:
    await save(db, scheduled("every-minute", "* * * * *"))
    await save(db, scheduled("every-two", "*/2 * * * *"))
    procs = []
    for i in range(3):
        # each runner ticks the same five minutes, at its own second of each minute
        minutes = [at(m, seconds=10 * i + 5).isoformat() for m in range(5)]
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "tests.integration.test_schedules",
                    "worker",
                    mongo_uri,
                    db_name,
                    f"r{i}",
                    *minutes,
                ],
                cwd=ROOT,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    try:
        for p in procs:
            assert p.stdout is not None
            assert p.stdout.readline().strip() == "ready", p.stderr.read() if p.stderr else ""
        for p in procs:  # all go at once
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = [p.communicate(timeout=60) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    returned = [eid for out, _ in outs for eid in json.loads(out.strip().splitlines()[-1])]
    started = await db["started"].find({}, {"_id": 1, "workflowId": 1, "scheduledFor": 1}).to_list(None)
    assert sorted(returned) == sorted(str(d["_id"]) for d in started)
    per_workflow = {
        w: sorted(d["scheduledFor"] for d in started if d["workflowId"] == w) for w in ("every-minute", "every-two")
    }
    assert per_workflow == {
        "every-minute": [iso(at(m)) for m in range(5)],
        "every-two": [iso(at(m)) for m in (0, 2, 4)],
    }
    fires = ScheduleStore(db)
    assert [f["minute"] for f in await fires.fires("every-minute", "tick")] == [at(m) for m in range(5)]
    assert [f["minute"] for f in await fires.fires("every-two", "tick")] == [at(m) for m in (0, 2, 4)]


async def test_concurrent_claims_of_one_minute_have_one_winner(db: Db) -> None:
    stores = [ScheduleStore(db) for _ in range(8)]
    won = await asyncio.gather(*(s.try_fire("wf", "tick", at(0), fired_at=at(0, 1)) for s in stores))
    assert sorted(won) == [False] * 7 + [True]
    assert await stores[0].try_fire("wf", "tick", at(1), fired_at=at(1)) is True  # the next minute is free
    assert await stores[0].try_fire("wf", "other", at(0), fired_at=at(0)) is True  # and so is another node
    assert await stores[0].last_fired("wf", "tick") == at(1)
    assert await stores[0].last_fired("wf", "nope") is None


# -- ticks of one runner ----------------------------------------------------------------------------


async def test_ticks_within_one_minute_fire_it_once(db: Db) -> None:
    await save(db, scheduled("wf", "* * * * *"))
    rec = Recorder()
    sched = scheduler(db, rec)
    assert await sched.tick(at(0, 1)) == ["exec-1"]
    assert await sched.tick(at(0, 30)) == []
    assert await sched.tick(at(0, 59)) == []
    assert await sched.tick(at(1, 0)) == ["exec-2"]
    assert rec.calls == [
        ("wf", "tick", {"scheduledFor": "2030-07-01T10:00:00Z", "firedAt": "2030-07-01T10:00:01.000Z"}),
        ("wf", "tick", {"scheduledFor": "2030-07-01T10:01:00Z", "firedAt": "2030-07-01T10:01:00.000Z"}),
    ]


async def test_a_late_tick_of_a_live_runner_fires_every_minute_since_its_previous_tick(db: Db) -> None:
    await save(db, scheduled("wf", "* * * * *"))
    await save(db, scheduled("quarter", "*/15 * * * *"))
    rec = Recorder()
    sched = scheduler(db, rec)
    await sched.tick(at(0, 59))  # late in the minute
    await sched.tick(at(3, 30))  # the event loop stalled for 2.5 minutes
    await sched.tick(at(16, 58))  # a tick 13 minutes later is past the catch-up window: like a restart
    assert rec.minutes("wf") == [iso(at(m)) for m in (0, 1, 2, 3, 16)]
    assert rec.minutes("quarter") == [iso(at(0)), iso(at(15))]
    late = next(i for w, _, i in rec.calls if w == "wf" and i["scheduledFor"] == iso(at(1)))
    assert late["firedAt"] == "2030-07-01T10:03:30.000Z"


@pytest.mark.parametrize(
    ("cron", "restart", "fired"),
    [
        ("* * * * *", at(20, 10), [at(20)]),  # 19 missed minutes: only the current one
        ("*/15 * * * *", at(18, 40), [at(15)]),  # the most recent due minute, 3 minutes late
        ("*/15 * * * *", at(20, 0), [at(15)]),  # exactly the catch-up window (5 minutes) late
        ("*/15 * * * *", at(21, 0), []),  # 6 minutes late: not replayed
        ("0 10 * * *", at(4, 30), [at(0)]),  # a daily job missed by a restart of a few minutes runs late
        ("0 10 * * *", at(7), []),
    ],
)
async def test_after_an_outage_only_the_most_recent_due_minute_within_catch_up_fires(
    db: Db, cron: str, restart: datetime, fired: list[datetime]
) -> None:
    await save(db, scheduled("wf", cron))
    before = Recorder()
    await scheduler(db, before).tick(at(-1))  # the last runner up ticked at 09:59, then all stopped
    rec = Recorder()
    await scheduler(db, rec).tick(restart)  # a runner starts
    assert rec.minutes("wf") == [iso(m) for m in fired]


async def test_a_stalled_runner_never_fires_a_minute_older_than_one_already_fired(db: Db) -> None:
    await save(db, scheduled("wf", "* * * * *"))
    rec_a, rec_b = Recorder(), Recorder()
    a, b = scheduler(db, rec_a), scheduler(db, rec_b)
    await a.tick(at(0, 5))  # fires 10:00, then a's event loop stalls
    await b.tick(at(3, 5))  # b starts at 10:03: fires 10:03 only (10:01 and 10:02 were missed by all)
    await a.tick(at(3, 40))  # a wakes: 10:01 and 10:02 would now be out of order
    assert rec_a.minutes("wf") == [iso(at(0))]
    assert rec_b.minutes("wf") == [iso(at(3))]
    assert [f["minute"] for f in await ScheduleStore(db).fires("wf", "tick")] == [at(0), at(3)]


async def test_minutes_before_the_workflow_was_saved_or_activated_never_fire(db: Db) -> None:
    rec = Recorder()
    sched = scheduler(db, rec)
    await sched.tick(at(0, 10))  # nothing scheduled yet
    await save(db, scheduled("every", "* * * * *"), saved_at=at(2, 30))
    await save(db, scheduled("at-0202", "2 10 * * *"), saved_at=at(2, 30))
    await sched.tick(at(4, 1))  # live: the window is 10:01-10:04, but nothing existed before 10:02:30
    assert rec.minutes("every") == [iso(at(3)), iso(at(4))]
    assert rec.minutes("at-0202") == []
    other = Recorder()
    await scheduler(db, other).tick(at(5))  # a fresh runner's most-recent rule respects it too
    assert other.minutes("at-0202") == []


async def test_inactive_archived_and_disabled_schedules_do_not_fire(db: Db) -> None:
    store = WorkflowStore(db)
    await save(db, scheduled("active", "* * * * *"))
    await save(db, scheduled("inactive", "* * * * *"), active=False)
    await save(db, scheduled("archived", "* * * * *"))
    await store.set_flags("archived", {"archived": True})  # still marked active: archived wins
    await save(db, scheduled("disabled", "* * * * *", disabled=True))
    rec = Recorder()
    sched = scheduler(db, rec)
    await sched.tick(at(0))
    assert [w for w, _, _ in rec.calls] == ["active"]
    await store.set_flags("active", {"active": False})
    await store.set_flags("inactive", {"active": True, "updatedAt": ms(at(0, 30))})
    await sched.tick(at(1))
    assert [w for w, _, _ in rec.calls] == ["active", "inactive"]
    assert await db[SCHEDULE_FIRES].count_documents({}) == 2


async def test_two_schedule_nodes_fire_independently_in_their_time_zones(db: Db) -> None:
    definition = scheduled("wf", "0 9 * * *", timezone="America/New_York", node_id="ny")
    definition["nodes"].append({"id": "utc", "type": NODE_TYPE, "config": {"cron": "0 13 * * *"}})
    definition["connections"].append({"from": "utc", "to": "after"})
    await save(db, definition)
    rec = Recorder()
    sched = scheduler(db, rec)
    summer_13 = datetime(2030, 7, 1, 13, 0, 20, tzinfo=UTC)  # 09:00 EDT
    await sched.tick(summer_13 - MIN)
    await sched.tick(summer_13)
    assert sorted((n, i["scheduledFor"]) for _, n, i in rec.calls) == [
        ("ny", "2030-07-01T13:00:00Z"),
        ("utc", "2030-07-01T13:00:00Z"),
    ]


async def test_an_invalid_schedule_is_skipped_with_one_warning_and_others_fire(
    db: Db, caplog: pytest.LogCaptureFixture
) -> None:
    await save(db, scheduled("bad", "61 * * * *"))
    await save(db, scheduled("bad-zone", "* * * * *", timezone="Mars/Olympus"))
    await save(db, scheduled("good", "* * * * *"))
    rec = Recorder()
    sched = scheduler(db, rec)
    with caplog.at_level(logging.WARNING, logger="runner.scheduler"):
        await sched.tick(at(0))
        await sched.tick(at(1))
    assert [w for w, _, _ in rec.calls] == ["good", "good"]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 2, warnings
    assert any("bad" in w and "minute field '61'" in w for w in warnings)
    assert any("bad-zone" in w and "'Mars/Olympus' is not a known IANA time zone" in w for w in warnings)


async def test_a_failed_start_keeps_the_minute_fired_with_its_error_and_is_not_retried(
    db: Db, caplog: pytest.LogCaptureFixture
) -> None:
    await save(db, scheduled("broken", "* * * * *"))
    await save(db, scheduled("fine", "* * * * *"))
    rec = Recorder(fail_for={"broken"})
    with caplog.at_level(logging.ERROR, logger="runner.scheduler"):
        assert await scheduler(db, rec).tick(at(0)) == ["exec-1"]
    assert [w for w, _, _ in rec.calls] == ["fine"]
    (fire,) = await ScheduleStore(db).fires("broken", "tick")
    assert fire["error"] == "RuntimeError: cannot start broken"
    assert "fired for 2030-07-01T10:00:00.000Z but no execution started" in caplog.text
    rec.fail_for.clear()
    assert await scheduler(db, rec).tick(at(0, 30)) == []  # another runner: the minute is taken


async def test_fires_expire_two_days_after_firing(db: Db) -> None:
    store = ScheduleStore(db)
    fired_at = datetime.now(UTC).replace(microsecond=0) - timedelta(days=3)
    assert await store.try_fire("wf", "tick", fired_at, fired_at=fired_at)
    assert await store.try_fire("wf", "tick", at(0), fired_at=at(0, 2))
    (old, new) = await store.fires("wf", "tick")
    assert new["expireAt"] == at(0, 2) + timedelta(days=2)
    assert old["expireAt"] < datetime.now(UTC)
    try:
        await db.client.admin.command("secantusAdmin.pruneTtl", 1)
    except OperationFailure:
        return  # a real mongod has no command to force the sweep (its monitor runs every 60 s); expireAt is checked
    assert [f["minute"] for f in await store.fires("wf", "tick")] == [at(0)]


async def test_the_runtime_start_stores_a_queued_execution_of_the_current_version(
    db: Db, mongo_uri: str, db_name: str
) -> None:
    from runner.hostapi import HostApi
    from runner.nodes import NodeCatalog
    from runner.runtime import Runtime
    from runner.sandbox import SandboxLimits, SandboxPool
    from runner.store.executions import Retention
    from runner.store.mongo import Store
    from runner.store.nodedata import NodeDataStore

    catalog = NodeCatalog(ROOT / "nodes")
    assert catalog[NODE_TYPE].error is None
    store = Store.connect(mongo_uri, db_name, Retention())
    settings = Settings()
    pool = SandboxPool(SandboxLimits())  # never started: a queued execution runs no node here
    runtime = Runtime(settings, store, catalog, pool, HostApi(settings, NodeDataStore(store.db)))
    try:
        await save(db, scheduled("wf", "*/5 * * * *"))
        (execution_id,) = await Scheduler(store.workflows, ScheduleStore(store.db), start_queued(runtime)).tick(
            at(5, 3)
        )
        doc = await store.executions.get(execution_id)
        assert doc is not None
        assert (doc["status"], doc["workflowId"], doc["workflowVersion"], doc["triggerNodeId"]) == (
            "pending",
            "wf",
            1,
            "tick",
        )
        assert doc["input"] == {"scheduledFor": "2030-07-01T10:05:00Z", "firedAt": "2030-07-01T10:05:03.000Z"}
    finally:
        await store.close()


# -- real runner processes --------------------------------------------------------------------------

@pytest.fixture
def stack_env(tmp_path: Path) -> dict[str, str]:
    """Runners of this module's stack read the scheduler's time from a file the test advances."""
    return {"SMARTBOTIC_SCHEDULER_CLOCK_FILE": str(tmp_path / "scheduler-clock")}


def test_two_runner_processes_fire_and_run_each_minute_once(stack: Stack, stack_env: dict[str, str]) -> None:
    from pymongo import MongoClient

    from tests.integration.helpers import save as save_grpc
    from tests.integration.helpers import wait_status

    save_grpc(stack.stub, scheduled("heartbeat", "* * * * *"))
    stack.start_runner()
    clock = Path(stack_env["SMARTBOTIC_SCHEDULER_CLOCK_FILE"])
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri)
    executions = client[stack.db_name]["executions"]
    try:
        for minute in range(3):
            clock.write_text(at(minute, seconds=20).isoformat())
            deadline = time.monotonic() + 15
            while executions.count_documents({"workflowId": "heartbeat"}) < minute + 1:
                assert time.monotonic() < deadline, f"minute {minute} did not fire"
                time.sleep(0.05)
            time.sleep(0.5)  # both runners tick this minute several times (poll interval 0.1 s)
        docs = list(executions.find({"workflowId": "heartbeat"}, {"input": 1}))
        assert sorted(d["input"]["scheduledFor"] for d in docs) == [iso(at(m)) for m in range(3)]
        for d in docs:
            done = wait_status(stack.stub, d["_id"], "completed", "failed")
            assert done["status"] == "completed", done
            assert done["results"]["tick"]["output"] == d["input"]
            assert done["results"]["tick"]["output"]["firedAt"].startswith("2030-07-01T10:0")
    finally:
        client.close()


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    asyncio.run(_worker(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]))
