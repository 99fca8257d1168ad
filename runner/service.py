"""The gRPC RunnerService: converts messages, calls the runtime, maps errors to status codes."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from . import convert
from ._proto import workflow_pb2 as pb
from ._proto import workflow_pb2_grpc as pb_grpc
from .convert import dumps, loads
from .engine.model import JSON, WorkflowInvalid
from .errors import ServiceError, conflict, invalid, not_found
from .events import send_event
from .resume import resume_with_token, spent_record
from .runtime import RunHandle, Runtime, now_ms
from .workflows import Workflows

log = logging.getLogger(__name__)
Req = TypeVar("Req")
Resp = TypeVar("Resp")
Handler = Callable[[Any, Req, grpc.aio.ServicerContext], Awaitable[Resp]]

SAVE_MODES = {pb.SAVE_MODE_UPSERT: "upsert", pb.SAVE_MODE_CREATE: "create", pb.SAVE_MODE_UPDATE: "update"}
CANCELLABLE = ("pending", "running", "waiting")


def rpc(method: Handler[Req, Resp]) -> Handler[Req, Resp]:
    """Every failure becomes a status code with a message a person can act on; no tracebacks."""

    @functools.wraps(method)
    async def wrapper(self: Any, request: Req, context: grpc.aio.ServicerContext) -> Resp:
        try:
            return await method(self, request, context)
        except ServiceError as err:
            meta = [("smartbotic-error", err.reason)] if err.reason else []
            if err.allow:
                meta.append(("smartbotic-allow", err.allow))
            await context.abort(err.code, err.message, trailing_metadata=tuple(meta))
        except WorkflowInvalid as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        except ValueError as err:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        except grpc.aio.AbortError:
            raise
        except Exception as err:
            log.exception("%s failed", method.__name__)
            await context.abort(grpc.StatusCode.INTERNAL, f"internal error ({type(err).__name__}); see the runner log")
        raise AssertionError("unreachable")

    return wrapper


def _page_size(requested: int, default: int = 50, maximum: int = 500) -> int:
    if requested < 0:
        raise invalid("page_size must not be negative")
    return min(requested or default, maximum)


class RunnerService(pb_grpc.RunnerServiceServicer):  # type: ignore[misc]
    def __init__(self, runtime: Runtime, workflows: Workflows) -> None:
        self.runtime = runtime
        self.workflows = workflows

    # -- running ----------------------------------------------------------------------------------

    async def _reply(
        self, handle: RunHandle, *, wait: bool, timeout_ms: int, until_response: bool = False
    ) -> pb.ExecutionReply:
        if wait:
            timeout = timeout_ms / 1000 if timeout_ms > 0 else 3600.0
            await self.runtime.wait(handle, timeout, until_response=until_response)
        return convert.reply_from_state(handle.state, handle.token)

    async def _definition(self, request: pb.ExecuteWorkflowRequest) -> tuple[dict[str, JSON], int]:
        if request.workflow_id:
            doc = await self.workflows.get(request.workflow_id)
            if doc.get("archived"):
                raise conflict(f"workflow {request.workflow_id!r} is archived; restore it before running it")
            return doc["definition"], int(doc["version"])
        if request.workflow_json:
            definition = loads(request.workflow_json, "workflow_json")
            if not isinstance(definition, dict):
                raise invalid("workflow_json must be a JSON object")
            self.workflows.validate(definition)
            return definition, 0
        raise invalid("give workflow_id (a stored workflow) or workflow_json (an inline definition)")

    @rpc
    async def ExecuteWorkflow(self, request: pb.ExecuteWorkflowRequest, context: Any) -> pb.ExecutionReply:
        definition, version = await self._definition(request)
        input_ = loads(request.input_json, "input_json")
        trigger = request.trigger_node_id or None
        if trigger and trigger not in {n.get("id") for n in definition.get("nodes", [])}:
            raise invalid(f"trigger_node_id {trigger!r} is not a node of the workflow")
        state = self.runtime.new_state(definition, version, input_, trigger)
        handle = await self.runtime.start(state, queue=not request.wait_for_completion)
        return await self._reply(handle, wait=request.wait_for_completion, timeout_ms=request.timeout_ms)

    @rpc
    async def TriggerWebhook(self, request: pb.TriggerWebhookRequest, context: Any) -> pb.ExecutionReply:
        doc, node_id = await self.workflows.webhook_target(request.method, request.path)
        node = next(n for n in doc["definition"]["nodes"] if n["id"] == node_id)
        mode = (node.get("config") or {}).get("responseMode", "lastNode")
        input_ = {
            "method": request.method.upper(),
            "path": request.path.strip("/"),
            "headers": loads(request.headers_json, "headers_json", default={}),
            "query": loads(request.query_json, "query_json", default={}),
            "body": loads(request.body_json, "body_json"),
        }
        state = self.runtime.new_state(doc["definition"], int(doc["version"]), input_, node_id)
        queue = mode == "onReceived"
        handle = await self.runtime.start(state, queue=queue, respond_early=mode == "responseNode")
        return await self._reply(
            handle, wait=not queue, timeout_ms=request.timeout_ms or 35000, until_response=mode == "responseNode"
        )

    @rpc
    async def ResumeExecution(self, request: pb.ResumeExecutionRequest, context: Any) -> pb.ExecutionReply:
        if not request.execution_id:
            raise invalid("execution_id is required")
        payload = loads(request.payload_json, "payload_json", default={})
        handle = await resume_with_token(
            self.runtime, request.execution_id, request.token, payload, request.resumed_by or "anonymous"
        )
        return await self._reply(handle, wait=request.wait_for_completion, timeout_ms=request.timeout_ms)

    # -- executions -------------------------------------------------------------------------------

    async def _execution(self, execution_id: str) -> dict[str, Any]:
        doc = await self.runtime.store.executions.get(execution_id)
        if doc is None:
            raise not_found(f"execution {execution_id!r} not found")
        return doc

    @rpc
    async def GetExecution(self, request: pb.GetExecutionRequest, context: Any) -> pb.Execution:
        return convert.execution_pb(await self._execution(request.execution_id))

    @rpc
    async def ListExecutions(self, request: pb.ListExecutionsRequest, context: Any) -> pb.ListExecutionsResponse:
        status = convert.PB_TO_STATUS.get(request.status) if request.status else None
        if request.status and status is None:
            raise invalid(f"unknown status {request.status}")
        docs, token = await self.runtime.store.executions.list_page(
            status=status,
            workflow_id=request.workflow_id or None,
            page_size=_page_size(request.page_size),
            page_token=request.page_token or None,
        )
        return pb.ListExecutionsResponse(
            executions=[convert.execution_pb(d) for d in docs], next_page_token=token or ""
        )

    @rpc
    async def CancelExecution(self, request: pb.CancelExecutionRequest, context: Any) -> pb.Execution:
        doc = await self._execution(request.execution_id)
        if doc["status"] not in CANCELLABLE:
            raise conflict(
                f"execution {request.execution_id!r} is {doc['status']}; "
                "only queued, running or waiting executions can be cancelled",
                reason="not_cancellable",
            )
        now = now_ms()
        fields = {
            "status": "cancelled",
            "finishedAt": now,
            "updatedAt": now,
            "error": f"cancelled by {request.cancelled_by or 'anonymous'}"
            + (f": {request.reason}" if request.reason else ""),
            "pause": None,
            "wakeAt": None,
            "expireAt": self.runtime.store.executions.retention.expire_at_finished(now),
        }
        spent = spent_record(doc["pause"], now=now, by="cancel") if doc.get("pause") else None
        if not await self.runtime.store.executions.set_fields(
            request.execution_id, {"status": doc["status"]}, fields, spent=spent
        ):
            current = await self._execution(request.execution_id)
            raise conflict(
                f"execution {request.execution_id!r} changed while cancelling; it is now {current['status']}"
            )
        return convert.execution_pb(await self._execution(request.execution_id))

    # -- workflows --------------------------------------------------------------------------------

    @rpc
    async def SaveWorkflow(self, request: pb.SaveWorkflowRequest, context: Any) -> pb.Workflow:
        body = loads(request.workflow_json, "workflow_json")
        doc = await self.workflows.save(
            body,
            mode=SAVE_MODES.get(request.mode, "upsert"),
            workflow_id=request.workflow_id,
            change_note=request.change_note,
            saved_by=request.saved_by,
        )
        return convert.workflow_pb(doc)

    @rpc
    async def GetWorkflow(self, request: pb.GetWorkflowRequest, context: Any) -> pb.Workflow:
        return convert.workflow_pb(await self.workflows.get(request.workflow_id))

    @rpc
    async def ListWorkflows(self, request: pb.ListWorkflowsRequest, context: Any) -> pb.ListWorkflowsResponse:
        docs, token = await self.workflows.store.list_page(
            include_archived=request.include_archived,
            page_size=_page_size(request.page_size),
            page_token=request.page_token or None,
        )
        return pb.ListWorkflowsResponse(workflows=[convert.workflow_pb(d) for d in docs], next_page_token=token or "")

    @rpc
    async def SetWorkflowActive(self, request: pb.SetWorkflowActiveRequest, context: Any) -> pb.Workflow:
        return convert.workflow_pb(await self.workflows.set_active(request.workflow_id, request.active))

    @rpc
    async def ArchiveWorkflow(self, request: pb.ArchiveWorkflowRequest, context: Any) -> pb.Workflow:
        return convert.workflow_pb(await self.workflows.archive(request.workflow_id))

    @rpc
    async def ListWorkflowVersions(
        self, request: pb.ListWorkflowVersionsRequest, context: Any
    ) -> pb.ListWorkflowVersionsResponse:
        await self.workflows.get(request.workflow_id)
        docs, token = await self.workflows.store.list_versions(
            request.workflow_id, page_size=_page_size(request.page_size), page_token=request.page_token or None
        )
        versions = [
            pb.WorkflowVersion(
                version=d["version"],
                change_note=d.get("changeNote", ""),
                saved_by=d.get("savedBy", ""),
                saved_at_ms=d["savedAt"],
            )
            for d in docs
        ]
        return pb.ListWorkflowVersionsResponse(versions=versions, next_page_token=token or "")

    @rpc
    async def GetWorkflowVersion(self, request: pb.GetWorkflowVersionRequest, context: Any) -> pb.WorkflowVersion:
        version = await self.workflows.version(request.workflow_id, request.version)
        return pb.WorkflowVersion(
            version=version["version"],
            change_note=version.get("changeNote", ""),
            saved_by=version.get("savedBy", ""),
            saved_at_ms=version["savedAt"],
            workflow_json=dumps(version["definition"]),
            diff_json=dumps(version["diff"]),
        )

    @rpc
    async def RevertWorkflow(self, request: pb.RevertWorkflowRequest, context: Any) -> pb.Workflow:
        doc = await self.workflows.revert(
            request.workflow_id, request.version, saved_by=request.saved_by, change_note=request.change_note
        )
        return convert.workflow_pb(doc)

    @rpc
    async def ResetBuiltinWorkflow(self, request: pb.ResetBuiltinRequest, context: Any) -> pb.Workflow:
        return convert.workflow_pb(await self.workflows.reset_builtin(request.workflow_id, saved_by=request.reset_by))

    @rpc
    async def MigrateExecution(self, request: pb.MigrateExecutionRequest, context: Any) -> pb.Execution:
        doc = await self._execution(request.execution_id)
        if doc["status"] != "waiting" or not doc.get("pause"):
            raise conflict(
                f"execution {request.execution_id!r} is {doc['status']}; only waiting executions can be migrated",
                reason="not_waiting",
            )
        current = await self.workflows.get(doc["workflowId"])
        pause = doc["pause"]
        top_node = pause["key"].split("/")[0]
        paused = [pause["nodeId"], top_node]
        old_nodes = {n["id"]: n["type"] for n in doc["workflowSnapshot"]["nodes"]}
        new_nodes = {n["id"]: n["type"] for n in current["definition"]["nodes"]}
        for node_id in paused:
            if node_id not in new_nodes:
                raise conflict(
                    f"version {current['version']} has no node {node_id!r}, where the execution waits",
                    reason="migrate_refused",
                )
            if new_nodes[node_id] != old_nodes.get(node_id):
                raise conflict(
                    f"node {node_id!r} is {old_nodes.get(node_id)} in version {doc['workflowVersion']} but "
                    f"{new_nodes[node_id]} in version {current['version']}",
                    reason="migrate_refused",
                )
        self.runtime.graph_for(current["definition"], int(current["version"]))
        moved = await self.runtime.store.executions.set_fields(
            request.execution_id,
            {"status": "waiting", "workflowVersion": doc["workflowVersion"], "pause.key": pause["key"]},
            {
                "workflowVersion": current["version"],
                "workflowSnapshot": current["definition"],
                "migratedFrom": doc["workflowVersion"],
                "updatedAt": now_ms(),
            },
        )
        if not moved:
            raise conflict(f"execution {request.execution_id!r} changed while migrating; try again")
        return convert.execution_pb(await self._execution(request.execution_id))

    @rpc
    async def ListNodeTypes(self, request: pb.ListNodeTypesRequest, context: Any) -> pb.ListNodeTypesResponse:
        items = [
            pb.NodeType(
                type=nt.type,
                description=nt.description,
                config_schema_json=dumps(nt.config_schema),
                outputs=list(nt.outputs),
                error=nt.error or nt.edit_error or "",
            )
            for nt in self.runtime.catalog.values()
        ]
        return pb.ListNodeTypesResponse(node_types=items)

    @rpc
    async def SendEvent(self, request: pb.SendEventRequest, context: Any) -> pb.SendEventResponse:
        if not request.type or not request.key:
            raise invalid("an event needs a type and a key")
        data = loads(request.data_json, "data_json")
        return pb.SendEventResponse(
            resumed_execution_ids=await send_event(self.runtime, request.type, request.key, data)
        )

    @rpc
    async def Health(self, request: pb.HealthRequest, context: Any) -> pb.HealthResponse:
        ok = await self.runtime.store.ping()
        return pb.HealthResponse(
            database_ok=ok, runner_id=self.runtime.runner_id, message="ok" if ok else "database unreachable"
        )
