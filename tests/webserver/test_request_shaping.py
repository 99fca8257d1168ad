"""What the webserver sends the runner, and how runner errors come back — over real gRPC.

The runner here is a small recording servicer on a real ``grpc.aio`` server: it pins the
request fields and error metadata of the contract without depending on the runner's progress.
The same behaviours are checked against the real runner in the ``*_live`` tests.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import grpc.aio
import pytest

from runner._proto import workflow_pb2 as pb
from runner._proto import workflow_pb2_grpc
from tests.webserver.conftest import AppClient


class RecordingRunner(workflow_pb2_grpc.RunnerServiceServicer):
    def __init__(self) -> None:
        self.requests: list[Any] = []

    async def TriggerWebhook(self, request: pb.TriggerWebhookRequest, context: Any) -> pb.ExecutionReply:
        self.requests.append(request)
        if request.path == "expired":
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "the approval expired at 2030-01-01T00:00:00Z",
                trailing_metadata=(("smartbotic-error", "pause_expired"),),
            )
        if request.path == "post-only":
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "/webhook/post-only does not accept GET; it accepts POST, PUT",
                trailing_metadata=(("smartbotic-error", "method_not_allowed"), ("smartbotic-allow", "POST, PUT")),
            )
        return pb.ExecutionReply(execution_id="e1", status=pb.EXECUTION_STATUS_COMPLETED, output_json='{"ok": 1}')

    async def SaveWorkflow(self, request: pb.SaveWorkflowRequest, context: Any) -> pb.Workflow:
        self.requests.append(request)
        return pb.Workflow(workflow_id="w", version=1, workflow_json=request.workflow_json)

    async def ResumeExecution(self, request: pb.ResumeExecutionRequest, context: Any) -> pb.ExecutionReply:
        self.requests.append(request)
        return pb.ExecutionReply(execution_id=request.execution_id, status=pb.EXECUTION_STATUS_COMPLETED)

    async def ExecuteWorkflow(self, request: pb.ExecuteWorkflowRequest, context: Any) -> pb.ExecutionReply:
        self.requests.append(request)
        status = pb.EXECUTION_STATUS_COMPLETED if request.wait_for_completion else pb.EXECUTION_STATUS_PENDING
        return pb.ExecutionReply(execution_id="e2", status=status)

    async def ListExecutions(self, request: pb.ListExecutionsRequest, context: Any) -> pb.ListExecutionsResponse:
        self.requests.append(request)
        pause = pb.Pause(node_id="ask", token="never-show-me", reason="ok?", fields_json="{}", expires_at_ms=5)
        execution = pb.Execution(execution_id="e3", status=pb.EXECUTION_STATUS_WAITING, pause=pause, detail_json="")
        return pb.ListExecutionsResponse(executions=[execution], next_page_token="p2")


@pytest.fixture
async def runner() -> AsyncIterator[tuple[RecordingRunner, grpc.aio.Channel]]:
    servicer = RecordingRunner()
    server = grpc.aio.server()
    add_servicer: Any = workflow_pb2_grpc.add_RunnerServiceServicer_to_server
    add_servicer(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield servicer, channel
    finally:
        await channel.close()
        await server.stop(None)


Runner = tuple[RecordingRunner, grpc.aio.Channel]


async def test_webhook_request_carries_method_path_headers_query_body_and_timeout(
    app_client: AppClient, runner: Runner
) -> None:
    servicer, channel = runner
    async with app_client(channel, webhook_timeout_seconds=7.5) as client:
        resp = await client.put(
            "/webhook/orders/eu/?a=1&a=2&b=x", json={"n": 1}, headers={"X-Trace": "t", "x-multi": "1"}
        )
        assert resp.status == 200
        assert await resp.json() == {"ok": 1}
    sent = servicer.requests[-1]
    assert (sent.method, sent.path, sent.timeout_ms) == ("PUT", "orders/eu", 7500)
    assert json.loads(sent.body_json) == {"n": 1}
    assert json.loads(sent.query_json) == {"a": ["1", "2"], "b": "x"}
    headers = json.loads(sent.headers_json)
    assert headers["x-trace"] == "t"
    assert headers["content-type"] == "application/json"


async def test_webhook_text_body_travels_as_a_json_string(app_client: AppClient, runner: Runner) -> None:
    servicer, channel = runner
    async with app_client(channel) as client:
        await client.post("/webhook/t", data="a=1&b=2", headers={"Content-Type": "application/x-www-form-urlencoded"})
        await client.get("/webhook/t")
    assert json.loads(servicer.requests[-2].body_json) == "a=1&b=2"
    assert json.loads(servicer.requests[-1].body_json) is None


async def test_pause_expired_metadata_is_410(app_client: AppClient, runner: Runner) -> None:
    _, channel = runner
    async with app_client(channel) as client:
        resp = await client.post("/webhook/expired", json={})
        assert resp.status == 410
        assert await resp.json() == {"error": "the approval expired at 2030-01-01T00:00:00Z"}


async def test_method_not_allowed_metadata_is_405_with_allow(app_client: AppClient, runner: Runner) -> None:
    _, channel = runner
    async with app_client(channel) as client:
        resp = await client.get("/webhook/post-only")
        assert resp.status == 405
        assert resp.headers["Allow"] == "POST, PUT"


async def test_unimplemented_rpc_is_501(app_client: AppClient, runner: Runner) -> None:
    _, channel = runner
    async with app_client(channel) as client:
        resp = await client.get("/api/v1/nodes")
        assert resp.status == 501
        assert set(await resp.json()) == {"error"}


async def test_create_takes_change_note_out_and_names_the_key_holder(app_client: AppClient, runner: Runner) -> None:
    servicer, channel = runner
    auth = {"Authorization": "Bearer key-of-carol-1"}
    async with app_client(channel, api_keys={"key-of-carol-1": "carol"}) as client:
        resp = await client.post("/api/v1/workflows", json={"id": "w", "changeNote": "first"}, headers=auth)
        assert resp.status == 201
        assert await resp.json() == {"id": "w"}
        resp = await client.put("/api/v1/workflows/w", json={"id": "other", "name": "n"}, headers=auth)
        assert resp.status == 200
    created, updated = servicer.requests[-2:]
    assert (created.mode, created.change_note, created.saved_by) == (pb.SAVE_MODE_CREATE, "first", "carol")
    assert json.loads(created.workflow_json) == {"id": "w"}
    assert (updated.mode, updated.workflow_id, updated.change_note) == (pb.SAVE_MODE_UPDATE, "w", "")


async def test_resume_sends_the_body_minus_token_and_who_answered(app_client: AppClient, runner: Runner) -> None:
    servicer, channel = runner
    async with app_client(channel, api_keys={"key-of-dave-1": "dave"}) as client:
        body = {"token": "tok", "approved": True, "data": {"x": 1}}
        resp = await client.post("/api/v1/executions/e9/resume", json=body)
        assert resp.status == 200
        resp = await client.post(
            "/api/v1/executions/e9/resume", json=body, headers={"Authorization": "Bearer key-of-dave-1"}
        )
        resp = await client.post("/api/v1/executions/e9/resume", json={**body, "by": "erin"})
    anonymous, keyed, named = servicer.requests[-3:]
    assert (anonymous.execution_id, anonymous.token, anonymous.resumed_by) == ("e9", "tok", "")
    assert json.loads(anonymous.payload_json) == {"approved": True, "data": {"x": 1}}
    assert anonymous.wait_for_completion
    assert keyed.resumed_by == "dave"
    assert named.resumed_by == "erin"


async def test_run_waits_unless_told_not_to(app_client: AppClient, runner: Runner) -> None:
    servicer, channel = runner
    async with app_client(channel) as client:
        resp = await client.post("/api/v1/workflows/w/run?timeout=2", json={"in": 1})
        assert resp.status == 200
        assert (await resp.json())["status"] == "completed"
        resp = await client.post("/api/v1/workflows/w/run?wait=false")
        assert resp.status == 202
        assert (await resp.json())["status"] == "pending"
    waited, queued = servicer.requests[-2:]
    assert (waited.workflow_id, waited.wait_for_completion, waited.timeout_ms) == ("w", True, 2000)
    assert json.loads(waited.input_json) == {"in": 1}
    assert (queued.wait_for_completion, json.loads(queued.input_json)) == (False, None)


async def test_pending_lists_waiting_executions_without_tokens(app_client: AppClient, runner: Runner) -> None:
    servicer, channel = runner
    async with app_client(channel) as client:
        resp = await client.get("/api/v1/executions/pending?workflowId=w&pageSize=5")
        text = await resp.text()
        assert resp.status == 200
    assert "never-show-me" not in text
    body = json.loads(text)
    assert body["nextPageToken"] == "p2"
    assert body["items"][0]["nodeId"] == "ask"
    sent = servicer.requests[-1]
    assert (sent.status, sent.workflow_id, sent.page_size) == (pb.EXECUTION_STATUS_WAITING, "w", 5)


async def test_status_filter_reaches_the_runner(app_client: AppClient, runner: Runner) -> None:
    servicer, channel = runner
    async with app_client(channel) as client:
        resp = await client.get("/api/v1/executions?status=Failed&pageToken=abc")
        assert resp.status == 200
    sent = servicer.requests[-1]
    assert (sent.status, sent.page_token) == (pb.EXECUTION_STATUS_FAILED, "abc")
