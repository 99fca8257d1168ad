"""The OpenAPI 3.1 document, generated from the route table (so it cannot drift from the server)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from webserver.context import ROUTES
from webserver.routespec import ANY_METHOD, Auth, Route

VERSION = "0.1.0"

STATUS_TEXT: dict[int, str] = {
    200: "OK",
    201: "Created",
    202: "Accepted: queued, waiting or still running; the run goes on",
    400: "Malformed JSON body, or a bad parameter or definition (the message names it)",
    401: "Missing or wrong API key (with WWW-Authenticate: Bearer)",
    403: "Wrong token",
    404: "Not found",
    405: "Method not allowed (Allow lists the allowed ones)",
    409: "Conflict with the current state (the message says which)",
    410: "The pause has expired (the message gives the expiry time)",
    413: "Request body over SMARTBOTIC_MAX_BODY_BYTES",
    500: "Internal error, or (webhooks) the execution failed",
    501: "The runner does not implement this yet",
    503: "The runner (or its database) is unavailable",
}

PATH_PARAMS: dict[str, dict[str, Any]] = {
    "id": {"schema": {"type": "string"}, "description": "Workflow or execution id."},
    "version": {"schema": {"type": "integer", "minimum": 1}, "description": "Workflow version number."},
    "path": {"schema": {"type": "string"}, "description": "The webhook path; may contain slashes."},
}

_NULLABLE_STRING = {"type": ["string", "null"]}
_MS = {"type": ["integer", "null"], "description": "Milliseconds since the epoch."}
_OPEN_OBJECT = {"type": "object", "additionalProperties": True}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _list_of(item: str) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["items", "nextPageToken"],
        "properties": {"items": {"type": "array", "items": _ref(item)}, "nextPageToken": _NULLABLE_STRING},
    }


def _version_summary() -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "version": {"type": "integer"},
            "changeNote": {"type": "string"},
            "savedBy": {"type": "string"},
            "savedAt": {"type": ["string", "null"], "format": "date-time"},
        },
    }


SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}},
    "AnyValue": {"description": "Any JSON value."},
    "OpenApiDocument": _OPEN_OBJECT,
    "WebhookResponse": {"description": "Whatever the workflow chose (status, headers, body), or its last output."},
    "Accepted": {
        "type": "object",
        "properties": {
            "executionId": {"type": "string"},
            "status": {"type": "string", "enum": ["pending", "running", "waiting"]},
        },
    },
    "Health": {
        "type": "object",
        "properties": {
            "status": {"type": "string", "enum": ["ok", "degraded", "unavailable"]},
            "runner": {"type": "string"},
            "database": {"type": "string"},
            "error": {"type": "string"},
        },
    },
    "Workflow": {
        "type": "object",
        "description": "A workflow definition (DESIGN §3) plus read-only fields (version, timestamps, archived).",
        "properties": {
            "id": {"type": "string"},
            "name": {"type": "string"},
            "active": {"type": "boolean"},
            "settings": {"type": "object"},
            "nodes": {"type": "array", "items": {"type": "object"}},
            "connections": {"type": "array", "items": {"type": "object"}},
        },
        "additionalProperties": True,
    },
    "WorkflowInput": {"allOf": [_ref("Workflow"), {"properties": {"changeNote": {"type": "string"}}}]},
    "WorkflowList": _list_of("Workflow"),
    "VersionSummary": _version_summary(),
    "VersionList": _list_of("VersionSummary"),
    "VersionDetail": {
        "allOf": [
            _ref("VersionSummary"),
            {
                "properties": {
                    "workflow": _ref("Workflow"),
                    "diff": {"type": "array", "items": {"type": "object"}, "description": "RFC 6902 patch"},
                }
            },
        ]
    },
    "ChangeNoteInput": {"type": "object", "properties": {"changeNote": {"type": "string"}}},
    "Pause": {
        "type": "object",
        "properties": {
            "nodeId": {"type": "string"},
            "token": _NULLABLE_STRING,
            "reason": {"type": "string"},
            "fields": {},
            "expiresAt": _MS,
            "kind": _NULLABLE_STRING,
        },
    },
    "ExecutionReply": {
        "type": "object",
        "properties": {
            "executionId": {"type": "string"},
            "workflowId": _NULLABLE_STRING,
            "status": {"type": "string", "enum": ["pending", "running", "completed", "failed", "cancelled", "waiting"]},
            "output": {},
            "webhookResponse": {},
            "pause": {"oneOf": [_ref("Pause"), {"type": "null"}]},
            "error": _NULLABLE_STRING,
            "errorNodeId": _NULLABLE_STRING,
            "workflowVersion": {"type": ["integer", "null"]},
        },
    },
    "Execution": {**_OPEN_OBJECT, "description": "A stored execution as the runner details it."},
    "ExecutionList": _list_of("Execution"),
    "PendingItem": {
        "type": "object",
        "properties": {
            "executionId": {"type": "string"},
            "workflowId": {"type": "string"},
            "workflowName": {"type": "string"},
            "nodeId": {"type": "string"},
            "kind": _NULLABLE_STRING,
            "reason": {"type": "string"},
            "fields": {},
            "expiresAt": _MS,
            "waitingSince": _MS,
        },
    },
    "PendingList": _list_of("PendingItem"),
    "CancelInput": {"type": "object", "properties": {"reason": {"type": "string"}}},
    "ResumeInput": {
        "type": "object",
        "required": ["token"],
        "properties": {
            "token": {"type": "string"},
            "approved": {"type": "boolean"},
            "data": {},
            "by": {"type": "string"},
        },
    },
    "EventInput": {
        "type": "object",
        "required": ["type"],
        "properties": {"type": {"type": "string"}, "key": {"type": "string"}, "data": {}},
    },
    "EventResult": {
        "type": "object",
        "properties": {"resumedExecutionIds": {"type": "array", "items": {"type": "string"}}},
    },
    "NodeType": {
        "type": "object",
        "properties": {
            "type": {"type": "string"},
            "description": {"type": "string"},
            "config": {"type": "object"},
            "outputs": {"type": "array", "items": {"type": "string"}},
            "error": {"type": "string"},
        },
    },
    "NodeTypeList": {
        "type": "object",
        "properties": {"items": {"type": "array", "items": _ref("NodeType")}},
    },
}


def _statuses(route: Route) -> list[int]:
    statuses = {route.ok_status, *route.statuses, 500}
    if route.calls_runner:
        statuses |= {501, 503}
    if route.auth is not Auth.NONE:
        statuses.add(401)
    if route.body is not None:
        statuses |= {400, 413}
    if route.query or "version" in route.path_params:
        statuses.add(400)
    return sorted(statuses)


def _response(route: Route, status: int) -> dict[str, Any]:
    if status == route.ok_status:
        schema = route.ok_schema
    elif status == 202:
        schema = route.accepted_schema or route.ok_schema
    else:
        schema = "Error"
    out: dict[str, Any] = {
        "description": STATUS_TEXT.get(status, "See the message"),
        "content": {"application/json": {"schema": _ref(schema)}},
    }
    if status == 401:
        out["headers"] = {"WWW-Authenticate": {"schema": {"type": "string", "const": "Bearer"}}}
    if status == 405:
        out["headers"] = {"Allow": {"schema": {"type": "string"}}}
    return out


def _parameters(route: Route) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, **PATH_PARAMS.get(name, {"schema": {"type": "string"}})}
        for name in route.path_params
    ]
    for q in route.query:
        schema: dict[str, Any] = {"type": q.type}
        if q.enum:
            schema["enum"] = list(q.enum)
        params.append(
            {"name": q.name, "in": "query", "required": False, "description": q.description, "schema": schema}
        )
    return params


def _security(auth: Auth) -> list[dict[str, list[str]]]:
    if auth is Auth.REQUIRED:
        return [{"bearerAuth": []}]
    if auth is Auth.OPTIONAL:
        return [{}, {"bearerAuth": []}]
    return []


def _operation(route: Route, method: str) -> dict[str, Any]:
    suffix = method.capitalize() if route.method == ANY_METHOD else ""
    op: dict[str, Any] = {
        "operationId": route.operation_id + suffix,
        "summary": route.summary,
        "security": _security(route.auth),
        "parameters": _parameters(route),
        "responses": {str(status): _response(route, status) for status in _statuses(route)},
    }
    if route.body is not None and method not in {"get", "head", "delete", "options"}:
        op["requestBody"] = {
            "description": route.body.description,
            "required": route.body.required,
            "content": {"application/json": {"schema": _ref(route.body.schema)}},
        }
    return op


def build_openapi(routes: Sequence[Route]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        item = paths.setdefault(route.openapi_path, {})
        for method in route.openapi_methods:
            item[method] = _operation(route, method)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Smartbotic Runner",
            "version": VERSION,
            "description": "Webhooks and the REST API of the workflow runner. With SMARTBOTIC_API_KEYS set, "
            "/api/v1 routes need 'Authorization: Bearer <key>' (resume is authorised by its token). "
            'Every error is {"error": "<message>"}.',
        },
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer"}},
        },
    }


async def openapi_document(request: web.Request) -> web.StreamResponse:
    routes: tuple[Route, ...] = request.app[ROUTES]
    return web.json_response(build_openapi(routes))
