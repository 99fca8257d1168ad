"""``/api/v1/workflows``: thin calls to the runner's workflow RPCs (DESIGN §10)."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from runner._proto import workflow_pb2 as pb
from webserver.bodies import optional_string, path_int, query_bool, query_int, read_json_object
from webserver.context import DEFAULT_RPC_TIMEOUT_S, api_key_name, stub_of
from webserver.convert import dumps, loads, page, version_json


def _workflow(message: pb.Workflow, status: int = 200) -> web.Response:
    return web.json_response(loads(message.workflow_json), status=status)


async def _definition(request: web.Request) -> tuple[str, str]:
    """The body as a workflow definition, with ``changeNote`` taken out: (workflow_json, change_note)."""
    body = await read_json_object(request)
    note = optional_string(body, "changeNote")
    body.pop("changeNote", None)
    return dumps(body), note


async def create_workflow(request: web.Request) -> web.StreamResponse:
    workflow_json, note = await _definition(request)
    call = pb.SaveWorkflowRequest(
        workflow_json=workflow_json, change_note=note, saved_by=api_key_name(request), mode=pb.SAVE_MODE_CREATE
    )
    saved: pb.Workflow = await stub_of(request).SaveWorkflow(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return _workflow(saved, 201)


async def update_workflow(request: web.Request) -> web.StreamResponse:
    workflow_json, note = await _definition(request)
    call = pb.SaveWorkflowRequest(
        workflow_json=workflow_json,
        change_note=note,
        saved_by=api_key_name(request),
        mode=pb.SAVE_MODE_UPDATE,
        workflow_id=request.match_info["id"],
    )
    saved: pb.Workflow = await stub_of(request).SaveWorkflow(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return _workflow(saved)


async def list_workflows(request: web.Request) -> web.StreamResponse:
    call = pb.ListWorkflowsRequest(
        include_archived=query_bool(request, "includeArchived", False),
        page_size=query_int(request, "pageSize"),
        page_token=request.query.get("pageToken", ""),
    )
    reply: pb.ListWorkflowsResponse = await stub_of(request).ListWorkflows(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return web.json_response(page([loads(w.workflow_json) for w in reply.workflows], reply.next_page_token))


async def get_workflow(request: web.Request) -> web.StreamResponse:
    call = pb.GetWorkflowRequest(workflow_id=request.match_info["id"])
    found: pb.Workflow = await stub_of(request).GetWorkflow(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return _workflow(found)


async def archive_workflow(request: web.Request) -> web.StreamResponse:
    call = pb.ArchiveWorkflowRequest(workflow_id=request.match_info["id"], archived_by=api_key_name(request))
    archived: pb.Workflow = await stub_of(request).ArchiveWorkflow(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return _workflow(archived)


async def _set_active(request: web.Request, active: bool) -> web.StreamResponse:
    call = pb.SetWorkflowActiveRequest(workflow_id=request.match_info["id"], active=active)
    changed: pb.Workflow = await stub_of(request).SetWorkflowActive(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return _workflow(changed)


async def activate_workflow(request: web.Request) -> web.StreamResponse:
    return await _set_active(request, True)


async def deactivate_workflow(request: web.Request) -> web.StreamResponse:
    return await _set_active(request, False)


async def list_versions(request: web.Request) -> web.StreamResponse:
    call = pb.ListWorkflowVersionsRequest(
        workflow_id=request.match_info["id"],
        page_size=query_int(request, "pageSize"),
        page_token=request.query.get("pageToken", ""),
    )
    reply: pb.ListWorkflowVersionsResponse = await stub_of(request).ListWorkflowVersions(
        call, timeout=DEFAULT_RPC_TIMEOUT_S
    )
    items = [version_json(v, with_snapshot=False) for v in reply.versions]
    return web.json_response(page(items, reply.next_page_token))


async def get_version(request: web.Request) -> web.StreamResponse:
    call = pb.GetWorkflowVersionRequest(workflow_id=request.match_info["id"], version=path_int(request, "version"))
    found: pb.WorkflowVersion = await stub_of(request).GetWorkflowVersion(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return web.json_response(version_json(found, with_snapshot=True))


async def revert_workflow(request: web.Request) -> web.StreamResponse:
    version = path_int(request, "version")
    body: dict[str, Any] = await read_json_object(request, required=False)
    call = pb.RevertWorkflowRequest(
        workflow_id=request.match_info["id"],
        version=version,
        saved_by=api_key_name(request),
        change_note=optional_string(body, "changeNote"),
    )
    reverted: pb.Workflow = await stub_of(request).RevertWorkflow(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return _workflow(reverted)


async def reset_builtin(request: web.Request) -> web.StreamResponse:
    call = pb.ResetBuiltinRequest(workflow_id=request.match_info["id"], reset_by=api_key_name(request))
    reset: pb.Workflow = await stub_of(request).ResetBuiltinWorkflow(call, timeout=DEFAULT_RPC_TIMEOUT_S)
    return _workflow(reset)
