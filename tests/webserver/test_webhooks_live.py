"""Webhooks end to end: real HTTP to a running webserver and runner (DESIGN §5)."""

from __future__ import annotations

from tests.integration.conftest import Stack
from tests.webserver.live import code, http, respond, save, set_values, wait_for, webhook_workflow


def test_respond_node_sets_status_headers_and_body(stack: Stack) -> None:
    save(
        stack,
        webhook_workflow(
            "hook-respond", "orders", respond("reply", 201, headers={"X-Order": "o-1"}, body={"id": "o-1", "ok": True})
        ),
    )
    status, headers, body = http(stack.http_url, "POST", "/webhook/orders", {"item": "book"})
    assert status == 201
    assert headers["x-order"] == "o-1"
    assert headers["content-type"].startswith("application/json")
    assert body == {"id": "o-1", "ok": True}


def test_node_after_the_respond_node_changes_nothing(stack: Stack) -> None:
    log_node = code("log", "def main(input):\n    return {'logged': True}\n")
    save(stack, webhook_workflow("hook-after", "after", respond("reply", 201, body={"first": 1}), log_node))
    status, _, body = http(stack.http_url, "POST", "/webhook/after", {})
    assert (status, body) == (201, {"first": 1})


def test_two_respond_nodes_the_last_wins(stack: Stack) -> None:
    wf = webhook_workflow(
        "hook-two", "two", respond("first", 201, body="first"), respond("second", 418, body={"second": True})
    )
    save(stack, wf)
    status, headers, body = http(stack.http_url, "POST", "/webhook/two", {})
    assert (status, body) == (418, {"second": True})
    assert headers["content-type"].startswith("application/json")


def test_status_outside_100_599_is_500_naming_the_node(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-bad-status", "bad-status", respond("weird-reply", 700, body="x")))
    status, _, body = http(stack.http_url, "POST", "/webhook/bad-status", {})
    assert status == 500
    assert set(body) == {"executionId", "error"}
    assert "weird-reply" in body["error"]
    assert "700" in body["error"]


def test_string_body_is_text_and_object_body_is_json(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-text", "text", respond("reply", 200, body="plain words")))
    save(stack, webhook_workflow("hook-json", "json", respond("reply", 200, body=[1, {"a": "b"}])))
    status, headers, body = http(stack.http_url, "POST", "/webhook/text", {})
    assert (status, body) == (200, "plain words")
    assert headers["content-type"] == "text/plain; charset=utf-8"
    status, headers, body = http(stack.http_url, "POST", "/webhook/json", {})
    assert (status, body) == (200, [1, {"a": "b"}])
    assert headers["content-type"].startswith("application/json")


def test_no_respond_node_answers_200_with_the_last_output(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-last", "last", set_values("mark", {"seen": True})))
    status, _, body = http(stack.http_url, "POST", "/webhook/last?x=1", {"amount": 12.5})
    assert status == 200
    assert body["seen"] is True
    assert body["body"] == {"amount": 12.5}
    assert body["method"] == "POST"
    assert body["query"] == {"x": "1"}
    assert body["headers"]["content-type"] == "application/json"


def test_text_request_body_reaches_the_workflow_as_text(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-raw", "raw", set_values("mark", {"seen": True})))
    status, _, body = http(
        stack.http_url,
        "POST",
        "/webhook/raw",
        raw=b"a=1&b=2",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 200
    assert body["body"] == "a=1&b=2"


def test_failed_run_is_500_without_traceback_even_after_a_response(stack: Stack) -> None:
    boom = code("explode", "def main(input):\n    raise ValueError('the answer is no')\n")
    save(stack, webhook_workflow("hook-fail", "fail", respond("reply", 201, body="ok"), boom))
    status, _, body = http(stack.http_url, "POST", "/webhook/fail", {})
    assert status == 500
    assert set(body) == {"executionId", "error"}
    assert "the answer is no" in body["error"]
    assert "Traceback" not in body["error"]
    assert 'File "' not in body["error"]


def test_unknown_path_is_404(stack: Stack) -> None:
    status, _, body = http(stack.http_url, "POST", "/webhook/nobody-here", {})
    assert status == 404
    assert "nobody-here" in body["error"]


def test_wrong_method_is_405_with_allow(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-post-only", "post-only", respond("reply", 200, body="ok")))
    status, headers, body = http(stack.http_url, "GET", "/webhook/post-only")
    assert status == 405
    assert headers["allow"] == "POST"
    assert "GET" in body["error"]


def test_body_over_the_limit_is_413(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-small", "small", respond("reply", 200, body="ok")))
    _, url = stack.start_webserver(SMARTBOTIC_MAX_BODY_BYTES="100")
    status, _, body = http(url, "POST", "/webhook/small", {"pad": "x" * 200})
    assert status == 413
    assert body["error"].endswith("exceeds the limit of 100 bytes (SMARTBOTIC_MAX_BODY_BYTES)")
    status, _, body = http(url, "POST", "/webhook/small", {"pad": "x"})
    assert (status, body) == (200, "ok")


def test_malformed_json_is_400_naming_the_problem(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-json-in", "json-in", respond("reply", 200, body="ok")))
    status, _, body = http(
        stack.http_url, "POST", "/webhook/json-in", raw=b'{"a": 1,}', headers={"Content-Type": "application/json"}
    )
    assert status == 400
    assert "line 1 column 9" in body["error"]


SLOW = """\
import time

def main(input):
    end = time.monotonic() + 3
    spins = 0
    while time.monotonic() < end:
        spins += 1
    return {"slow": "done"}
"""


def test_deadline_passed_is_202_and_the_run_goes_on(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-slow", "slow", code("slow", SLOW)))
    _, url = stack.start_webserver(SMARTBOTIC_WEBHOOK_TIMEOUT_SECONDS="1")
    status, _, body = http(url, "POST", "/webhook/slow", {})
    assert status == 202, body
    assert body["status"] in {"running", "pending"}
    execution_id = body["executionId"]

    def finished() -> dict[str, object] | None:
        code_, _, detail = stack.http("GET", f"/api/v1/executions/{execution_id}")
        assert code_ == 200, detail
        return detail if detail.get("status") in {"completed", "failed"} else None

    detail = wait_for(finished, timeout_s=30, what="the slow execution to finish")
    assert detail["status"] == "completed"
    assert detail["output"] == {"slow": "done"}


def test_two_active_workflows_on_one_method_and_path_is_409_naming_the_other(stack: Stack) -> None:
    save(stack, webhook_workflow("first-owner", "shared", respond("reply", 200, body="one")))
    second = webhook_workflow("second-owner", "shared", respond("reply", 200, body="two"))
    status, _, body = stack.http("POST", "/api/v1/workflows", second)
    assert status == 409
    assert "first-owner" in body["error"]


def test_workflow_headers_cannot_break_the_response(stack: Stack) -> None:
    headers = {
        "Content-Length": "999",
        "Transfer-Encoding": "chunked",
        "Connection": "close",
        "X-Injected": "a\r\nSet-Cookie: evil=1",
        "Bad Name": "x",
        "X-Fine": "yes",
    }
    save(stack, webhook_workflow("hook-headers", "headers", respond("reply", 200, headers=headers, body="intact")))
    status, got, body = http(stack.http_url, "POST", "/webhook/headers", {})
    assert (status, body) == (200, "intact")
    assert got["x-fine"] == "yes"
    assert got["content-length"] == "6"
    assert "set-cookie" not in got and "x-injected" not in got and "transfer-encoding" not in got


def test_on_received_mode_answers_202_at_once(stack: Stack) -> None:
    save(stack, webhook_workflow("hook-async", "async", code("slow", SLOW), response_mode="onReceived"))
    status, _, body = http(stack.http_url, "POST", "/webhook/async", {})
    assert status == 202, body
    assert body["status"] in {"pending", "running"}
    assert body["executionId"]
