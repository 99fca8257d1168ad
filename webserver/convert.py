"""Runner messages → the JSON REST clients see (DESIGN §6, §10)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from runner._proto import workflow_pb2 as pb
from runner.convert import STATUS_TO_PB
from webserver.errors import ApiError

STATUS_BY_NAME: dict[str, pb.ExecutionStatus] = STATUS_TO_PB
"""REST's lower-case names (DESIGN §4)."""
STATUS_NAMES: dict[int, str] = {int(value): name for name, value in STATUS_BY_NAME.items()}


def status_name(value: int) -> str:
    return STATUS_NAMES.get(value, "unspecified")


def status_from_name(name: str) -> pb.ExecutionStatus:
    """A REST status filter → the enum value; unknown → 400 listing the valid names."""
    try:
        return STATUS_BY_NAME[name.strip().lower()]
    except KeyError:
        valid = ", ".join(STATUS_NAMES.values())
        raise ApiError(400, f"unknown status {name!r}; valid statuses: {valid}") from None


def loads(text: str, default: Any = None) -> Any:
    """A ``*_json`` field; an empty string is ``default``."""
    return json.loads(text) if text else default


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def iso_from_ms(ms: int) -> str | None:
    if not ms:
        return None
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def pause_json(pause: pb.Pause, *, with_token: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "nodeId": pause.node_id,
        "reason": pause.reason,
        "fields": loads(pause.fields_json),
        "expiresAt": pause.expires_at_ms or None,
        "kind": pause.kind or None,
    }
    if with_token:
        out["token"] = pause.token or None
    return out


def reply_json(reply: pb.ExecutionReply) -> dict[str, Any]:
    """An ``ExecutionReply`` (run, resume) as REST JSON. The pause's token is the starter's to see."""
    has_pause = reply.HasField("pause") and bool(reply.pause.node_id)
    return {
        "executionId": reply.execution_id,
        "workflowId": reply.workflow_id or None,
        "status": status_name(reply.status),
        "output": loads(reply.output_json),
        "webhookResponse": loads(reply.webhook_response_json),
        "pause": pause_json(reply.pause, with_token=True) if has_pause else None,
        "error": reply.error or None,
        "errorNodeId": reply.error_node_id or None,
        "workflowVersion": reply.workflow_version or None,
    }


def execution_json(execution: pb.Execution) -> Any:
    """A stored execution: the runner's ``detail_json``, or a summary of the typed fields without it."""
    if execution.detail_json:
        return json.loads(execution.detail_json)
    has_pause = execution.HasField("pause") and bool(execution.pause.node_id)
    return {
        "executionId": execution.execution_id,
        "workflowId": execution.workflow_id,
        "workflowName": execution.workflow_name,
        "workflowVersion": execution.workflow_version or None,
        "status": status_name(execution.status),
        "pause": pause_json(execution.pause, with_token=False) if has_pause else None,
        "error": execution.error or None,
        "startedAt": iso_from_ms(execution.started_at_ms),
        "finishedAt": iso_from_ms(execution.finished_at_ms),
    }


def pending_json(execution: pb.Execution) -> dict[str, Any]:
    """One entry of ``GET /executions/pending``, from the typed fields only: never a token."""
    pause = execution.pause
    return {
        "executionId": execution.execution_id,
        "workflowId": execution.workflow_id,
        "workflowName": execution.workflow_name,
        "nodeId": pause.node_id,
        "kind": pause.kind or None,
        "reason": pause.reason,
        "fields": loads(pause.fields_json),
        "expiresAt": pause.expires_at_ms or None,
        "waitingSince": pause.waiting_since_ms or None,
    }


def version_json(version: pb.WorkflowVersion, *, with_snapshot: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "version": version.version,
        "changeNote": version.change_note,
        "savedBy": version.saved_by,
        "savedAt": iso_from_ms(version.saved_at_ms),
    }
    if with_snapshot:
        out["workflow"] = loads(version.workflow_json)
        out["diff"] = loads(version.diff_json, [])
    return out


def node_type_json(node: pb.NodeType) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": node.type,
        "description": node.description,
        "config": loads(node.config_schema_json, {}),
        "outputs": list(node.outputs),
    }
    if node.error:
        out["error"] = node.error
    return out


def page(items: list[Any], next_page_token: str) -> dict[str, Any]:
    return {"items": items, "nextPageToken": next_page_token or None}
