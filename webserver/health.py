"""``GET /healthz``: is the runner reachable, and is its database (DESIGN §10)."""

from __future__ import annotations

import grpc.aio
from aiohttp import web

from runner._proto import workflow_pb2 as pb
from webserver.context import settings_of, stub_of
from webserver.errors import RUNNER_DOWN

HEALTH_TIMEOUT_S = 3.0


async def healthz(request: web.Request) -> web.StreamResponse:
    target = settings_of(request).runner_target
    try:
        reply: pb.HealthResponse = await stub_of(request).Health(pb.HealthRequest(), timeout=HEALTH_TIMEOUT_S)
    except grpc.aio.AioRpcError as exc:
        if exc.code() in RUNNER_DOWN:
            problem = f"runner unavailable at {target}: {exc.details() or exc.code().name}"
        else:
            problem = f"runner at {target} failed its health check ({exc.code().name}): {exc.details()}"
        body = {"status": "unavailable", "runner": "unavailable", "database": "unknown", "error": problem}
        return web.json_response(body, status=503)
    runner = reply.runner_id or target
    if not reply.database_ok:
        problem = f"database unreachable: {reply.message or 'the runner cannot reach MongoDB'}"
        body = {"status": "degraded", "runner": runner, "database": "unavailable", "error": problem}
        return web.json_response(body, status=503)
    return web.json_response({"status": "ok", "runner": runner, "database": "ok"})
