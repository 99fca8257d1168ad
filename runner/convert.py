"""Between stored documents / engine state and protobuf messages. No logic beyond shape."""

from __future__ import annotations

import json
from typing import Any

from ._proto import workflow_pb2 as pb
from .engine.model import JSON, ExecutionState
from .errors import invalid

STATUS_TO_PB: dict[str, pb.ExecutionStatus] = {
    "pending": pb.EXECUTION_STATUS_PENDING,
    "running": pb.EXECUTION_STATUS_RUNNING,
    "completed": pb.EXECUTION_STATUS_COMPLETED,
    "failed": pb.EXECUTION_STATUS_FAILED,
    "cancelled": pb.EXECUTION_STATUS_CANCELLED,
    "waiting": pb.EXECUTION_STATUS_WAITING,
}
PB_TO_STATUS = {v: k for k, v in STATUS_TO_PB.items()}


def dumps(value: JSON) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=_default)


def _default(value: Any) -> JSON:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)


def loads(text: str, what: str, *, default: JSON = None) -> JSON:
    if not text:
        return default
    try:
        return json.loads(text)
    except ValueError as exc:
        raise invalid(f"{what} is not valid JSON: {exc}") from None


def pause_pb(pause: dict[str, Any] | None, token: str | None = None) -> pb.Pause | None:
    if not pause:
        return None
    return pb.Pause(
        node_id=pause.get("nodeId", ""),
        token=token or "",
        reason=pause.get("reason", ""),
        fields_json=dumps(pause.get("fields")) if pause.get("fields") is not None else "",
        expires_at_ms=int(pause.get("expiresAt") or 0),
        kind=pause.get("kind", ""),
        waiting_since_ms=int(pause.get("waitingSince") or 0),
        key=pause.get("key", ""),
    )


def reply_from_state(state: ExecutionState, token: str | None) -> pb.ExecutionReply:
    pause = state.pause.to_doc() if state.pause is not None and state.status == "waiting" else None
    return pb.ExecutionReply(
        execution_id=state.id,
        status=STATUS_TO_PB[state.status],
        output_json=dumps(state.output) if state.status == "completed" else "",
        webhook_response_json=dumps(state.webhookResponse) if state.webhookResponse is not None else "",
        pause=pause_pb(pause, token if pause and pause.get("kind") == "approval" else None),
        error=state.error or "",
        error_node_id=state.errorNodeId or "",
        workflow_version=state.workflowVersion,
        workflow_id=state.workflow_id,
    )


def public_pause(pause: dict[str, Any] | None) -> dict[str, JSON] | None:
    if not pause:
        return None
    return {k: v for k, v in pause.items() if k != "tokenHash"}


def execution_detail(doc: dict[str, Any]) -> dict[str, JSON]:
    """The REST representation of a stored execution: never a token hash, never the lease internals."""
    detail: dict[str, JSON] = {
        "executionId": doc["_id"],
        "workflowId": doc.get("workflowId"),
        "workflowName": doc.get("workflowName"),
        "workflowVersion": doc.get("workflowVersion"),
        "status": doc.get("status"),
        "error": doc.get("error"),
        "errorNodeId": doc.get("errorNodeId"),
        "pause": public_pause(doc.get("pause")),
        "answers": list((doc.get("answers") or {}).values()),
        "webhookResponse": doc.get("webhookResponse"),
        "warnings": doc.get("warnings") or [],
        "steps": doc.get("steps", 0),
        "startedAt": doc.get("startedAt"),
        "finishedAt": doc.get("finishedAt"),
        "createdAt": doc.get("createdAt"),
        "updatedAt": doc.get("updatedAt"),
        "runner": doc.get("runner"),
    }
    for heavy in ("input", "output", "results"):
        if heavy in doc:
            detail[heavy] = doc[heavy]
    return detail


def execution_pb(doc: dict[str, Any]) -> pb.Execution:
    pause = doc.get("pause") if doc.get("status") == "waiting" else None
    return pb.Execution(
        execution_id=doc["_id"],
        workflow_id=doc.get("workflowId", ""),
        workflow_name=doc.get("workflowName", "") or "",
        workflow_version=int(doc.get("workflowVersion") or 0),
        status=STATUS_TO_PB.get(doc.get("status", ""), pb.EXECUTION_STATUS_UNSPECIFIED),
        pause=pause_pb(pause),
        error=doc.get("error") or "",
        started_at_ms=int(doc.get("startedAt") or 0),
        finished_at_ms=int(doc.get("finishedAt") or 0),
        detail_json=dumps(execution_detail(doc)),
    )


def workflow_pb(doc: dict[str, Any]) -> pb.Workflow:
    from .store.workflows import public_view

    return pb.Workflow(workflow_id=doc["_id"], version=int(doc["version"]), workflow_json=dumps(public_view(doc)))
