"""``/api/v1`` executions, runs, resumes, events and the node catalog (DESIGN §6, §7, §10)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aiohttp import web

from runner._proto import workflow_pb2 as pb
from webserver.bodies import (
    json_type,
    optional_string,
    query_bool,
    query_int,
    query_seconds,
    read_json,
    read_json_object,
)
from webserver.context import DEFAULT_RPC_TIMEOUT_S, RPC_MARGIN_S, api_key_name, settings_of, stub_of
from webserver.convert import dumps, execution_json, node_type_json, page, pending_json, reply_json, status_from_name
from webserver.errors import ApiError

UNFINISHED = (pb.EXECUTION_STATUS_PENDING, pb.EXECUTION_STATUS_RUNNING)


def _reply_response(reply: pb.ExecutionReply) -> web.Response:
    """200 with the reply; 202 while the run is queued or still going (it goes on)."""
    return web.json_response(reply_json(reply), status=202 if reply.status in UNFINISHED else 200)


def _wait_timeout(request: web.Request) -> float:
    return query_seconds(request, "timeout", settings_of(request).webhook_timeout_seconds)


async def run_workflow(request: web.Request) -> web.StreamResponse:
    body = await read_json(request)
    wait = query_bool(request, "wait", True)
    timeout_s = _wait_timeout(request)
    call = pb.ExecuteWorkflowRequest(
        workflow_id=request.match_info["id"],
        input_json=dumps(body),
        wait_for_completion=wait,
        timeout_ms=int(timeout_s * 1000) if wait else 0,
        trigger_node_id=request.query.get("triggerNodeId", ""),
    )
    deadline = timeout_s + RPC_MARGIN_S if wait else DEFAULT_RPC_TIMEOUT_S
    reply: pb.ExecutionReply = await stub_of(request).ExecuteWorkflow(call, timeout=deadline)
    return _reply_response(reply)


async def list_executions(request: web.Request) -> web.StreamResponse:
    status = request.query.get("status", "")
    wanted = status_from_name(status) if status else pb.EXECUTION_STATUS_UNSPECIFIED
    return await _page_of_executions(request, wanted, execution_json)


async def list_pending(request: web.Request) -> web.StreamResponse:
    return await _page_of_executions(request, pb.EXECUTION_STATUS_WAITING, pending_json)


async def _page_of_executions(
    request: web.Request, status: pb.ExecutionStatus, render: Callable[[pb.Execution], dict[str, Any]]
) -> web.StreamResponse:
    call = pb.ListExecutionsRequest(
        status=status,
        workflow_id=request.query.get("workflowId", ""),
        page_size=query_int(request, "pageSize"),
        page_token=request.query.get("pageToken", ""),
    )
    reply: pb.ListExecutionsResponse = await stub_of(request).ListExecutions(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return web.json_response(page([render(e) for e in reply.executions], reply.next_page_token))


async def get_execution(request: web.Request) -> web.StreamResponse:
    call = pb.GetExecutionRequest(execution_id=request.match_info["id"])
    found: pb.Execution = await stub_of(request).GetExecution(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return web.json_response(execution_json(found))


async def cancel_execution(request: web.Request) -> web.StreamResponse:
    body = await read_json_object(request, required=False)
    call = pb.CancelExecutionRequest(
        execution_id=request.match_info["id"],
        reason=optional_string(body, "reason"),
        cancelled_by=api_key_name(request),
    )
    cancelled: pb.Execution = await stub_of(request).CancelExecution(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return web.json_response(execution_json(cancelled))


async def migrate_execution(request: web.Request) -> web.StreamResponse:
    call = pb.MigrateExecutionRequest(execution_id=request.match_info["id"])
    migrated: pb.Execution = await stub_of(request).MigrateExecution(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return web.json_response(execution_json(migrated))


async def resume_execution(request: web.Request) -> web.StreamResponse:
    """Authorised by the pause's token; an API key, when given, names who answered."""
    body = await read_json_object(request)
    token = body.pop("token", None)
    if not isinstance(token, str) or not token:
        raise ApiError(400, "'token' is required: the token from the pause (a non-empty string)")
    timeout_s = _wait_timeout(request)
    call = pb.ResumeExecutionRequest(
        execution_id=request.match_info["id"],
        token=token,
        payload_json=dumps(body),
        resumed_by=optional_string(body, "by") or api_key_name(request),
        wait_for_completion=True,
        timeout_ms=int(timeout_s * 1000),
    )
    reply: pb.ExecutionReply = await stub_of(request).ResumeExecution(call, timeout=timeout_s + RPC_MARGIN_S)
    return _reply_response(reply)


async def send_event(request: web.Request) -> web.StreamResponse:
    body = await read_json_object(request)
    event_type = body.get("type")
    if not isinstance(event_type, str) or not event_type:
        raise ApiError(400, f"'type' must be a non-empty string, not {json_type(event_type)}")
    call = pb.SendEventRequest(type=event_type, key=optional_string(body, "key"), data_json=dumps(body.get("data")))
    reply: pb.SendEventResponse = await stub_of(request).SendEvent(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return web.json_response({"resumedExecutionIds": list(reply.resumed_execution_ids)})


async def list_node_types(request: web.Request) -> web.StreamResponse:
    reply: pb.ListNodeTypesResponse = await stub_of(request).ListNodeTypes(
        pb.ListNodeTypesRequest(), timeout=DEFAULT_RPC_TIMEOUT_S
    )
    return web.json_response({"items": [node_type_json(n) for n in reply.node_types]})
