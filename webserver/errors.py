"""Errors as clients see them: ``{"error": "<message>"}`` with the right status.

:class:`ApiError` is what handlers raise; :func:`error_from_rpc` turns a gRPC
failure into one; :func:`error_middleware` makes sure that every failure,
expected or not, leaves as JSON and that no traceback reaches a client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from typing import Any

import grpc
import grpc.aio
from aiohttp import web

from webserver.context import SETTINGS
from webserver.routespec import Handler

log = logging.getLogger(__name__)

INTERNAL_ERROR = "internal error; see the webserver log"

ERROR_REASON_KEY = "smartbotic-error"
"""Trailing metadata: a machine-readable reason that overrides the status-code mapping."""
ALLOW_KEY = "smartbotic-allow"
"""Trailing metadata with ``method_not_allowed``: the allowed methods, comma-separated."""

GRPC_TO_HTTP: Mapping[grpc.StatusCode, int] = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 413,
    grpc.StatusCode.UNIMPLEMENTED: 501,
}
RUNNER_DOWN = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
REASON_TO_HTTP: Mapping[str, int] = {"pause_expired": 410, "method_not_allowed": 405}


class ApiError(Exception):
    """An error answer: status, message and extra headers."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    def response(self) -> web.Response:
        return error_response(self.status, self.message, headers=self.headers, extra=self.extra)


def error_response(
    status: int, message: str, *, headers: Mapping[str, str] | None = None, extra: Mapping[str, Any] | None = None
) -> web.Response:
    body: dict[str, Any] = {**(extra or {}), "error": message}
    return web.json_response(body, status=status, headers=headers)


def _text(value: str | bytes) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def error_from_rpc(
    code: grpc.StatusCode,
    details: str | None,
    trailing: Iterable[tuple[str, str | bytes]] | None,
    *,
    runner_target: str,
) -> ApiError:
    """Map a failed RPC to the HTTP error the client gets."""
    message = details or code.name.lower().replace("_", " ")
    if code in RUNNER_DOWN:
        return ApiError(503, f"runner unavailable at {runner_target}: {message}")
    meta = {key.lower(): _text(value) for key, value in (trailing or ())}
    reason = meta.get(ERROR_REASON_KEY, "")
    status = REASON_TO_HTTP.get(reason) or GRPC_TO_HTTP.get(code, 500)
    headers: dict[str, str] = {}
    if status == 405:
        allowed = [m.strip().upper() for m in meta.get(ALLOW_KEY, "").split(",") if m.strip()]
        headers["Allow"] = ", ".join(allowed)
    if status == 500:
        log.error("runner answered %s: %s", code.name, message)
    return ApiError(status, message, headers=headers)


_KEEP_HTTP_EXCEPTION_HEADERS = frozenset({"allow", "www-authenticate", "retry-after"})


def _from_http_exception(request: web.Request, exc: web.HTTPException) -> web.Response:
    headers = {k: v for k, v in exc.headers.items() if k.lower() in _KEEP_HTTP_EXCEPTION_HEADERS}
    if exc.status == 404:
        message = f"no route for {request.method} {request.path}"
    elif exc.status == 405:
        message = f"method {request.method} is not allowed on {request.path}; allowed: {headers.get('Allow', '')}"
    elif exc.status == 413:
        limit = request.app[SETTINGS].max_body_bytes
        message = f"request body exceeds the limit of {limit} bytes (SMARTBOTIC_MAX_BODY_BYTES)"
    else:
        message = exc.text or exc.reason
    return error_response(exc.status, message, headers=headers)


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as exc:
        return exc.response()
    except grpc.aio.AioRpcError as exc:
        err = error_from_rpc(
            exc.code(), exc.details(), exc.trailing_metadata(), runner_target=request.app[SETTINGS].runner_target
        )
        if err.status >= 500:
            log.warning("%s %s: %s", request.method, request.path, err.message)
        return err.response()
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _from_http_exception(request, exc)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("unhandled error on %s %s", request.method, request.path)
        return error_response(500, INTERNAL_ERROR)
