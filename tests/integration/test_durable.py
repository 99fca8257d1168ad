"""Durable time and many runners: crash takeover, queued work spread over runners, waits
that survive restarts, events, cancellation. Real runner processes sharing one database."""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest
from pymongo import MongoClient

from runner._proto import workflow_pb2 as pb

from .conftest import Stack
from .helpers import STATUS, code, detail, execute, node, save, wait_status, workflow


def counting_node(node_id: str, spin: int) -> dict[str, Any]:
    body = (
        "def main(input):\n"
        f"    smartbotic.db.collection('runs').insert({{'node': '{node_id}', 'input': input}})\n"
        "    n = 0\n"
        f"    for i in range({spin}):\n"
        "        n += i\n"
        f"    return {{'node': '{node_id}', 'tag': input.get('tag') if isinstance(input, dict) else None}}\n"
    )
    return code(node_id, body)


@pytest.fixture
def stack_env() -> dict[str, str]:
    return {"SMARTBOTIC_LEASE_SECONDS": "1.5"}


def runs(stack: Stack) -> list[dict[str, Any]]:
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri)
    try:
        return list(client[stack.db_name + "_data"]["runs"].find({}, {"_id": 0}))
    finally:
        client.close()


def test_killed_runner_is_taken_over_and_no_completed_node_runs_twice(stack: Stack) -> None:
    steps = [f"s{i}" for i in range(12)]
    wf = workflow("long", [node("start", "triggers/manual"), *[counting_node(s, 1_500_000) for s in steps]])
    save(stack.stub, wf)
    reply = execute(stack.stub, "long", {"tag": "x"}, wait=False)
    # wait until a few nodes are stored, then kill -9 the only runner
    end = time.monotonic() + 60
    while True:
        d = detail(stack.stub, reply.execution_id)
        done = [k for k, r in d.get("results", {}).items() if r["status"] == "completed"]
        if len(done) >= 4:
            break
        assert time.monotonic() < end, d
        time.sleep(0.05)
    stack.procs[0].kill9()
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri)
    stored = client[stack.db_name]["executions"].find_one({"_id": reply.execution_id})
    client.close()
    assert stored is not None
    completed_before_kill = {k for k, r in stored["results"].items() if r["status"] == "completed"}
    _, target = stack.start_runner()
    stack.grpc_target = target
    stack._channel = None
    t0 = time.monotonic()
    final = wait_status(stack.stub, reply.execution_id, "completed", "failed", seconds=90)
    takeover_s = time.monotonic() - t0
    assert final["status"] == "completed", final.get("error")
    assert final["output"] == {"node": "s11", "tag": "x"}
    counts: dict[str, int] = {}
    for r in runs(stack):
        counts[r["node"]] = counts.get(r["node"], 0) + 1
    for key in completed_before_kill - {"start"}:
        assert counts[key] == 1, f"{key} completed before the kill but ran {counts[key]} times"
    assert set(counts) == set(steps)
    assert all(c <= 2 for c in counts.values())
    assert final["runner"] == "runner2"
    print(f"takeover finished the run {takeover_s:.2f}s after the kill")


def test_queued_executions_spread_over_three_runners_each_run_once(stack: Stack) -> None:
    stack.start_runner()
    stack.start_runner()
    wf = workflow("tiny", [node("start", "triggers/manual"), counting_node("c", 0)])
    save(stack.stub, wf)
    ids = [execute(stack.stub, "tiny", {"tag": i}, wait=False).execution_id for i in range(200)]
    for execution_id in ids:
        wait_status(stack.stub, execution_id, "completed", "failed", seconds=120)
    recorded = runs(stack)
    tags = sorted(r["input"]["tag"] for r in recorded)
    assert tags == list(range(200)), "every queued execution ran exactly once"
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri)
    by_runner: dict[str, int] = {}
    for doc in client[stack.db_name]["executions"].find({"_id": {"$in": ids}}, {"runner": 1, "status": 1}):
        assert doc["status"] == "completed"
        by_runner[doc["runner"]] = by_runner.get(doc["runner"], 0) + 1
    client.close()
    assert len(by_runner) >= 2, f"work went to one runner only: {by_runner}"


def test_a_durable_wait_completes_through_a_runner_restart(stack: Stack) -> None:
    wf = workflow(
        "sleepy",
        [
            node("start", "triggers/manual"),
            node("nap", "core/wait", duration="2s"),
            node("after", "core/set", values={"woke": True}),
        ],
    )
    reply = execute(stack.stub, wf, {"a": 1})
    assert STATUS[reply.status] == "waiting"
    assert reply.pause.kind == "timer" and reply.pause.token == ""
    stack.procs[0].stop()
    time.sleep(0.5)
    _, target = stack.start_runner()
    stack.grpc_target = target
    stack._channel = None
    final = wait_status(stack.stub, reply.execution_id, "completed", "failed", seconds=30)
    assert final["status"] == "completed"
    assert final["output"]["woke"] is True and final["output"]["a"] == 1
    assert final["finishedAt"] - final["startedAt"] >= 2000


def test_an_event_wakes_every_matching_waiter_and_only_them(stack: Stack) -> None:
    wf = workflow(
        "order",
        [
            node("start", "triggers/manual"),
            node("wait", "core/wait-for-event", eventType="paid", key="{{input.order}}", timeout="1h"),
            node("after", "core/set", values={"paid": True}),
        ],
    )
    save(stack.stub, wf)
    a1 = execute(stack.stub, "order", {"order": "A"})
    a2 = execute(stack.stub, "order", {"order": "A"})
    b = execute(stack.stub, "order", {"order": "B"})
    assert {STATUS[r.status] for r in (a1, a2, b)} == {"waiting"}
    other_type = stack.stub.SendEvent(pb.SendEventRequest(type="refunded", key="A", data_json="{}"), timeout=10)
    assert list(other_type.resumed_execution_ids) == []
    sent = stack.stub.SendEvent(pb.SendEventRequest(type="paid", key="A", data_json='{"amount": 5}'), timeout=10)
    assert sorted(sent.resumed_execution_ids) == sorted([a1.execution_id, a2.execution_id])
    for r in (a1, a2):
        d = wait_status(stack.stub, r.execution_id, "completed")
        assert d["results"]["wait"]["output"]["event"] == {"type": "paid", "key": "A", "data": {"amount": 5}}
    assert detail(stack.stub, b.execution_id)["status"] == "waiting"
    again = stack.stub.SendEvent(pb.SendEventRequest(type="paid", key="A", data_json="{}"), timeout=10)
    assert list(again.resumed_execution_ids) == []


@pytest.mark.parametrize(
    ("policy", "status", "branch_node"),
    [("fail", "failed", None), ("route", "completed", "late"), ("continue", "completed", "after")],
)
def test_event_timeout_follows_its_policy(stack: Stack, policy: str, status: str, branch_node: str | None) -> None:
    wf = workflow(
        "timeout",
        [
            node("start", "triggers/manual"),
            node("wait", "core/wait-for-event", eventType="t", key="k", timeout="1s", onTimeout=policy),
            node("after", "core/set", values={"on": "main"}),
            node("late", "core/set", values={"on": "timeout"}),
        ],
        [
            {"from": "start", "to": "wait"},
            {"from": "wait", "to": "after"},
            {"from": "wait", "output": "timeout", "to": "late"},
        ],
    )
    reply = execute(stack.stub, wf, {})
    final = wait_status(stack.stub, reply.execution_id, "completed", "failed", seconds=30)
    assert final["status"] == status
    if policy == "fail":
        assert "timed out at" in final["error"]
    else:
        assert final["results"][branch_node]["status"] == "completed"


def test_cancel_queued_waiting_and_running(stack: Stack) -> None:
    waiting = execute(
        stack.stub, workflow("w", [node("start", "triggers/manual"), node("nap", "core/wait", duration="1h")]), {}
    )
    assert STATUS[waiting.status] == "waiting"
    got = stack.stub.CancelExecution(
        pb.CancelExecutionRequest(execution_id=waiting.execution_id, reason="no"), timeout=10
    )
    assert STATUS[got.status] == "cancelled"
    steps = [f"s{i}" for i in range(8)]
    running = execute(
        stack.stub,
        workflow("r", [node("start", "triggers/manual"), *[counting_node(s, 1_500_000) for s in steps]]),
        {},
        wait=False,
    )
    wait_status(stack.stub, running.execution_id, "running")
    time.sleep(0.3)
    stack.stub.CancelExecution(pb.CancelExecutionRequest(execution_id=running.execution_id), timeout=10)
    time.sleep(2)
    d = detail(stack.stub, running.execution_id)
    assert d["status"] == "cancelled"
    assert "s7" not in {k for k, r in d["results"].items() if r["status"] == "completed"}
    with pytest.raises(grpc.RpcError) as info:
        stack.stub.CancelExecution(pb.CancelExecutionRequest(execution_id=running.execution_id), timeout=10)
    assert info.value.code() == grpc.StatusCode.FAILED_PRECONDITION and "cancelled" in info.value.details()
    with pytest.raises(grpc.RpcError) as info:
        stack.stub.CancelExecution(pb.CancelExecutionRequest(execution_id="nope"), timeout=10)
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
