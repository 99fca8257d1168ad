"""Resuming a paused execution (DESIGN §6): token, expiry, one atomic claim, then the walk.

Order of checks: unknown id → NOT_FOUND; wrong token → PERMISSION_DENIED;
expired → FAILED_PRECONDITION with reason ``pause_expired`` (REST 410), even
after the sweeper has acted; not waiting → FAILED_PRECONDITION with the
current status (REST 409); then ``waiting → running`` in one conditional
update, so of several concurrent answers exactly one wins.
"""

from __future__ import annotations

import hmac
from datetime import UTC, datetime
from typing import Any

import grpc

from .engine.model import JSON, ResumeAnswer
from .engine.walk import hash_token
from .errors import ServiceError, conflict, not_found
from .runtime import RunHandle, Runtime, now_ms


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _pause_for_token(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The pause a token would answer: the current one, or the last one after it ended."""
    pause = doc.get("pause")
    if doc.get("status") == "waiting" and pause and pause.get("tokenHash"):
        return dict(pause)
    last = doc.get("lastPause")
    return dict(last) if last and last.get("tokenHash") else None


async def resume_with_token(runtime: Runtime, execution_id: str, token: str, payload: JSON, by: str) -> RunHandle:
    store = runtime.store.executions
    doc = await store.get(execution_id)
    if doc is None:
        raise not_found(f"execution {execution_id!r} not found")
    pause = _pause_for_token(doc)
    expected_hash = pause.get("tokenHash", "") if pause else ""
    # Constant time, and the same work whether or not there is a pause to compare with.
    matches = hmac.compare_digest(hash_token(token or ""), expected_hash or "0" * 64)
    if pause is None or not matches:
        raise ServiceError(
            grpc.StatusCode.PERMISSION_DENIED,
            f"the token does not match a pause of execution {execution_id!r}",
            reason="bad_token",
        )
    now = now_ms()
    expires = pause.get("expiresAt")
    if pause.get("expired") or (expires is not None and expires <= now):
        raise conflict(
            f"the approval expired at {iso(expires or now)}; it can no longer be answered", reason="pause_expired"
        )
    if doc["status"] != "waiting" or doc.get("pause", {}).get("key") != pause["key"]:
        raise conflict(
            f"execution {execution_id!r} is {doc['status']}, not waiting for this answer", reason="not_waiting"
        )
    claimed = await store.claim(
        execution_id,
        {"status": "waiting", "pause.key": pause["key"], "pause.tokenHash": expected_hash},
        owner=runtime.runner_id,
        lease_until=runtime.lease()["until"],
        now_ms=now,
        extra={"lastPause": {**pause, "answeredAt": now, "answeredBy": by}, "status": "running"},
    )
    if not claimed:
        current = await store.get(execution_id, light=True)
        status = current["status"] if current else "gone"
        raise conflict(f"execution {execution_id!r} was answered concurrently; it is {status}", reason="not_waiting")
    doc["status"] = "running"
    answer = ResumeAnswer(key=pause["key"], payload=payload, by=by, at=now)
    return await runtime.continue_stored(doc, answer)
