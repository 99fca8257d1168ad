"""ExecutionReply → the webhook caller's HTTP response (DESIGN §5), and header safety."""

from __future__ import annotations

import json
from typing import Any

import pytest
from aiohttp import web

from runner._proto import workflow_pb2 as pb
from webserver.webhooks import client_message, safe_headers, webhook_http_response


def _reply(status: int, *, response: Any = None, output: Any = None, error: str = "") -> pb.ExecutionReply:
    return pb.ExecutionReply(
        execution_id="ex1",
        status=status,  # type: ignore[arg-type]
        webhook_response_json=json.dumps(response) if response is not None else "",
        output_json=json.dumps(output),
        error=error,
    )


def _body(resp: web.Response) -> bytes:
    assert isinstance(resp.body, bytes | None)
    return resp.body or b""


def test_recorded_response_gives_its_status_headers_and_json_body() -> None:
    reply = _reply(
        pb.EXECUTION_STATUS_COMPLETED, response={"status": 201, "headers": {"X-Trace": "t1"}, "body": {"a": 1}}
    )
    resp = webhook_http_response(reply)
    assert resp.status == 201
    assert resp.headers["X-Trace"] == "t1"
    assert resp.headers["Content-Type"] == "application/json"
    assert json.loads(_body(resp)) == {"a": 1}


def test_array_body_is_json() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_COMPLETED, response={"status": 200, "body": [1, "x"]}))
    assert resp.headers["Content-Type"] == "application/json"
    assert json.loads(_body(resp)) == [1, "x"]


def test_string_body_is_utf8_text() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_COMPLETED, response={"status": 200, "body": "héllo"}))
    assert resp.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert _body(resp) == "héllo".encode()


def test_string_body_keeps_the_workflows_content_type_and_charset() -> None:
    headers = {"Content-Type": "text/html; charset=iso-8859-1"}
    resp = webhook_http_response(
        _reply(pb.EXECUTION_STATUS_COMPLETED, response={"status": 200, "headers": headers, "body": "<p>é</p>"})
    )
    assert resp.headers["Content-Type"] == "text/html; charset=iso-8859-1"
    assert _body(resp) == "<p>é</p>".encode("latin-1")


def test_number_body_is_text() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_COMPLETED, response={"status": 200, "body": 42}))
    assert (resp.headers["Content-Type"], _body(resp)) == ("text/plain; charset=utf-8", b"42")


def test_null_body_is_empty() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_COMPLETED, response={"status": 200, "body": None}))
    assert _body(resp) == b""


def test_204_sends_no_body() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_COMPLETED, response={"status": 204, "body": {"a": 1}}))
    assert resp.status == 204
    assert _body(resp) == b""


def test_failed_run_is_500_even_when_a_response_was_recorded() -> None:
    reply = _reply(pb.EXECUTION_STATUS_FAILED, response={"status": 201, "body": "ok"}, error="node 'x' failed: boom")
    resp = webhook_http_response(reply)
    assert resp.status == 500
    assert json.loads(_body(resp)) == {"executionId": "ex1", "error": "node 'x' failed: boom"}


def test_cancelled_run_is_never_success() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_CANCELLED, response={"status": 200, "body": "ok"}))
    assert resp.status == 500
    assert json.loads(_body(resp))["executionId"] == "ex1"


@pytest.mark.parametrize(
    ("status", "name"),
    [
        (pb.EXECUTION_STATUS_WAITING, "waiting"),
        (pb.EXECUTION_STATUS_PENDING, "pending"),
        (pb.EXECUTION_STATUS_RUNNING, "running"),
    ],
)
def test_unfinished_run_without_response_is_202(status: int, name: str) -> None:
    resp = webhook_http_response(_reply(status))
    assert resp.status == 202
    assert json.loads(_body(resp)) == {"executionId": "ex1", "status": name}


def test_paused_run_after_a_respond_node_answers_what_the_node_chose() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_WAITING, response={"status": 201, "body": "queued"}))
    assert (resp.status, _body(resp)) == (201, b"queued")


def test_completed_run_without_response_is_200_with_the_output() -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_COMPLETED, output={"x": [1, 2]}))
    assert resp.status == 200
    assert json.loads(_body(resp)) == {"x": [1, 2]}


@pytest.mark.parametrize("status", [99, 100, 600, -1, "abc", True, None])
def test_status_the_server_cannot_send_is_500(status: Any) -> None:
    resp = webhook_http_response(_reply(pb.EXECUTION_STATUS_COMPLETED, response={"status": status, "body": "x"}))
    assert resp.status == 500
    assert str(status) in json.loads(_body(resp))["error"]


def test_hop_by_hop_and_invalid_headers_are_dropped() -> None:
    raw = {
        "Content-Length": "999",
        "Transfer-Encoding": "chunked",
        "Connection": "close",
        "content-encoding": "gzip",
        "Bad Header": "x",
        "X-Split": "a\r\nSet-Cookie: evil=1",
        "X-Null": "a\x00b",
        "X-Object": {"a": 1},
        "X-Unicode": "snow ☃",
        "": "empty name",
        "X-Ok": " yes ",
        "X-Count": 5,
        "X-Flag": True,
        "Set-Cookie": ["a=1", "b=2"],
    }
    headers = safe_headers(raw)
    assert sorted(headers.items()) == sorted(
        [("X-Ok", "yes"), ("X-Count", "5"), ("X-Flag", "true"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]
    )


def test_headers_that_are_not_an_object_are_dropped() -> None:
    assert len(safe_headers(["X-A", "1"])) == 0


def test_a_traceback_never_reaches_the_caller() -> None:
    error = (
        "Traceback (most recent call last):\n"
        '  File "x.py", line 1, in main\n'
        '    raise ValueError("boom")\n'
        "ValueError: boom"
    )
    assert client_message(error) == "ValueError: boom"
    assert client_message("node 'x' failed: boom") == "node 'x' failed: boom"
