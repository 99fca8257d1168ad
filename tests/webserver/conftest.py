"""Webserver tests: pure ones run the app in-process; live ones use the real stack (runner + webserver)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from runner.settings import Settings
from tests.integration.conftest import stack, stack_env  # noqa: F401  (the real-stack fixtures, for tests here)
from webserver.app import make_app

NO_RUNNER = "127.0.0.1:9"
"""A target nothing listens on (discard port): RPCs fail fast with UNAVAILABLE."""

AppClient = Callable[..., AbstractAsyncContextManager[TestClient[Any, Any]]]


@pytest.fixture
def app_client() -> AppClient:
    """``async with app_client(**settings) as client``: the app on a real socket, settings overridden."""

    @asynccontextmanager
    async def start(channel: Any = None, **overrides: Any) -> AsyncIterator[TestClient[Any, Any]]:
        settings = Settings(**{"runner_target": NO_RUNNER, **overrides})
        async with TestServer(make_app(settings, channel)) as server:
            client: TestClient[Any, Any] = TestClient(server)
            async with client:
                yield client

    return start
