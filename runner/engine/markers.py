"""Engine signals inside a node's output (DESIGN §4): read, validate, strip."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .model import JSON


class MarkerError(ValueError):
    """A marker is malformed; the message is the node's error."""


@dataclass
class Markers:
    output: JSON
    """The node's data with every marker removed: what gets stored."""
    branch: str | None = None
    webhook_response: dict[str, JSON] | None = None
    pause: dict[str, JSON] | None = None
    loop_items: list[JSON] | None = None


def split_markers(raw: JSON, outputs: tuple[str, ...]) -> Markers:
    if not isinstance(raw, dict) or not any(k.startswith("_") for k in raw):
        return Markers(raw)
    data = dict(raw)
    found = Markers(data)
    branch = data.pop("_branch", None)
    if branch is not None:
        if not isinstance(branch, str) or branch not in outputs:
            raise MarkerError(f"_branch {branch!r} is not one of this node's outputs ({', '.join(outputs)})")
        found.branch = branch
    if "_webhookResponse" in data:
        found.webhook_response = _webhook_response(data.pop("_webhookResponse"))
    pause = data.pop("_pause", None)
    if pause is not None:
        if not isinstance(pause, dict):
            raise MarkerError("_pause must be an object {reason, expiresAt, fields, token?}")
        found.pause = pause
    loop_items = data.pop("_loop", None)
    if loop_items is not None:
        if not isinstance(loop_items, list):
            raise MarkerError(f"_loop must be a list of items, not {type(loop_items).__name__}")
        found.loop_items = loop_items
    return found


def _webhook_response(value: Any) -> dict[str, JSON]:
    if not isinstance(value, dict):
        raise MarkerError("_webhookResponse must be an object {status, headers, body}")
    status = value.get("status", 200)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise MarkerError(f"_webhookResponse.status {status!r} is outside 100-599")
    headers = value.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(v, str | int | float) for v in headers.values()):
        raise MarkerError("_webhookResponse.headers must be an object of strings")
    return {"status": status, "headers": {str(k): str(v) for k, v in headers.items()}, "body": value.get("body")}


def output_size(value: JSON) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())
