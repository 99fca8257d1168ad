"""Typed keys for what the app and a request carry, and accessors for handlers."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from runner.settings import Settings
from webserver.keyring import KeyRing
from webserver.routespec import Route

SETTINGS = web.AppKey("settings", Settings)
"""Settings with ``api_keys`` emptied: the keys live only as hashes in :data:`KEYRING`."""
KEYRING = web.AppKey("keyring", KeyRing)
ROUTES: web.AppKey[tuple[Route, ...]] = web.AppKey("routes")
"""The route table the app was built from; the OpenAPI document is generated from it."""
STUB: web.AppKey[Any] = web.AppKey("stub")
"""The ``RunnerServiceStub`` on the app's ``grpc.aio`` channel (grpc ships no type stubs)."""

API_KEY_NAME: web.RequestKey[str | None] = web.RequestKey("api_key_name")
"""The name of the API key the caller presented, or ``None``."""

DEFAULT_RPC_TIMEOUT_S = 30.0
"""Deadline of an RPC that does not wait for an execution."""
RPC_MARGIN_S = 5.0
"""Added to a waiting RPC's own timeout, so the runner answers (202) before gRPC gives up."""


def settings_of(request: web.Request) -> Settings:
    return request.app[SETTINGS]


def stub_of(request: web.Request) -> Any:
    return request.app[STUB]


def api_key_name(request: web.Request) -> str:
    """The caller's API key name, or "" without keys (saved_by, resumed_by, ...)."""
    return request.get(API_KEY_NAME) or ""
