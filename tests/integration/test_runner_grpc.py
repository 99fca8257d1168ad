"""The runner as a real process, driven over real gRPC, storing in a real MongoDB server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import grpc
import pytest

from runner._proto import workflow_pb2 as pb
from tests.conftest import ROOT

from .conftest import Stack
from .helpers import STATUS, code, detail, execute, node, save, wait_status, workflow


def test_inline_workflow_runs_every_node_in_the_sandbox_and_is_stored(stack: Stack) -> None:
    wf = workflow(
        "hello",
        [
            node("start", "triggers/manual"),
            code("double", "def main(input):\n    return {'n': input['n'] * 2, 'pid_hidden': True}"),
            node("label", "core/set", values={"label": "n is {{steps.double.n}}"}),
        ],
    )
    reply = execute(stack.stub, wf, {"n": 21})
    assert STATUS[reply.status] == "completed", reply.error
    assert json.loads(reply.output_json) == {"n": 42, "pid_hidden": True, "label": "n is 42"}
    stored = detail(stack.stub, reply.execution_id)
    assert stored["status"] == "completed"
    assert [stored["results"][k]["status"] for k in ("start", "double", "label")] == ["completed"] * 3
    assert stored["results"]["double"]["output"] == {"n": 42, "pid_hidden": True}
    assert stored["workflowVersion"] == 0


def test_invalid_workflow_is_invalid_argument_listing_every_problem(stack: Stack) -> None:
    wf = workflow(
        "bad",
        [node("a", "core/nope"), node("a", "core/noop"), node("b", "core/set", values=3)],
        [{"from": "a", "to": "ghost"}],
    )
    with pytest.raises(grpc.RpcError) as info:
        execute(stack.stub, wf)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    message = info.value.details()
    for part in ("unknown node type 'core/nope'", "duplicate node id 'a'", "missing node 'ghost'", "values"):
        assert part in message


def test_unknown_ids_are_not_found(stack: Stack) -> None:
    for call in (
        lambda: execute(stack.stub, "no-such-workflow"),
        lambda: stack.stub.GetExecution(pb.GetExecutionRequest(execution_id="nope"), timeout=10),
        lambda: stack.stub.GetWorkflow(pb.GetWorkflowRequest(workflow_id="nope"), timeout=10),
    ):
        with pytest.raises(grpc.RpcError) as info:
            call()
        assert info.value.code() == grpc.StatusCode.NOT_FOUND
        assert "not found" in info.value.details()


def test_a_node_that_loops_forever_fails_only_itself(stack: Stack) -> None:
    wf = workflow(
        "spin", [node("start", "triggers/manual"), code("spin", "def main(input):\n    while True:\n        pass")]
    )
    wf["nodes"][1]["timeoutSeconds"] = 1
    reply = execute(stack.stub, wf, {})
    assert STATUS[reply.status] == "failed"
    assert reply.error_node_id == "spin"
    assert "time limit" in reply.error
    ok = execute(
        stack.stub, workflow("after", [node("start", "triggers/manual"), code("c", "def main(input):\n    return 7")])
    )
    assert STATUS[ok.status] == "completed" and json.loads(ok.output_json) == 7


def test_stored_workflow_runs_pinned_to_its_version(stack: Stack) -> None:
    wf = workflow("pinned", [node("start", "triggers/manual"), node("s", "core/set", values={"v": 1})])
    assert save(stack.stub, wf).version == 1
    first = execute(stack.stub, "pinned", {})
    wf["nodes"][1]["config"]["values"] = {"v": 2}
    assert save(stack.stub, wf, "v2").version == 2
    second = execute(stack.stub, "pinned", {})
    assert (first.workflow_version, json.loads(first.output_json)["v"]) == (1, 1)
    assert (second.workflow_version, json.loads(second.output_json)["v"]) == (2, 2)
    assert detail(stack.stub, first.execution_id)["workflowVersion"] == 1


def test_queued_execution_is_claimed_and_completed(stack: Stack) -> None:
    wf = workflow(
        "queued", [node("start", "triggers/manual"), code("c", "def main(input):\n    return {'got': input}")]
    )
    reply = execute(stack.stub, wf, {"x": 1}, wait=False)
    assert STATUS[reply.status] == "pending"
    done = wait_status(stack.stub, reply.execution_id, "completed", "failed")
    assert done["status"] == "completed" and done["output"] == {"got": {"x": 1}}


@pytest.fixture
def nodes_copy(tmp_path: Path) -> Path:
    target = tmp_path / "nodes"
    shutil.copytree(ROOT / "nodes", target)
    (target / "core" / "broken.py").write_text(
        '"""Broken\n\n@description broken\n"""\ndef execute(ctx)\n    return 1\n'
    )
    return target


@pytest.fixture
def stack_env(nodes_copy: Path) -> dict[str, str]:
    return {"SMARTBOTIC_NODES_DIR": str(nodes_copy)}


def test_a_broken_node_script_is_reported_with_file_and_line_and_the_runner_serves(stack: Stack) -> None:
    types = {t.type: t for t in stack.stub.ListNodeTypes(pb.ListNodeTypesRequest(), timeout=10).node_types}
    assert "nodes/core/broken.py" in types["core/broken"].error and "line 5" in types["core/broken"].error
    assert types["core/set"].error == ""
    with pytest.raises(grpc.RpcError) as info:
        execute(stack.stub, workflow("uses-broken", [node("start", "triggers/manual"), node("b", "core/broken")]))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "broken" in info.value.details()
    ok = execute(
        stack.stub, workflow("fine", [node("start", "triggers/manual"), node("s", "core/set", values={"a": 1})]), {}
    )
    assert STATUS[ok.status] == "completed"
