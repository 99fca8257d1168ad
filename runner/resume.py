"""Resuming a paused execution (DESIGN §6): token, expiry, one atomic claim, then the walk.

Order of checks: unknown id → NOT_FOUND; a token that matches neither the
current pause nor any ended one → PERMISSION_DENIED; the token's pause
expired → FAILED_PRECONDITION with reason ``pause_expired`` (REST 410), even
after the sweeper has acted; its pause already ended (answered, cancelled) or
the execution is not waiting → FAILED_PRECONDITION with the current status
(REST 409); then ``waiting → running`` in one conditional update, so of
several concurrent answers exactly one wins.

Ended pauses keep their token hash in ``spentPauses``: a token is single-use
and bound to one execution, one paused node and one loop iteration.
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


def _find_pause(doc: dict[str, Any], token_hash: str) -> tuple[dict[str, Any] | None, bool]:
    """The pause this token belongs to, and whether it is the live one. Every candidate is compared
    in constant time; the loop does not stop early."""
    found: dict[str, Any] | None = None
    live = False
    pause = doc.get("pause")
    current = pause.get("tokenHash") if doc.get("status") == "waiting" and pause else None
    if hmac.compare_digest(token_hash, current or "-") and pause is not None:
        found, live = pause, True
    for spent in doc.get("spentPauses") or []:
        if hmac.compare_digest(token_hash, spent.get("tokenHash", "")) and found is None:
            found = spent
    return found, live


def spent_record(pause: dict[str, Any], *, now: int, by: str, expired: bool = False) -> dict[str, JSON]:
    return {
        "tokenHash": pause.get("tokenHash"),
        "key": pause.get("key"),
        "expiresAt": pause.get("expiresAt"),
        "endedAt": now,
        "endedBy": by,
        "expired": expired,
    }


async def resume_with_token(runtime: Runtime, execution_id: str, token: str, payload: JSON, by: str) -> RunHandle:
    store = runtime.store.executions
    doc = await store.get(execution_id)
    if doc is None:
        raise not_found(f"execution {execution_id!r} not found")
    token_hash = hash_token(token or "")
    pause, live = _find_pause(doc, token_hash)
    if pause is None:
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
    if not live:
        raise conflict(
            f"this pause of execution {execution_id!r} was already answered; the execution is {doc['status']}",
            reason="not_waiting",
        )
    claimed = await store.claim(
        execution_id,
        {"status": "waiting", "pause.key": pause["key"], "pause.tokenHash": token_hash},
        owner=runtime.runner_id,
        lease_until=runtime.lease()["until"],
        now_ms=now,
        spent=spent_record(pause, now=now, by=by),
    )
    if not claimed:
        current = await store.get(execution_id, light=True)
        status = current["status"] if current else "gone"
        raise conflict(f"execution {execution_id!r} was answered concurrently; it is {status}", reason="not_waiting")
    doc["status"] = "running"
    answer = ResumeAnswer(key=pause["key"], payload=payload, by=by, at=now)
    return await runtime.continue_stored(doc, answer)
