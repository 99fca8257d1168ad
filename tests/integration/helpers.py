"""Small helpers for integration tests: workflow JSON builders and gRPC calls."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from runner._proto import workflow_pb2 as pb
from runner._proto import workflow_pb2_grpc
from runner.convert import PB_TO_STATUS

STATUS = PB_TO_STATUS


def node(node_id: str, type_: str, **config: Any) -> dict[str, Any]:
    return {"id": node_id, "type": type_, "config": config}


def code(node_id: str, body: str) -> dict[str, Any]:
    return node(node_id, "core/code", code=body)


def chain(*ids: str) -> list[dict[str, str]]:
    return [{"from": a, "to": b} for a, b in itertools.pairwise(ids)]


def workflow(
    wf_id: str, nodes: list[dict[str, Any]], connections: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    return {
        "id": wf_id,
        "name": wf_id.replace("-", " "),
        "nodes": nodes,
        "connections": connections if connections is not None else chain(*[n["id"] for n in nodes]),
        **extra,
    }


def execute(
    stub: workflow_pb2_grpc.RunnerServiceStub,
    wf: dict[str, Any] | str,
    input_: Any = None,
    *,
    wait: bool = True,
    timeout_ms: int = 30000,
) -> pb.ExecutionReply:
    req = pb.ExecuteWorkflowRequest(input_json=json.dumps(input_), wait_for_completion=wait, timeout_ms=timeout_ms)
    if isinstance(wf, str):
        req.workflow_id = wf
    else:
        req.workflow_json = json.dumps(wf)
    return stub.ExecuteWorkflow(req, timeout=60)


def save(stub: workflow_pb2_grpc.RunnerServiceStub, wf: dict[str, Any], note: str = "") -> pb.Workflow:
    return stub.SaveWorkflow(pb.SaveWorkflowRequest(workflow_json=json.dumps(wf), change_note=note), timeout=30)


def detail(stub: workflow_pb2_grpc.RunnerServiceStub, execution_id: str) -> dict[str, Any]:
    got = stub.GetExecution(pb.GetExecutionRequest(execution_id=execution_id), timeout=30)
    return dict(json.loads(got.detail_json))


def wait_status(
    stub: workflow_pb2_grpc.RunnerServiceStub, execution_id: str, *statuses: str, seconds: float = 30
) -> dict[str, Any]:
    end = time.monotonic() + seconds
    while True:
        d = detail(stub, execution_id)
        if d["status"] in statuses:
            return d
        if time.monotonic() > end:
            raise AssertionError(f"execution {execution_id} is {d['status']}, expected {statuses}: {d}")
        time.sleep(0.05)
