"""The REST API end to end: real HTTP to a running webserver and runner (DESIGN §6, §10)."""

from __future__ import annotations

from typing import Any

from tests.integration.conftest import Stack
from tests.webserver.live import code, http, manual_workflow, save, set_values, wait_for

PAUSE = """\
import time

def main(input):
    return {"_pause": {"reason": "Ship it?", "fields": {"amount": 5},
                       "expiresAt": int(time.time() * 1000) + 3600000}}
"""


def _by_version(items: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {item["version"]: item for item in items}


def test_healthz_reports_runner_and_database(stack: Stack) -> None:
    status, _, body = stack.http("GET", "/healthz")
    assert status == 200
    assert (body["status"], body["database"]) == ("ok", "ok")
    assert body["runner"]


def test_openapi_is_served(stack: Stack) -> None:
    status, _, body = stack.http("GET", "/openapi.json")
    assert status == 200
    assert "/api/v1/executions/{id}/resume" in body["paths"]


def test_workflow_read_modify_write_round_trip_makes_versions(stack: Stack) -> None:
    created = save(stack, {**manual_workflow("crud", set_values("s", {"a": 1})), "changeNote": "first cut"})
    assert created["id"] == "crud"
    assert "changeNote" not in created

    status, _, current = stack.http("GET", "/api/v1/workflows/crud")
    assert status == 200
    current["name"] = "Renamed"
    current["changeNote"] = "rename"
    status, _, updated = stack.http("PUT", "/api/v1/workflows/crud", current)
    assert status == 200, updated
    assert updated["name"] == "Renamed"

    status, _, versions = stack.http("GET", "/api/v1/workflows/crud/versions")
    assert status == 200
    by_version = _by_version(versions["items"])
    assert (by_version[1]["changeNote"], by_version[2]["changeNote"]) == ("first cut", "rename")
    assert by_version[2]["savedAt"].endswith("Z")

    status, _, detail = stack.http("GET", "/api/v1/workflows/crud/versions/2")
    assert status == 200
    assert detail["workflow"]["name"] == "Renamed"
    assert {"op": "replace", "path": "/name", "value": "Renamed"} in detail["diff"]


def test_revert_republishes_an_old_version(stack: Stack) -> None:
    save(stack, manual_workflow("rev", set_values("s", {"a": 1})))
    _, _, current = stack.http("GET", "/api/v1/workflows/rev")
    stack.http("PUT", "/api/v1/workflows/rev", {**current, "name": "second"})
    status, _, reverted = stack.http("POST", "/api/v1/workflows/rev/versions/1/revert", {"changeNote": "back"})
    assert status == 200, reverted
    assert reverted["name"] == "rev"
    _, _, versions = stack.http("GET", "/api/v1/workflows/rev/versions")
    assert _by_version(versions["items"])[3]["changeNote"] == "back"


def test_create_with_a_taken_id_is_409(stack: Stack) -> None:
    save(stack, manual_workflow("taken"))
    status, _, body = stack.http("POST", "/api/v1/workflows", manual_workflow("taken"))
    assert status == 409
    assert "taken" in body["error"]


def test_invalid_workflow_is_400_naming_the_problem(stack: Stack) -> None:
    wf = manual_workflow("bad", {"id": "x", "type": "core/no-such-node", "config": {}})
    status, _, body = stack.http("POST", "/api/v1/workflows", wf)
    assert status == 400
    assert "core/no-such-node" in body["error"]


def test_unknown_workflow_is_404(stack: Stack) -> None:
    status, _, body = stack.http("GET", "/api/v1/workflows/ghost")
    assert status == 404
    assert "ghost" in body["error"]


def test_list_archive_and_toggle(stack: Stack) -> None:
    save(stack, manual_workflow("listed"))
    status, _, page = stack.http("GET", "/api/v1/workflows")
    assert status == 200
    assert [w["id"] for w in page["items"]] == ["listed"]
    assert "nextPageToken" in page

    status, _, body = stack.http("POST", "/api/v1/workflows/listed/deactivate")
    assert (status, body["active"]) == (200, False)
    status, _, body = stack.http("POST", "/api/v1/workflows/listed/activate")
    assert (status, body["active"]) == (200, True)

    status, _, _ = stack.http("DELETE", "/api/v1/workflows/listed")
    assert status == 200
    _, _, page = stack.http("GET", "/api/v1/workflows")
    assert page["items"] == []
    _, _, page = stack.http("GET", "/api/v1/workflows?includeArchived=true")
    assert [w["id"] for w in page["items"]] == ["listed"]


def test_manual_run_returns_the_execution_and_lists_it(stack: Stack) -> None:
    save(stack, manual_workflow("runme", set_values("s", {"added": True})))
    status, _, reply = stack.http("POST", "/api/v1/workflows/runme/run", {"n": 1})
    assert status == 200, reply
    assert reply["status"] == "completed"
    assert reply["output"]["added"] is True
    assert reply["pause"] is None
    execution_id = reply["executionId"]

    status, _, detail = stack.http("GET", f"/api/v1/executions/{execution_id}")
    assert status == 200
    assert detail["status"] == "completed"

    status, _, page = stack.http("GET", "/api/v1/executions?status=completed&workflowId=runme")
    assert status == 200
    assert execution_id in [item["executionId"] for item in page["items"]]
    _, _, page = stack.http("GET", "/api/v1/executions?status=failed")
    assert execution_id not in [item["executionId"] for item in page["items"]]


def test_run_without_waiting_is_202_and_completes(stack: Stack) -> None:
    save(stack, manual_workflow("queued", set_values("s", {"added": True})))
    status, _, reply = stack.http("POST", "/api/v1/workflows/queued/run?wait=false", {})
    assert status == 202, reply
    assert reply["status"] in {"pending", "running"}

    def done() -> Any:
        _, _, detail = stack.http("GET", f"/api/v1/executions/{reply['executionId']}")
        return detail if detail["status"] == "completed" else None

    wait_for(done, what="the queued run to complete")


def test_unknown_status_filter_is_400(stack: Stack) -> None:
    status, _, body = stack.http("GET", "/api/v1/executions?status=finished")
    assert status == 400
    assert "waiting" in body["error"]


def test_unknown_execution_is_404(stack: Stack) -> None:
    assert stack.http("GET", "/api/v1/executions/nope")[0] == 404
    assert stack.http("POST", "/api/v1/executions/nope/cancel")[0] == 404
    assert stack.http("POST", "/api/v1/executions/nope/resume", {"token": "t"})[0] == 404


def test_pause_pending_and_resume(stack: Stack) -> None:
    save(stack, manual_workflow("approve", code("ask", PAUSE), set_values("after", {"finished": True})))
    status, _, reply = stack.http("POST", "/api/v1/workflows/approve/run", {})
    assert status == 200, reply
    assert reply["status"] == "waiting"
    pause = reply["pause"]
    assert (pause["nodeId"], pause["reason"], pause["fields"]) == ("ask", "Ship it?", {"amount": 5})
    token, execution_id = pause["token"], reply["executionId"]
    assert token

    status, _, pending = stack.http("GET", "/api/v1/executions/pending")
    assert status == 200
    assert [p["executionId"] for p in pending["items"]] == [execution_id]
    item = pending["items"][0]
    assert (item["workflowId"], item["nodeId"], item["reason"]) == ("approve", "ask", "Ship it?")
    assert isinstance(item["expiresAt"], int) and isinstance(item["waitingSince"], int)
    assert token not in repr(pending)
    assert token not in repr(stack.http("GET", f"/api/v1/executions/{execution_id}")[2])

    status, _, body = stack.http("POST", f"/api/v1/executions/{execution_id}/resume", {"token": "x" * 32})
    assert status == 403, body

    answer = {"token": token, "approved": True, "data": {"note": "fine"}, "by": "alice"}
    status, _, done = stack.http("POST", f"/api/v1/executions/{execution_id}/resume", answer)
    assert status == 200, done
    assert done["status"] == "completed"
    assert done["output"]["finished"] is True

    status, _, body = stack.http("POST", f"/api/v1/executions/{execution_id}/resume", answer)
    assert status in {403, 409}, body


def test_events_without_waiters_resume_nothing(stack: Stack) -> None:
    status, _, body = stack.http("POST", "/api/v1/events", {"type": "order.paid", "key": "o-1", "data": {}})
    assert (status, body) == (200, {"resumedExecutionIds": []})


def test_node_catalog(stack: Stack) -> None:
    status, _, body = stack.http("GET", "/api/v1/nodes")
    assert status == 200
    by_type = {item["type"]: item for item in body["items"]}
    assert {"triggers/webhook", "core/respond-to-webhook", "core/code"} <= set(by_type)
    assert "code" in by_type["core/code"]["config"]
    assert by_type["core/code"]["outputs"] == ["main"]
    assert by_type["core/code"]["description"]


def test_api_keys_guard_the_rest_api(stack: Stack) -> None:
    _, url = stack.start_webserver(SMARTBOTIC_API_KEYS="ci:secret-key-123")
    status, headers, body = http(url, "GET", "/api/v1/workflows")
    assert (status, headers["www-authenticate"]) == (401, "Bearer")
    assert body["error"]
    status, _, _ = http(url, "GET", "/api/v1/workflows", headers={"Authorization": "Bearer not-the-key-1"})
    assert status == 401

    auth = {"Authorization": "Bearer secret-key-123"}
    status, _, _ = http(url, "GET", "/api/v1/workflows", headers=auth)
    assert status == 200
    status, _, _ = http(url, "POST", "/api/v1/workflows", manual_workflow("keyed"), headers=auth)
    assert status == 201
    _, _, versions = http(url, "GET", "/api/v1/workflows/keyed/versions", headers=auth)
    assert versions["items"][0]["savedBy"] == "ci"

    assert http(url, "GET", "/healthz")[0] == 200
    assert http(url, "POST", "/api/v1/executions/nope/resume", {"token": "t"})[0] == 404
