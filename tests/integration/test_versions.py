"""Workflow versions (issue 8): full history, diffs, revert, toggles, pinned runs, archived
workflows, built-ins, migrate. Over real HTTP to a real webserver and runner."""

from __future__ import annotations

from typing import Any

import pytest
from pymongo import MongoClient

from .conftest import Stack
from .helpers import code, node, wait_status, workflow


@pytest.fixture
def stack_env() -> dict[str, str]:
    return {"SMARTBOTIC_SEED_EXAMPLES": "1"}


def hook_flow(wf_id: str, path: str, value: Any) -> dict[str, Any]:
    return workflow(
        wf_id,
        [
            node("hook", "triggers/webhook", path=path, method="POST"),
            node("reply", "core/respond-to-webhook", status=200, body={"value": value}),
        ],
    )


def versions(stack: Stack, wf_id: str) -> list[dict[str, Any]]:
    status, _, page = stack.http("GET", f"/api/v1/workflows/{wf_id}/versions")
    assert status == 200
    return list(page["items"])


def test_edit_makes_version_n_plus_1_with_the_right_diff(stack: Stack) -> None:
    status, _, created = stack.http("POST", "/api/v1/workflows", {**hook_flow("v", "v-hook", 1), "changeNote": "v1"})
    assert status == 201 and created["version"] == 1
    edited = {**created, "changeNote": "bump"}
    edited["nodes"][1]["config"]["body"] = {"value": 2}
    status, _, updated = stack.http("PUT", "/api/v1/workflows/v", edited)
    assert status == 200 and updated["version"] == 2
    status, _, v2 = stack.http("GET", "/api/v1/workflows/v/versions/2")
    assert status == 200 and v2["changeNote"] == "bump"
    assert v2["diff"] == [{"op": "replace", "path": "/nodes/1/config/body/value", "value": 2}]
    status, _, v1 = stack.http("GET", "/api/v1/workflows/v/versions/1")
    assert v1["workflow"]["nodes"][1]["config"]["body"] == {"value": 1}
    assert [v["version"] for v in versions(stack, "v")] == [2, 1]
    status, _, body = stack.http("GET", "/api/v1/workflows/v/versions/9")
    assert status == 404 and "version 9" in body["error"]


def test_revert_of_v1_publishes_v3_equal_to_v1(stack: Stack) -> None:
    stack.http("POST", "/api/v1/workflows", hook_flow("r", "r-hook", 1))
    _, _, current = stack.http("GET", "/api/v1/workflows/r")
    current["nodes"][1]["config"]["body"] = {"value": 2}
    stack.http("PUT", "/api/v1/workflows/r", current)
    status, _, reverted = stack.http("POST", "/api/v1/workflows/r/versions/1/revert", {})
    assert status == 200 and reverted["version"] == 3
    _, _, v1 = stack.http("GET", "/api/v1/workflows/r/versions/1")
    _, _, v3 = stack.http("GET", "/api/v1/workflows/r/versions/3")
    assert v3["workflow"] == v1["workflow"]
    assert len(versions(stack, "r")) == 3  # history is append-only
    status, _, reply = stack.http("POST", "/webhook/r-hook", {})
    assert (status, reply) == (200, {"value": 1})


def test_activation_toggles_and_identical_saves_make_no_version(stack: Stack) -> None:
    stack.http("POST", "/api/v1/workflows", hook_flow("t", "t-hook", 1))
    stack.http("POST", "/api/v1/workflows/t/deactivate")
    stack.http("POST", "/api/v1/workflows/t/activate")
    _, _, current = stack.http("GET", "/api/v1/workflows/t")
    status, _, same = stack.http("PUT", "/api/v1/workflows/t", current)
    assert status == 200 and same["version"] == 1
    status, _, off = stack.http("PUT", "/api/v1/workflows/t", {**current, "active": False})
    assert status == 200 and off["version"] == 1 and off["active"] is False
    assert len(versions(stack, "t")) == 1


def test_a_run_started_on_v1_finishes_on_v1_though_v2_was_published_mid_run(stack: Stack) -> None:
    slow = code(
        "slow", "def main(input):\n    n = 0\n    for i in range(4000000):\n        n += i\n    return {'v': 1}"
    )
    wf = workflow("mid", [node("start", "triggers/manual"), slow, node("tag", "core/set", values={"tag": "one"})])
    stack.http("POST", "/api/v1/workflows", wf)
    status, _, run = stack.http("POST", "/api/v1/workflows/mid/run?wait=false", {})
    assert status == 202
    wait_status(stack.stub, run["executionId"], "running")
    wf["nodes"][2]["config"]["values"] = {"tag": "two"}
    status, _, v2 = stack.http("PUT", "/api/v1/workflows/mid", wf)
    assert v2["version"] == 2
    final = wait_status(stack.stub, run["executionId"], "completed")
    assert final["workflowVersion"] == 1 and final["output"]["tag"] == "one"
    status, _, second = stack.http("POST", "/api/v1/workflows/mid/run", {})
    assert second["workflowVersion"] == 2 and second["output"]["tag"] == "two"


def test_webhooks_follow_the_active_version_and_archived_workflows_stop(stack: Stack) -> None:
    stack.http("POST", "/api/v1/workflows", hook_flow("a", "a-hook", 1))
    assert stack.http("POST", "/webhook/a-hook", {})[2] == {"value": 1}
    _, _, current = stack.http("GET", "/api/v1/workflows/a")
    current["nodes"][1]["config"]["body"] = {"value": 2}
    stack.http("PUT", "/api/v1/workflows/a", current)
    assert stack.http("POST", "/webhook/a-hook", {})[2] == {"value": 2}
    status, _, ran = stack.http("GET", "/api/v1/executions?workflowId=a")
    assert len(ran["items"]) == 2
    status, _, _ = stack.http("DELETE", "/api/v1/workflows/a")
    assert status == 200
    status, _, body = stack.http("POST", "/webhook/a-hook", {})
    assert status == 404
    status, _, body = stack.http("POST", "/api/v1/workflows/a/run", {})
    assert status == 409 and "archived" in body["error"]
    # history and executions stay readable
    assert len(versions(stack, "a")) == 2
    status, _, ran = stack.http("GET", "/api/v1/executions?workflowId=a")
    assert status == 200 and len(ran["items"]) == 2
    status, _, body = stack.http("POST", "/api/v1/workflows/a/activate")
    assert status == 409 and "archived" in body["error"]


def test_builtins_are_seeded_come_back_when_deleted_and_keep_their_slug(stack: Stack) -> None:
    status, _, page = stack.http("GET", "/api/v1/workflows")
    ids = {w["id"] for w in page["items"]}
    assert {"hello-webhook", "refund-approval", "nightly-report", "inbox-file-watch", "orders-database-change"} <= ids
    status, _, hello = stack.http("POST", "/webhook/hello", {"name": "Ada"})
    assert status == 201 and hello["message"] == "hello Ada"
    _, _, current = stack.http("GET", "/api/v1/workflows/hello-webhook")
    assert current["builtin"] == "hello-webhook"
    status, _, body = stack.http("PUT", "/api/v1/workflows/hello-webhook", {**current, "id": "renamed"})
    assert status == 400 and "id" in body["error"]
    edited = {**current, "name": "My hello"}
    status, _, body = stack.http("PUT", "/api/v1/workflows/hello-webhook", edited)
    assert status == 200 and body["version"] == 2
    status, _, reset = stack.http("POST", "/api/v1/workflows/hello-webhook/reset-builtin")
    assert status == 200 and reset["version"] == 3 and reset["name"] == "Hello webhook (custom response)"
    # deleted from the database: a runner starting up seeds it again
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri)
    client[stack.db_name]["workflows"].delete_one({"_id": "refund-approval"})
    client[stack.db_name]["workflow_versions"].delete_many({"workflowId": "refund-approval"})
    client.close()
    assert stack.http("GET", "/api/v1/workflows/refund-approval")[0] == 404
    stack.start_runner()
    status, _, back = stack.http("GET", "/api/v1/workflows/refund-approval")
    assert status == 200 and back["builtin"] == "refund-approval" and back["version"] == 1
    status, _, body = stack.http("POST", "/api/v1/workflows/v/reset-builtin")
    assert status == 404


def test_migrate_repins_a_waiting_execution_or_says_why_not(stack: Stack) -> None:
    wf = workflow(
        "mig",
        [
            node("start", "triggers/manual"),
            node("ask", "core/wait-for-approval"),
            node("after", "core/set", values={"from": "v1"}),
        ],
        [{"from": "start", "to": "ask"}, {"from": "ask", "output": "approved", "to": "after"}],
    )
    stack.http("POST", "/api/v1/workflows", wf)
    _, _, run = stack.http("POST", "/api/v1/workflows/mig/run", {})
    _, _, other = stack.http("POST", "/api/v1/workflows/mig/run", {})
    wf["nodes"][2]["config"]["values"] = {"from": "v2"}
    stack.http("PUT", "/api/v1/workflows/mig", wf)
    status, _, migrated = stack.http("POST", f"/api/v1/executions/{run['executionId']}/migrate")
    assert status == 200 and migrated["workflowVersion"] == 2
    status, _, done = stack.http(
        "POST", f"/api/v1/executions/{run['executionId']}/resume", {"token": run["pause"]["token"], "approved": True}
    )
    assert status == 200 and done["output"]["from"] == "v2"
    # v3 removes the paused node: migrating the other execution is refused, naming the reason
    wf["nodes"][1] = node("ask2", "core/wait-for-approval")
    wf["connections"] = [{"from": "start", "to": "ask2"}, {"from": "ask2", "output": "approved", "to": "after"}]
    stack.http("PUT", "/api/v1/workflows/mig", wf)
    status, _, body = stack.http("POST", f"/api/v1/executions/{other['executionId']}/migrate")
    assert status == 409 and "'ask'" in body["error"]
    status, _, body = stack.http("POST", f"/api/v1/executions/{run['executionId']}/migrate")
    assert status == 409 and "completed" in body["error"]
