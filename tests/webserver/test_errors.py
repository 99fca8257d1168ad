"""gRPC → HTTP mapping and the error middleware."""

from __future__ import annotations

import json
from typing import Any

import grpc
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from runner.settings import Settings
from tests.webserver.conftest import NO_RUNNER, AppClient
from webserver.app import make_app
from webserver.errors import INTERNAL_ERROR, error_from_rpc
from webserver.routes import ROUTES
from webserver.routespec import Auth, Route

TARGET = "runner.example:50051"


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (grpc.StatusCode.NOT_FOUND, 404),
        (grpc.StatusCode.PERMISSION_DENIED, 403),
        (grpc.StatusCode.FAILED_PRECONDITION, 409),
        (grpc.StatusCode.ALREADY_EXISTS, 409),
        (grpc.StatusCode.INVALID_ARGUMENT, 400),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, 413),
        (grpc.StatusCode.UNIMPLEMENTED, 501),
        (grpc.StatusCode.INTERNAL, 500),
        (grpc.StatusCode.UNKNOWN, 500),
        (grpc.StatusCode.ABORTED, 500),
    ],
)
def test_status_code_maps_to_http_status_with_details_as_message(code: grpc.StatusCode, status: int) -> None:
    err = error_from_rpc(code, "workflow 'x' not found", [], runner_target=TARGET)
    assert (err.status, err.message) == (status, "workflow 'x' not found")


@pytest.mark.parametrize("code", [grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED])
def test_runner_down_is_503_naming_the_target(code: grpc.StatusCode) -> None:
    err = error_from_rpc(code, "connection refused", None, runner_target=TARGET)
    assert err.status == 503
    assert err.message.startswith(f"runner unavailable at {TARGET}")


def test_pause_expired_reason_overrides_the_code_with_410() -> None:
    trailing = [("smartbotic-error", "pause_expired")]
    err = error_from_rpc(grpc.StatusCode.FAILED_PRECONDITION, "expired at 2030-01-01", trailing, runner_target=TARGET)
    assert (err.status, err.message) == (410, "expired at 2030-01-01")


def test_other_reason_keeps_the_code_mapping() -> None:
    err = error_from_rpc(
        grpc.StatusCode.FAILED_PRECONDITION, "not waiting", [("smartbotic-error", "conflict")], runner_target=TARGET
    )
    assert err.status == 409


def test_method_not_allowed_reason_is_405_with_allow_header() -> None:
    trailing: list[tuple[str, str | bytes]] = [
        ("smartbotic-error", b"method_not_allowed"),
        ("smartbotic-allow", "get, POST"),
    ]
    err = error_from_rpc(grpc.StatusCode.FAILED_PRECONDITION, "accepts GET, POST", trailing, runner_target=TARGET)
    assert err.status == 405
    assert err.headers == {"Allow": "GET, POST"}


def test_missing_details_fall_back_to_the_code_name() -> None:
    err = error_from_rpc(grpc.StatusCode.NOT_FOUND, "", [], runner_target=TARGET)
    assert err.message == "not found"


async def _explode(request: web.Request) -> web.StreamResponse:
    raise RuntimeError("secret internals /etc/passwd")


async def test_unexpected_exception_is_500_json_without_traceback(caplog: pytest.LogCaptureFixture) -> None:
    boom = Route("GET", "/boom", _explode, "boom", "explodes", 200, "AnyValue", auth=Auth.NONE)
    app = make_app(Settings(runner_target=NO_RUNNER), routes=(*ROUTES, boom))
    async with TestServer(app) as server:
        client: TestClient[Any, Any] = TestClient(server)
        async with client:
            resp = await client.get("/boom")
            text = await resp.text()
    assert resp.status == 500
    assert resp.content_type == "application/json"
    assert json.loads(text) == {"error": INTERNAL_ERROR}
    assert "Traceback" not in text and "secret" not in text
    assert "secret internals" in caplog.text  # ...but the operator sees it


async def test_unknown_route_is_404_json(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.get("/no/such/route")
        assert resp.status == 404
        assert await resp.json() == {"error": "no route for GET /no/such/route"}


async def test_wrong_method_on_a_rest_route_is_405_json_with_allow(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.delete("/api/v1/nodes")
        assert resp.status == 405
        assert resp.headers["Allow"] == "GET"
        assert "not allowed" in (await resp.json())["error"]


async def test_runner_down_is_503_json(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.get("/api/v1/workflows")
        assert resp.status == 503
        assert (await resp.json())["error"].startswith(f"runner unavailable at {NO_RUNNER}")


async def test_healthz_without_runner_is_503_saying_what_is_down(app_client: AppClient) -> None:
    async with app_client() as client:
        resp = await client.get("/healthz")
        body = await resp.json()
    assert resp.status == 503
    assert body["status"] == "unavailable"
    assert NO_RUNNER in body["error"]
