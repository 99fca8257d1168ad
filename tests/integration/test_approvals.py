"""Pause and resume over real HTTP and gRPC (DESIGN §6): what an approver and a caller see."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from pymongo import MongoClient

from tests.conftest import free_port

from .conftest import Stack
from .helpers import detail, node, wait_status, workflow


def approval_flow(wf_id: str = "refund", **ask: Any) -> dict[str, Any]:
    ask.setdefault("reason", "Refund {{input.body.amount}} EUR?")
    ask.setdefault("expiresIn", "2d")
    return workflow(
        wf_id,
        [
            node("hook", "triggers/webhook", path=wf_id, method="POST"),
            node("ask", "core/wait-for-approval", **ask),
            node("ok", "core/set", values={"refunded": True, "by": "{{steps.ask.by}}"}, keepInput=False),
            node("no", "core/set", values={"refunded": False}, keepInput=False),
            node("late", "core/set", values={"late": True}, keepInput=False),
        ],
        [
            {"from": "hook", "to": "ask"},
            {"from": "ask", "output": "approved", "to": "ok"},
            {"from": "ask", "output": "rejected", "to": "no"},
            {"from": "ask", "output": "timeout", "to": "late"},
        ],
    )


def create(stack: Stack, wf: dict[str, Any]) -> None:
    status, _, body = stack.http("POST", "/api/v1/workflows", wf)
    assert status == 201, body


def start_run(stack: Stack, wf_id: str, body: Any) -> dict[str, Any]:
    """A manual run over REST: the starter gets the token once."""
    status, _, reply = stack.http("POST", f"/api/v1/workflows/{wf_id}/run", {"body": body})
    assert status == 200, reply
    assert reply["status"] == "waiting", reply
    return dict(reply)


def resume(stack: Stack, execution_id: str, token: str, approved: bool = True, **extra: Any) -> tuple[int, Any]:
    status, _, body = stack.http(
        "POST", f"/api/v1/executions/{execution_id}/resume", {"token": token, "approved": approved, **extra}
    )
    return status, body


def raw_execution(stack: Stack, execution_id: str) -> dict[str, Any]:
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri, tz_aware=True)
    try:
        doc = client[stack.db_name]["executions"].find_one({"_id": execution_id})
        assert doc is not None
        return doc
    finally:
        client.close()


def test_webhook_caller_gets_202_and_the_pending_list_shows_it_without_token(stack: Stack) -> None:
    create(stack, approval_flow())
    status, _, body = stack.http("POST", "/webhook/refund", {"amount": 30})
    assert status == 202
    assert body["status"] == "waiting" and body["executionId"]
    status, _, pending = stack.http("GET", "/api/v1/executions/pending")
    assert status == 200
    item = next(i for i in pending["items"] if i["executionId"] == body["executionId"])
    assert item["reason"] == "Refund 30 EUR?" and item["nodeId"] == "ask" and item["workflowId"] == "refund"
    assert item["expiresAt"] > time.time() * 1000 + 86400_000
    assert "token" not in json.dumps(pending["items"]).lower()


def test_wrong_token_403_changes_nothing_right_token_completes_second_answer_409(stack: Stack) -> None:
    create(stack, approval_flow())
    run = start_run(stack, "refund", {"amount": 10})
    before = raw_execution(stack, run["executionId"])
    status, body = resume(stack, run["executionId"], "not-the-token")
    assert status == 403 and "token" in body["error"]
    after = raw_execution(stack, run["executionId"])
    assert after["status"] == "waiting" and after["pause"] == before["pause"] and after["results"] == before["results"]
    status, body = resume(stack, run["executionId"], run["pause"]["token"], by="alice")
    assert status == 200, body
    assert body["status"] == "completed"
    assert body["output"] == {"refunded": True, "by": "alice"}
    status, body = resume(stack, run["executionId"], run["pause"]["token"])
    assert status == 409 and "completed" in body["error"]
    status, body = resume(stack, "no-such-execution", run["pause"]["token"])
    assert status == 404


def test_ten_concurrent_answers_exactly_one_wins(stack: Stack) -> None:
    create(stack, approval_flow())
    run = start_run(stack, "refund", {"amount": 10})
    with ThreadPoolExecutor(10) as pool:
        results = list(
            pool.map(lambda i: resume(stack, run["executionId"], run["pause"]["token"], by=f"p{i}"), range(10))
        )
    statuses = sorted(s for s, _ in results)
    assert statuses.count(200) == 1 and statuses.count(409) == 9, results
    d = wait_status(stack.stub, run["executionId"], "completed")
    assert len(d["answers"]) == 1


def test_resume_follows_the_snapshot_not_the_edited_workflow(stack: Stack) -> None:
    create(stack, approval_flow())
    run = start_run(stack, "refund", {"amount": 10})
    edited = approval_flow()
    edited["nodes"][2]["config"]["values"] = {"refunded": "EDITED"}
    status, _, body = stack.http("PUT", "/api/v1/workflows/refund", edited)
    assert status == 200 and body["version"] == 2
    status, body = resume(stack, run["executionId"], run["pause"]["token"], by="bob")
    assert status == 200 and body["output"] == {"refunded": True, "by": "bob"}
    assert body["workflowVersion"] == 1


def test_completed_nodes_do_not_run_again_after_resume(stack: Stack) -> None:
    count = (
        "def main(input):\n    smartbotic.db.collection('runs').insert({'n': 1})\n"
        "    return {'count': len(smartbotic.db.collection('runs').find({}))}"
    )
    wf = workflow(
        "counted",
        [
            node("start", "triggers/manual"),
            node("c", "core/code", code=count),
            node("ask", "core/wait-for-approval"),
            node("after", "core/noop"),
        ],
        [
            {"from": "start", "to": "c"},
            {"from": "c", "to": "ask"},
            {"from": "ask", "output": "approved", "to": "after"},
        ],
    )
    create(stack, wf)
    status, _, run = stack.http("POST", "/api/v1/workflows/counted/run", {})
    assert run["status"] == "waiting"
    status, body = resume(stack, run["executionId"], run["pause"]["token"])
    assert status == 200 and body["status"] == "completed"
    assert body["output"]["approved"] is True
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri)
    assert client[stack.db_name + "_data"]["runs"].count_documents({}) == 1
    client.close()


def test_resumed_by_a_different_runner_process(stack: Stack) -> None:
    create(stack, approval_flow())
    run = start_run(stack, "refund", {"amount": 10})
    _, other_target = stack.start_runner()
    _, other_url = stack.start_webserver(runner_target=other_target)
    stack.procs[0].stop()  # the runner that paused it is gone
    stack.http_url = other_url
    status, body = resume(stack, run["executionId"], run["pause"]["token"], by="carol")
    assert status == 200 and body["status"] == "completed", body
    assert raw_execution(stack, run["executionId"])["runner"] == "runner2"


def test_expired_pause_is_410_naming_the_time(stack: Stack) -> None:
    create(stack, approval_flow(expiresIn="1s"))
    run = start_run(stack, "refund", {"amount": 10})
    expires = run["pause"]["expiresAt"]
    time.sleep(1.2)
    status, body = resume(stack, run["executionId"], run["pause"]["token"])
    assert status == 410
    iso = datetime.fromtimestamp(expires / 1000, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    assert iso in body["error"]
    wait_status(stack.stub, run["executionId"], "failed")  # the sweeper applied onTimeout=fail
    status, body = resume(stack, run["executionId"], run["pause"]["token"])
    assert status == 410 and iso in body["error"]


@pytest.mark.parametrize(
    ("policy", "status", "output"),
    [
        ("fail", "failed", None),
        ("approve", "completed", {"refunded": True, "by": "timeout"}),
        ("reject", "completed", {"refunded": False}),
        ("route", "completed", {"late": True}),
    ],
)
def test_each_on_timeout_policy(stack: Stack, policy: str, status: str, output: Any) -> None:
    create(stack, approval_flow(expiresIn="1s", onTimeout=policy))
    run = start_run(stack, "refund", {"amount": 10})
    final = wait_status(stack.stub, run["executionId"], "completed", "failed", seconds=30)
    assert final["status"] == status
    if output is None:
        assert "approval timed out at" in final["error"]
    else:
        assert final["output"] == output


def test_expires_in_over_30_days_is_an_error_naming_the_cap(stack: Stack) -> None:
    create(stack, approval_flow(expiresIn="45d"))
    _, _, reply = stack.http("POST", "/api/v1/workflows/refund/run", {"body": {"amount": 1}})
    assert reply["status"] == "failed" and reply["errorNodeId"] == "ask"
    assert "30-day cap" in reply["error"] and "45d" in reply["error"]


def test_no_plaintext_token_is_stored_and_expire_at_follows_the_pause(stack: Stack) -> None:
    create(stack, approval_flow(expiresIn="3d"))
    run = start_run(stack, "refund", {"amount": 10})
    doc = raw_execution(stack, run["executionId"])
    token = run["pause"]["token"]
    assert len(token) >= 22
    assert token not in json.dumps(doc, default=str)
    assert doc["pause"]["tokenHash"] == hashlib.sha256(token.encode()).hexdigest()
    expected = run["pause"]["expiresAt"] / 1000 + 7 * 86400
    assert abs(doc["expireAt"].timestamp() - expected) < 5
    # a finished execution whose expireAt has passed is removed by the TTL monitor
    client: MongoClient[dict[str, Any]] = MongoClient(stack.mongo_uri, tz_aware=True)
    col = client[stack.db_name]["executions"]
    col.update_one({"_id": run["executionId"]}, {"$set": {"expireAt": datetime(2000, 1, 1, tzinfo=UTC)}})
    try:
        client.admin.command("secantusAdmin.pruneTtl", 1)
        assert col.find_one({"_id": run["executionId"]}) is None
    except Exception as exc:  # a real mongod has no such command; its monitor runs every 60 s
        if "secantusAdmin" not in str(exc) and "no such command" not in str(exc).lower():
            raise
    finally:
        client.close()


class _Listener(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        type(self).received.append(json.loads(self.rfile.read(length)))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def listener() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    _Listener.received = []
    server = HTTPServer(("127.0.0.1", free_port()), _Listener)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/notify", _Listener.received
    server.shutdown()


def test_notify_url_receives_the_token_and_it_resumes(stack: Stack, listener: tuple[str, list[dict[str, Any]]]) -> None:
    url, received = listener
    create(stack, approval_flow(notifyUrl=url, fields={"amount": "{{input.body.amount}}"}))
    status, _, body = stack.http("POST", "/webhook/refund", {"amount": 99})
    assert status == 202
    end = time.monotonic() + 10
    while not received and time.monotonic() < end:
        time.sleep(0.05)
    assert received, "notifyUrl got no POST"
    note = received[0]
    assert note["executionId"] == body["executionId"] and note["reason"] == "Refund 99 EUR?"
    assert note["fields"] == {"amount": 99}
    assert note["resumeUrl"].endswith(f"/api/v1/executions/{body['executionId']}/resume")
    status, reply = resume(stack, body["executionId"], note["token"], approved=False)
    assert status == 200 and reply["output"] == {"refunded": False}


def test_pause_and_resume_inside_a_loop(stack: Stack) -> None:
    wf = workflow(
        "per-item",
        [
            node("start", "triggers/manual"),
            node("loop", "core/loop", items="{{input.items}}"),
            node("ask", "core/wait-for-approval", reason="item {{steps.loop.item}}"),
            node("done", "core/noop"),
        ],
        [
            {"from": "start", "to": "loop"},
            {"from": "loop", "output": "body", "to": "ask"},
            {"from": "loop", "output": "done", "to": "done"},
        ],
    )
    create(stack, wf)
    status, _, run = stack.http("POST", "/api/v1/workflows/per-item/run", {"items": ["a", "b"]})
    assert run["status"] == "waiting" and run["pause"]["reason"] == "item a"
    status, second = resume(stack, run["executionId"], run["pause"]["token"], approved=True)
    assert status == 200 and second["status"] == "waiting" and second["pause"]["reason"] == "item b"
    status, _ = resume(stack, run["executionId"], run["pause"]["token"])
    assert status == 409  # the first iteration's token is spent
    status, final = resume(stack, run["executionId"], second["pause"]["token"], approved=False)
    assert status == 200 and final["status"] == "completed"
    results = final["output"]["results"]
    assert [r["approved"] for r in results] == [True, False]
    d = detail(stack.stub, run["executionId"])
    assert d["results"]["loop/0/ask"]["status"] == "completed" and d["results"]["loop/1/ask"]["status"] == "completed"
