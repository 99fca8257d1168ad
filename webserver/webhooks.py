"""``/webhook/{path}``: hand the request to the runner, answer what the workflow chose (DESIGN §5)."""

from __future__ import annotations

import codecs
import json
import logging
import re
from collections.abc import Mapping
from typing import Any

from aiohttp import web
from multidict import CIMultiDict, MultiMapping

from runner._proto import workflow_pb2 as pb
from webserver.bodies import decode_text, is_json_content_type, parse_json, read_limited
from webserver.context import RPC_MARGIN_S, settings_of, stub_of
from webserver.convert import dumps, loads, status_name
from webserver.errors import error_response

log = logging.getLogger(__name__)

HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "content-encoding",  # the webserver never encodes the body, so the header would lie
    }
)
"""Headers a workflow may not set: the server frames the message itself."""
_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_BAD_VALUE_CHAR = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
NO_BODY_STATUSES = frozenset({204, 205, 304})


# --- the request -----------------------------------------------------------------------------------------------------


def headers_for_runner(headers: Mapping[str, str] | MultiMapping[str]) -> dict[str, str]:
    """Request headers, lower-cased names; a repeated header's values joined by ", " (RFC 9110 §5.3)."""
    out: dict[str, str] = {}
    for name, value in headers.items():
        key = name.lower()
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def query_for_runner(query: MultiMapping[str]) -> dict[str, str | list[str]]:
    """Query parameters: a single value as a string, a repeated one as a list."""
    out: dict[str, str | list[str]] = {}
    for key in query:
        if key not in out:
            values = query.getall(key)
            out[key] = values[0] if len(values) == 1 else list(values)
    return out


async def read_webhook_body(request: web.Request, limit: int) -> Any:
    """Parsed JSON for a JSON request, else the text; an empty body is None."""
    raw = await read_limited(request, limit)
    if is_json_content_type(request.content_type):
        return parse_json(raw)
    return decode_text(raw, request.charset) if raw else None


def webhook_path(raw: str) -> str:
    return raw.strip("/")


async def handle_webhook(request: web.Request) -> web.StreamResponse:
    """Any method on ``/webhook/{path}``: the runner decides 404 (path) and 405 (method)."""
    settings = settings_of(request)
    body = await read_webhook_body(request, settings.max_body_bytes)
    timeout_s = settings.webhook_timeout_seconds
    call = pb.TriggerWebhookRequest(
        method=request.method.upper(),
        path=webhook_path(request.match_info["path"]),
        headers_json=dumps(headers_for_runner(request.headers)),
        query_json=dumps(query_for_runner(request.query)),
        body_json=dumps(body),
        timeout_ms=int(timeout_s * 1000),
    )
    reply: pb.ExecutionReply = await stub_of(request).TriggerWebhook(call, timeout=timeout_s + RPC_MARGIN_S)
    return webhook_http_response(reply)


# --- the response ----------------------------------------------------------------------------------------------------


def _header_values(value: Any) -> list[str] | None:
    """A header value from the workflow as strings; None when it cannot be a header."""
    if isinstance(value, list):
        out: list[str] = []
        for item in value:
            one = None if isinstance(item, list) else _header_values(item)
            if one is None:
                return None
            out.extend(one)
        return out or None
    if isinstance(value, bool | int | float):
        text = json.dumps(value)
    elif isinstance(value, str):
        text = value.strip()
    else:
        return None
    if _BAD_VALUE_CHAR.search(text):
        return None
    try:
        text.encode("latin-1")
    except UnicodeEncodeError:
        return None
    return [text]


def safe_headers(raw: Any, *, source: str = "") -> CIMultiDict[str]:
    """The workflow's headers minus those that would break the response (logged as dropped)."""
    out: CIMultiDict[str] = CIMultiDict()
    if raw is None:
        return out
    if not isinstance(raw, dict):
        log.warning("webhook response headers of %s are not an object; dropped", source or "the execution")
        return out
    for name, value in raw.items():
        values = _header_values(value) if isinstance(name, str) and _TOKEN.match(name) else None
        if values is None or name.lower() in HOP_BY_HOP:
            log.warning("webhook response header %r of %s dropped", name, source or "the execution")
            continue
        for item in values:
            out.add(name, item)
    return out


def _charset(content_type: str) -> str:
    for part in content_type.split(";")[1:]:
        key, _, value = part.partition("=")
        if key.strip().lower() == "charset":
            try:
                return codecs.lookup(value.strip().strip('"')).name
            except LookupError:
                break
    return "utf-8"


def render_body(body: Any, headers: CIMultiDict[str]) -> bytes:
    """Object or array → JSON; anything else → text; null → nothing. Sets Content-Type unless given."""
    if body is None:
        return b""
    if isinstance(body, dict | list):
        headers.setdefault("Content-Type", "application/json")
        text = json.dumps(body, ensure_ascii=False)
    else:
        headers.setdefault("Content-Type", "text/plain; charset=utf-8")
        text = body if isinstance(body, str) else json.dumps(body)
    return text.encode(_charset(headers["Content-Type"]), errors="replace")


def _status(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    # 1xx are interim responses: sent as the final one, they would hang or break the client.
    return value if isinstance(value, int) and 200 <= value <= 599 else None


def workflow_response(execution_id: str, recorded: Any) -> web.Response:
    """The HTTP response a workflow recorded with ``_webhookResponse``."""
    source = f"execution {execution_id}"
    if not isinstance(recorded, dict):
        message = "the workflow's webhook response is not an object"
        return error_response(500, message, extra={"executionId": execution_id})
    status = _status(recorded.get("status", 200))
    if status is None:
        message = f"the workflow's webhook response status {recorded.get('status')!r} is not between 200 and 599"
        return error_response(500, message, extra={"executionId": execution_id})
    headers = safe_headers(recorded.get("headers"), source=source)
    if status in NO_BODY_STATUSES:
        headers.popall("Content-Type", None)
        return web.Response(status=status, headers=headers)
    body = render_body(recorded.get("body"), headers)
    return web.Response(status=status, body=body, headers=headers)


_TRACEBACK = "Traceback (most recent call last)"


def client_message(error: str) -> str:
    """A failure message fit for a webhook caller: never a traceback, whatever the runner sent."""
    if _TRACEBACK not in error:
        return error
    lines = [line.strip() for line in error.splitlines() if line.strip() and not line.startswith((" ", "\t"))]
    tail = [line for line in lines if not line.startswith(_TRACEBACK)]
    return tail[-1] if tail else "execution failed"


def webhook_http_response(reply: pb.ExecutionReply) -> web.Response:
    """Map an ``ExecutionReply`` to the webhook caller's response (DESIGN §5)."""
    execution_id = reply.execution_id
    if reply.status in (pb.EXECUTION_STATUS_FAILED, pb.EXECUTION_STATUS_CANCELLED):
        # A failed run never reports success, even when a respond node had already run.
        default = "execution failed" if reply.status == pb.EXECUTION_STATUS_FAILED else "execution was cancelled"
        return error_response(500, client_message(reply.error or default), extra={"executionId": execution_id})
    if reply.webhook_response_json:
        return workflow_response(execution_id, loads(reply.webhook_response_json))
    if reply.status in (pb.EXECUTION_STATUS_WAITING, pb.EXECUTION_STATUS_PENDING, pb.EXECUTION_STATUS_RUNNING):
        return web.json_response({"executionId": execution_id, "status": status_name(reply.status)}, status=202)
    if reply.status == pb.EXECUTION_STATUS_COMPLETED:
        return web.json_response(loads(reply.output_json), status=200)
    log.error("runner answered execution %s with status %s", execution_id, reply.status)
    return error_response(500, f"the runner answered without a status for execution {execution_id}")
