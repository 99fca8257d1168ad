"""The aiohttp application: routes from the table, error middleware, the runner channel."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc.aio
from aiohttp import web

from runner._proto import workflow_pb2_grpc
from runner.settings import Settings
from webserver.auth import with_auth
from webserver.bodies import expect_continue
from webserver.context import KEYRING, ROUTES, SETTINGS, STUB
from webserver.errors import error_middleware
from webserver.keyring import KeyRing
from webserver.routes import ROUTES as ROUTE_TABLE
from webserver.routespec import Route

CHANNEL_OPTIONS = (
    ("grpc.max_receive_message_length", 256 * 1024 * 1024),
    ("grpc.max_send_message_length", -1),
)
"""Execution lists and details can exceed gRPC's 4 MiB default; the runner bounds what it sends."""


_stub: Any = workflow_pb2_grpc.RunnerServiceStub  # generated code carries no type hints


def _runner_channel(channel: Any | None) -> Callable[[web.Application], AsyncIterator[None]]:
    """Open the channel (unless one was given) on start-up, close it on cleanup."""

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        if channel is not None:
            app[STUB] = _stub(channel)
            yield
            return
        owned = grpc.aio.insecure_channel(app[SETTINGS].runner_target, options=CHANNEL_OPTIONS)
        app[STUB] = _stub(owned)
        try:
            yield
        finally:
            await owned.close()

    return lifecycle


def make_app(
    settings: Settings, channel: Any | None = None, *, routes: tuple[Route, ...] = ROUTE_TABLE
) -> web.Application:
    """The webserver app. ``channel``: a ``grpc.aio`` channel to use instead of one to settings.runner_target.

    The API keys are hashed here and the app keeps settings without them.
    """
    app = web.Application(middlewares=[error_middleware], client_max_size=settings.max_body_bytes)
    app[KEYRING] = KeyRing(settings.api_keys)
    app[SETTINGS] = dataclasses.replace(settings, api_keys={})
    app[ROUTES] = routes
    for route in routes:
        handler = with_auth(route.handler, route.auth)
        app.router.add_route(route.method, route.path, handler, name=route.operation_id, expect_handler=expect_continue)
    app.cleanup_ctx.append(_runner_channel(channel))
    return app
