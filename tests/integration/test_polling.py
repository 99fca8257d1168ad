"""Polling triggers with real files and a real database (DESIGN §7): each change reported
once, across failures, pauses, slow runs, downtime; and watchdog reloads and watches."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pymongo import MongoClient
from pymongo.collection import Collection

from runner._proto import workflow_pb2 as pb
from tests.conftest import ROOT

from .conftest import Stack
from .helpers import STATUS, code, detail, execute, node, save, wait_status, workflow


@pytest.fixture
def nodes_copy(tmp_path: Path) -> Path:
    target = tmp_path / "nodes"
    shutil.copytree(ROOT / "nodes", target)
    return target


@pytest.fixture
def stack_env(nodes_copy: Path) -> dict[str, str]:
    return {"SMARTBOTIC_NODES_DIR": str(nodes_copy)}


@pytest.fixture
def orders(stack: Stack) -> Iterator[Collection[dict[str, Any]]]:
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri)
    yield client[stack.db_name + "_data"]["orders"]
    client.close()


def put(col: Collection[dict[str, Any]], _id: str, ts: int, **fields: Any) -> None:
    col.replace_one({"_id": _id}, {"_id": _id, "_createdAt": ts, "_updatedAt": ts, **fields}, upsert=True)


def db_poll_workflow(wf_id: str, after: list[dict[str, Any]] | None = None, **config: Any) -> dict[str, Any]:
    nodes = [node("start", "triggers/manual"), node("poll", "triggers/database-change", collection="orders", **config)]
    connections = [{"from": "start", "to": "poll"}]
    previous, output = "poll", "changed"
    for extra in after or []:
        nodes.append(extra)
        connections.append({"from": previous, "to": extra["id"], **({"output": output} if output else {})})
        previous, output = extra["id"], None
    return workflow(wf_id, nodes, connections)


def reported(stack: Stack, wf_id: str) -> list[str]:
    reply = execute(stack.stub, wf_id, {})
    assert STATUS[reply.status] in ("completed", "waiting", "failed"), reply.error
    poll = detail(stack.stub, reply.execution_id)["results"]["poll"]
    assert poll["status"] == "completed", poll
    return [d["_id"] for d in poll["output"]["documents"]]


def test_first_run_records_then_new_and_changed_are_reported_once(stack: Stack, orders: Any) -> None:
    put(orders, "old1", 1000)
    put(orders, "old2", 2000)
    save(stack.stub, db_poll_workflow("watch-orders"))
    assert reported(stack, "watch-orders") == []
    for i in range(5):  # several documents with the same timestamp
        put(orders, f"same{i}", 5000)
    put(orders, "old1", 6000, state="changed")
    assert reported(stack, "watch-orders") == ["same0", "same1", "same2", "same3", "same4", "old1"]
    assert reported(stack, "watch-orders") == []


def test_equal_timestamps_across_batches_are_neither_lost_nor_repeated(stack: Stack, orders: Any) -> None:
    save(stack.stub, db_poll_workflow("batches", batchSize=2))
    assert reported(stack, "batches") == []
    for i in range(5):
        put(orders, f"d{i}", 7000)
    got = reported(stack, "batches") + reported(stack, "batches") + reported(stack, "batches")
    assert got == ["d0", "d1", "d2", "d3", "d4"]
    assert reported(stack, "batches") == []


def test_failed_downstream_reports_the_same_changes_again(stack: Stack, orders: Any) -> None:
    failing = code("boom", "def main(input):\n    raise ValueError('downstream broke')")
    save(stack.stub, db_poll_workflow("fails", after=[failing]))
    assert reported(stack, "fails") == []
    put(orders, "a", 9000)
    assert reported(stack, "fails") == ["a"]
    assert reported(stack, "fails") == ["a"], "a failed run must not consume the change"


def test_a_run_that_parks_for_approval_commits_its_changes(stack: Stack, orders: Any) -> None:
    ask = node("ask", "core/wait-for-approval", reason="ok?")
    save(stack.stub, db_poll_workflow("parks", after=[ask]))
    assert reported(stack, "parks") == []
    put(orders, "p", 9000)
    assert reported(stack, "parks") == ["p"]
    assert reported(stack, "parks") == []


def test_two_workflows_on_one_collection_each_get_every_change(stack: Stack, orders: Any) -> None:
    save(stack.stub, db_poll_workflow("one"))
    save(stack.stub, db_poll_workflow("two"))
    assert reported(stack, "one") == [] and reported(stack, "two") == []
    put(orders, "x", 9500)
    assert reported(stack, "one") == ["x"]
    assert reported(stack, "two") == ["x"]


def test_changes_made_while_the_runner_was_down_are_reported(stack: Stack, orders: Any) -> None:
    save(stack.stub, db_poll_workflow("downtime"))
    assert reported(stack, "downtime") == []
    stack.procs[0].stop()
    put(orders, "while-down", 9900)
    _, stack.grpc_target = stack.start_runner()
    stack._channel = None
    assert reported(stack, "downtime") == ["while-down"]


def test_a_slow_run_in_flight_makes_the_next_poll_report_nothing_and_loses_nothing(stack: Stack, orders: Any) -> None:
    slow = code("slow", "def main(input):\n    n = 0\n    for i in range(6000000):\n        n += i\n    return input")
    save(stack.stub, db_poll_workflow("slow", after=[slow]))
    assert reported(stack, "slow") == []
    put(orders, "first", 10000)
    running = execute(stack.stub, "slow", {}, wait=False)
    end = time.monotonic() + 30
    while "poll" not in detail(stack.stub, running.execution_id).get("results", {}):
        assert time.monotonic() < end
        time.sleep(0.02)
    put(orders, "during", 10001)
    second = reported(stack, "slow")
    assert second == [], "a poll while another is in flight reports nothing"
    assert wait_status(stack.stub, running.execution_id, "completed")["results"]["poll"]["output"]["count"] == 1
    assert reported(stack, "slow") == ["during"]


def file_poll_workflow(wf_id: str, path: str, **config: Any) -> dict[str, Any]:
    return workflow(wf_id, [node("start", "triggers/manual"), node("poll", "triggers/file-watch", path=path, **config)])


def files_reported(stack: Stack, wf_id: str) -> dict[str, list[str]]:
    reply = execute(stack.stub, wf_id, {})
    assert STATUS[reply.status] == "completed", reply.error
    out = detail(stack.stub, reply.execution_id)["results"]["poll"]["output"]
    return {k: [e["name"] for e in out[k]] for k in ("added", "changed", "deleted")}


def test_file_watch_reports_new_changed_and_deleted_files_once(stack: Stack) -> None:
    inbox = stack.tmp / "data" / "files" / "inbox"
    inbox.mkdir()
    (inbox / "old.csv").write_text("a")
    (inbox / "keep.csv").write_text("k")
    (inbox / "ignored.txt").write_text("x")
    save(stack.stub, file_poll_workflow("files", "inbox", pattern="*.csv"))
    assert files_reported(stack, "files") == {"added": [], "changed": [], "deleted": []}
    (inbox / "new.csv").write_text("n")
    (inbox / "old.csv").write_text("a much longer content")
    (inbox / "keep.csv").unlink()
    (inbox / "other.txt").write_text("not matched")
    assert files_reported(stack, "files") == {"added": ["new.csv"], "changed": ["old.csv"], "deleted": ["keep.csv"]}
    assert files_reported(stack, "files") == {"added": [], "changed": [], "deleted": []}


def test_file_watch_outside_the_roots_fails_with_a_clear_error(stack: Stack) -> None:
    save(stack.stub, file_poll_workflow("escape", "/etc"))
    reply = execute(stack.stub, "escape", {})
    assert STATUS[reply.status] == "failed" and "/etc" in reply.error and "SMARTBOTIC_FS_ROOTS" in reply.error


def test_editing_a_node_script_changes_the_next_execution_within_2_s(stack: Stack, nodes_copy: Path) -> None:
    script = nodes_copy / "core" / "greet.py"
    script.write_text('"""Greet\n\n@description test\n"""\nCONFIG = {}\n\ndef execute(ctx):\n    return {"v": 1}\n')
    time.sleep(1.0)
    wf = workflow("greet", [node("start", "triggers/manual"), node("g", "core/greet")])
    assert json.loads(execute(stack.stub, wf, {}).output_json) == {"v": 1}
    script.write_text('"""Greet\n\n@description test\n"""\nCONFIG = {}\n\ndef execute(ctx):\n    return {"v": 2}\n')
    edited = time.monotonic()
    while json.loads(execute(stack.stub, wf, {}).output_json) != {"v": 2}:
        assert time.monotonic() - edited < 2.0, "the edit was not picked up within 2 s"
        time.sleep(0.05)
    # a broken edit keeps the previous version serving, and the catalog says why
    script.write_text('"""Greet\n\n@description test\n"""\ndef execute(ctx)\n    return 3\n')
    end = time.monotonic() + 2.0
    while True:
        types = {t.type: t for t in stack.stub.ListNodeTypes(pb.ListNodeTypesRequest(), timeout=10).node_types}
        if "line 5" in types["core/greet"].error:
            break
        assert time.monotonic() < end, types["core/greet"]
        time.sleep(0.05)
    assert json.loads(execute(stack.stub, wf, {}).output_json) == {"v": 2}


def test_watch_true_starts_the_workflow_when_a_file_appears(stack: Stack) -> None:
    drop = stack.tmp / "data" / "files" / "drop"
    drop.mkdir()
    save(stack.stub, file_poll_workflow("dropbox", "drop", watch=True, firstRun="reportAll"))
    time.sleep(1.5)  # the runner refreshes its watches every second
    target = drop / "hello.txt"
    target.write_text("hi")
    created_ms = os.stat(target).st_mtime_ns // 1_000_000
    end = time.monotonic() + 10
    while True:
        listed = stack.stub.ListExecutions(pb.ListExecutionsRequest(workflow_id="dropbox"), timeout=10).executions
        found = [json.loads(e.detail_json) for e in listed]
        if found:
            break
        assert time.monotonic() < end, "no execution started"
        time.sleep(0.05)
    first = min(found, key=lambda d: d["createdAt"])
    latency = first["createdAt"] - created_ms
    assert latency <= 2000, f"started {latency} ms after the file appeared"
    done = wait_status(stack.stub, first["executionId"], "completed")
    assert [e["name"] for e in done["results"]["poll"]["output"]["added"]] == ["hello.txt"]
