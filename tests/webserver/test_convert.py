"""Runner messages → REST JSON."""

from __future__ import annotations

import pytest

from runner._proto import workflow_pb2 as pb
from webserver.convert import (
    execution_json,
    iso_from_ms,
    node_type_json,
    pending_json,
    reply_json,
    status_from_name,
    status_name,
    version_json,
)
from webserver.errors import ApiError

PAUSE = pb.Pause(
    node_id="ask",
    token="secret-token",
    reason="Refund?",
    fields_json='{"amount": 5}',
    expires_at_ms=1700000000000,
    kind="approval",
    waiting_since_ms=1699990000000,
)


@pytest.mark.parametrize("name", ["pending", "running", "completed", "failed", "cancelled", "waiting"])
def test_status_names_round_trip(name: str) -> None:
    assert status_name(status_from_name(name)) == name


def test_unknown_status_lists_the_valid_ones() -> None:
    with pytest.raises(ApiError) as info:
        status_from_name("unspecified")
    assert info.value.status == 400
    assert "pending, running, completed, failed, cancelled, waiting" in info.value.message


def test_reply_json_of_a_pause_carries_the_token_for_the_starter() -> None:
    reply = pb.ExecutionReply(
        execution_id="e1", status=pb.EXECUTION_STATUS_WAITING, pause=PAUSE, workflow_version=3, workflow_id="w"
    )
    assert reply_json(reply) == {
        "executionId": "e1",
        "workflowId": "w",
        "status": "waiting",
        "output": None,
        "webhookResponse": None,
        "pause": {
            "nodeId": "ask",
            "token": "secret-token",
            "reason": "Refund?",
            "fields": {"amount": 5},
            "expiresAt": 1700000000000,
            "kind": "approval",
        },
        "error": None,
        "errorNodeId": None,
        "workflowVersion": 3,
    }


def test_reply_json_of_a_failure() -> None:
    reply = pb.ExecutionReply(
        execution_id="e1", status=pb.EXECUTION_STATUS_FAILED, error="boom", error_node_id="n", output_json="[1]"
    )
    out = reply_json(reply)
    assert (out["status"], out["error"], out["errorNodeId"], out["output"], out["pause"]) == (
        "failed",
        "boom",
        "n",
        [1],
        None,
    )


def test_pending_entries_never_carry_a_token() -> None:
    execution = pb.Execution(
        execution_id="e1", workflow_id="w", workflow_name="W", status=pb.EXECUTION_STATUS_WAITING, pause=PAUSE
    )
    out = pending_json(execution)
    assert "secret-token" not in repr(out)
    assert out == {
        "executionId": "e1",
        "workflowId": "w",
        "workflowName": "W",
        "nodeId": "ask",
        "kind": "approval",
        "reason": "Refund?",
        "fields": {"amount": 5},
        "expiresAt": 1700000000000,
        "waitingSince": 1699990000000,
    }


def test_execution_json_is_the_runners_detail() -> None:
    assert execution_json(pb.Execution(execution_id="e1", detail_json='{"executionId": "e1", "x": 1}')) == {
        "executionId": "e1",
        "x": 1,
    }


def test_execution_json_without_detail_summarises_without_token() -> None:
    out = execution_json(pb.Execution(execution_id="e1", status=pb.EXECUTION_STATUS_WAITING, pause=PAUSE))
    assert out["status"] == "waiting"
    assert "secret-token" not in repr(out)


def test_version_json() -> None:
    version = pb.WorkflowVersion(
        version=2,
        change_note="n",
        saved_by="alice",
        saved_at_ms=1700000000123,
        workflow_json='{"id": "w"}',
        diff_json='[{"op": "replace", "path": "/name", "value": "x"}]',
    )
    assert version_json(version, with_snapshot=False) == {
        "version": 2,
        "changeNote": "n",
        "savedBy": "alice",
        "savedAt": "2023-11-14T22:13:20.123Z",
    }
    detail = version_json(version, with_snapshot=True)
    assert detail["workflow"] == {"id": "w"}
    assert detail["diff"] == [{"op": "replace", "path": "/name", "value": "x"}]


def test_first_version_has_an_empty_diff() -> None:
    assert version_json(pb.WorkflowVersion(version=1), with_snapshot=True)["diff"] == []


def test_iso_from_ms() -> None:
    assert iso_from_ms(0) is None
    assert iso_from_ms(1000) == "1970-01-01T00:00:01.000Z"


def test_node_type_json_shows_errors_only_when_broken() -> None:
    ok = pb.NodeType(type="core/noop", description="d", config_schema_json='{"a": {}}', outputs=["main"])
    assert node_type_json(ok) == {"type": "core/noop", "description": "d", "config": {"a": {}}, "outputs": ["main"]}
    broken = pb.NodeType(type="core/x", error="x.py line 3: SyntaxError")
    assert node_type_json(broken)["error"] == "x.py line 3: SyntaxError"
