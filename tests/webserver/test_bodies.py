"""Request bodies: size limit (declared and chunked), JSON parsing, query parameters."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.webserver.conftest import AppClient
from webserver.bodies import decode_text, is_json_content_type, parse_json
from webserver.errors import ApiError


@pytest.mark.parametrize(
    ("content_type", "is_json"),
    [
        ("application/json", True),
        ("application/json; charset=utf-8", True),
        ("Application/JSON", True),
        ("application/merge-patch+json", True),
        ("application/vnd.api+json; charset=utf-8", True),
        ("text/plain", False),
        ("application/x-www-form-urlencoded", False),
        ("application/jsonl", False),
        ("", False),
    ],
)
def test_json_content_types(content_type: str, is_json: bool) -> None:
    assert is_json_content_type(content_type) is is_json


@pytest.mark.parametrize("raw", [b"", b"  \n"])
def test_empty_body_is_null(raw: bytes) -> None:
    assert parse_json(raw) is None


def test_json_body_is_parsed_exactly() -> None:
    assert parse_json(b'{"n": 12345678901234567890, "f": 0.1, "s": "\\u00e9"}') == {
        "n": 12345678901234567890,
        "f": 0.1,
        "s": "é",
    }


def test_malformed_json_names_line_and_column() -> None:
    with pytest.raises(ApiError) as info:
        parse_json(b'{\n  "a": }')
    assert info.value.status == 400
    assert "line 2 column 8" in info.value.message


@pytest.mark.parametrize("raw", [b"NaN", b'{"a": Infinity}', b"\xff\xfe"])
def test_non_json_values_are_rejected(raw: bytes) -> None:
    with pytest.raises(ApiError) as info:
        parse_json(raw)
    assert info.value.status == 400


def test_text_is_decoded_in_its_charset() -> None:
    assert decode_text("é".encode("latin-1"), "iso-8859-1") == "é"
    assert decode_text("é".encode(), None) == "é"
    assert decode_text("é".encode(), "no-such-charset") == "é"


# The checks below run before any RPC: against an app with no runner, reaching the runner is a 503.


async def test_declared_body_over_the_limit_is_413_before_reading(app_client: AppClient) -> None:
    async with app_client(max_body_bytes=100) as client:
        resp = await client.post("/webhook/x", data=b"x" * 101, headers={"Content-Type": "text/plain"})
        assert resp.status == 413
        assert (await resp.json())["error"] == (
            "request body of 101 bytes exceeds the limit of 100 bytes (SMARTBOTIC_MAX_BODY_BYTES)"
        )


async def test_chunked_body_over_the_limit_is_413(app_client: AppClient) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"y" * 50

    async with app_client(max_body_bytes=100) as client:
        resp = await client.post("/webhook/x", data=chunks())
        assert resp.status == 413
        assert "exceeds the limit of 100 bytes (SMARTBOTIC_MAX_BODY_BYTES)" in (await resp.json())["error"]


async def test_rest_body_over_the_limit_is_413(app_client: AppClient) -> None:
    async with app_client(max_body_bytes=100) as client:
        resp = await client.post("/api/v1/workflows", json={"name": "x" * 200})
        assert resp.status == 413


async def test_body_at_the_limit_reaches_the_runner(app_client: AppClient) -> None:
    async with app_client(max_body_bytes=100) as client:
        resp = await client.post("/webhook/x", data=b"x" * 100, headers={"Content-Type": "text/plain"})
        assert resp.status == 503


async def test_malformed_json_webhook_body_is_400(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.post("/webhook/x", data=b'{"a":', headers={"Content-Type": "application/json"})
        assert resp.status == 400
        assert (await resp.json())["error"] == "request body is not valid JSON: Expecting value at line 1 column 6"


async def test_malformed_text_body_is_just_text(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.post("/webhook/x", data=b'{"a":', headers={"Content-Type": "text/plain"})
        assert resp.status == 503


async def test_malformed_json_rest_body_is_400(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.post("/api/v1/workflows", data=b"{nope}", headers={"Content-Type": "application/json"})
        assert resp.status == 400
        assert "line 1 column 2" in (await resp.json())["error"]


async def test_workflow_body_must_be_an_object(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.post("/api/v1/workflows", json=[1])
        assert resp.status == 400
        assert (await resp.json())["error"] == "request body must be a JSON object, not an array"


async def test_resume_without_token_is_400(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.post("/api/v1/executions/e1/resume", json={"approved": True})
        assert resp.status == 400
        assert "'token' is required" in (await resp.json())["error"]


async def test_unknown_status_filter_is_400_listing_the_valid_ones(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.get("/api/v1/executions", params={"status": "done"})
        assert resp.status == 400
        assert (await resp.json())["error"] == (
            "unknown status 'done'; valid statuses: pending, running, completed, failed, cancelled, waiting"
        )


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/workflows?pageSize=abc",
        "/api/v1/workflows?pageSize=0",
        "/api/v1/workflows?includeArchived=maybe",
        "/api/v1/workflows/w/versions/x",
        "/api/v1/workflows/w/versions/99999999999",
        "/api/v1/workflows/w/run?wait=perhaps",
        "/api/v1/workflows/w/run?timeout=-1",
    ],
)
async def test_bad_parameters_are_400(app_client: AppClient, path: str) -> None:
    async with app_client() as client:
        method = "POST" if path.split("?")[0].endswith("/run") else "GET"
        resp = await client.request(method, path)
        assert resp.status == 400
        assert (await resp.json())["error"]


async def test_expect_continue_with_a_body_over_the_limit_is_refused_before_it_is_sent(app_client: AppClient) -> None:
    async with app_client(max_body_bytes=100) as client:
        resp = await client.post("/webhook/x", data=b"z" * 500, expect100=True)
        assert resp.status == 413
        assert "request body of 500 bytes" in (await resp.json())["error"]
