"""Helpers for tests against the real stack: workflow builders and HTTP to any webserver."""

from __future__ import annotations

import itertools
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from tests.integration.conftest import Stack

JSONDict = dict[str, Any]


def http(
    base_url: str,
    method: str,
    path: str,
    body: Any = None,
    *,
    headers: Mapping[str, str] | None = None,
    raw: bytes | None = None,
) -> tuple[int, dict[str, str], Any]:
    """One real HTTP request: (status, headers with lower-case names, parsed JSON body or text)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    hdrs = {"Content-Type": "application/json"} if data is not None and raw is None else {}
    hdrs.update(headers or {})
    req = urllib.request.Request(base_url + path, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            status, rhdrs, payload = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        status, rhdrs, payload = err.code, err.headers, err.read()
    lower: dict[str, str] = {}
    for name, value in rhdrs.items():
        lower[name.lower()] = f"{lower[name.lower()]}, {value}" if name.lower() in lower else value
    text = payload.decode(errors="replace")
    try:
        return status, lower, json.loads(text)
    except ValueError:
        return status, lower, text


def webhook_workflow(
    workflow_id: str,
    path: str,
    *steps: JSONDict,
    method: str = "POST",
    response_mode: str | None = None,
) -> JSONDict:
    """A webhook trigger followed by ``steps`` in a chain."""
    config: JSONDict = {"path": path, "method": method}
    if response_mode:
        config["responseMode"] = response_mode
    nodes = [{"id": "hook", "type": "triggers/webhook", "config": config}, *steps]
    return {
        "id": workflow_id,
        "name": workflow_id.replace("-", " ").title(),
        "active": True,
        "nodes": nodes,
        "connections": [{"from": a["id"], "to": b["id"]} for a, b in itertools.pairwise(nodes)],
    }


def manual_workflow(workflow_id: str, *steps: JSONDict) -> JSONDict:
    nodes = [{"id": "start", "type": "triggers/manual", "config": {}}, *steps]
    return {
        "id": workflow_id,
        "name": workflow_id,
        "active": True,
        "nodes": nodes,
        "connections": [{"from": a["id"], "to": b["id"]} for a, b in itertools.pairwise(nodes)],
    }


def respond(node_id: str, status: Any = 200, *, headers: JSONDict | None = None, body: Any = None) -> JSONDict:
    config: JSONDict = {"status": status, "body": body}
    if headers is not None:
        config["headers"] = headers
    return {"id": node_id, "type": "core/respond-to-webhook", "config": config}


def code(node_id: str, source: str) -> JSONDict:
    return {"id": node_id, "type": "core/code", "config": {"code": source}}


def set_values(node_id: str, values: JSONDict) -> JSONDict:
    return {"id": node_id, "type": "core/set", "config": {"values": values}}


def save(stack: Stack, workflow: JSONDict, *, headers: Mapping[str, str] | None = None) -> JSONDict:
    status, _, body = stack.http("POST", "/api/v1/workflows", workflow, headers=dict(headers or {}))
    assert status == 201, body
    assert isinstance(body, dict)
    return body


def wait_for(check: Callable[[], Any], *, timeout_s: float = 30.0, what: str = "condition") -> Any:
    end = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < end:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"{what} not reached in {timeout_s}s; last: {last!r}")
