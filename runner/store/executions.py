"""Executions in MongoDB: insert, checkpoint, claim, finish, list.

Every state change that could race is one conditional ``update_one`` whose
filter names the expected status (and lease owner), checked by
``modified_count == 1`` — never find-and-modify (see MONGODB.md).
"""

from __future__ import annotations

import base64
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase

from ..engine.model import JSON, ExecutionState, NodeResult, Pause
from .collections import EXECUTIONS

HEAVY_FIELDS = {"workflowSnapshot": 0, "results": 0, "input": 0, "output": 0}


def ms_to_dt(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


@dataclass(frozen=True)
class Retention:
    """How long executions are kept (DESIGN §6)."""

    finished_days: float = 7.0
    """SMARTBOTIC_EXECUTION_TTL_DAYS after the end."""
    pause_grace_days: float = 7.0
    """SMARTBOTIC_PAUSE_GRACE_DAYS after a pause's expiry."""

    def expire_at_finished(self, now_ms: int) -> datetime:
        return ms_to_dt(now_ms) + timedelta(days=self.finished_days)

    def expire_at(self, state: ExecutionState, now_ms: int) -> datetime | None:
        if state.status in ("completed", "failed", "cancelled"):
            return self.expire_at_finished(now_ms)
        if state.status == "waiting" and state.pause is not None and state.pause.expiresAt is not None:
            return ms_to_dt(state.pause.expiresAt) + timedelta(days=self.pause_grace_days)
        return None  # running, queued, or waiting without an expiry: kept until it ends


def walk_fields(state: ExecutionState) -> dict[str, JSON]:
    """What a walk changes on an execution (besides node results)."""
    return {
        "status": state.status,
        "output": state.output,
        "error": state.error,
        "errorNodeId": state.errorNodeId,
        "webhookResponse": state.webhookResponse,
        "webhookResponseNode": state.webhookResponseNode,
        "warnings": state.warnings,
        "steps": state.steps,
        "variables": state.variables,
        "pause": state.pause.to_doc() if state.pause else None,
        "lastKey": state.lastKey,
        "triggerNodeId": state.triggerNodeId,
    }


def state_to_doc(state: ExecutionState) -> dict[str, JSON]:
    return {
        "_id": state.id,
        "workflowId": state.workflow_id,
        "workflowName": state.workflow.get("name", ""),
        "workflowVersion": state.workflowVersion,
        "workflowSnapshot": state.workflow,
        "input": state.input,
        "results": {k: r.to_doc() for k, r in state.results.items()},
        "startedAt": state.startedAt,
        **walk_fields(state),
    }


def state_from_doc(doc: dict[str, Any]) -> ExecutionState:
    return ExecutionState(
        id=doc["_id"],
        workflow=doc["workflowSnapshot"],
        workflowVersion=doc["workflowVersion"],
        input=doc.get("input"),
        startedAt=doc["startedAt"],
        triggerNodeId=doc.get("triggerNodeId"),
        status=doc["status"],
        results={k: NodeResult.from_doc(v) for k, v in (doc.get("results") or {}).items()},
        output=doc.get("output"),
        error=doc.get("error"),
        errorNodeId=doc.get("errorNodeId"),
        webhookResponse=doc.get("webhookResponse"),
        webhookResponseNode=doc.get("webhookResponseNode"),
        warnings=list(doc.get("warnings") or []),
        steps=int(doc.get("steps") or 0),
        pause=Pause.from_doc(doc["pause"]) if doc.get("pause") else None,
        lastKey=doc.get("lastKey"),
        variables=dict(doc.get("variables") or {}),
    )


def encode_page_token(values: list[Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(values).encode()).decode()


def decode_page_token(token: str) -> list[Any]:
    try:
        values = json.loads(base64.urlsafe_b64decode(token.encode()))
    except (ValueError, TypeError):
        raise ValueError("page_token is not one this server issued") from None
    if not isinstance(values, list):
        raise ValueError("page_token is not one this server issued")
    return values


class ExecutionStore:
    def __init__(self, db: AsyncDatabase[dict[str, Any]], retention: Retention) -> None:
        self.col = db[EXECUTIONS]
        self.retention = retention

    @staticmethod
    def new_doc(state: ExecutionState, *, now_ms: int, lease: dict[str, JSON] | None) -> dict[str, JSON]:
        doc = state_to_doc(state)
        doc.update(createdAt=now_ms, updatedAt=now_ms, lease=lease, runner=lease["owner"] if lease else None)
        return doc

    async def insert(self, doc: dict[str, JSON]) -> bool:
        await self.col.insert_one(doc)
        return True

    async def checkpoint(
        self, execution_id: str, results: dict[str, NodeResult], *, owner: str, extra: dict[str, JSON] | None = None
    ) -> bool:
        """Store settled node results. False: the execution is no longer ours (cancelled or taken over)."""
        update: dict[str, JSON] = {f"results.{k}": r.to_doc() for k, r in results.items()}
        update.update(extra or {})
        res = await self.col.update_one(
            {"_id": execution_id, "status": "running", "lease.owner": owner}, {"$set": update}
        )
        return res.matched_count == 1

    async def finish(
        self,
        state: ExecutionState,
        *,
        owner: str,
        now_ms: int,
        unsaved: dict[str, NodeResult],
        extra: dict[str, JSON] | None = None,
    ) -> bool:
        """Write the walk's outcome (finished or waiting) and give up the lease, if still ours."""
        fields: dict[str, JSON] = {
            **walk_fields(state),
            "updatedAt": now_ms,
            "lease": None,
            "expireAt": self.retention.expire_at(state, now_ms),
        }
        fields.update({f"results.{k}": r.to_doc() for k, r in unsaved.items()})
        if state.status == "waiting" and state.pause is not None:
            fields["waitingSince"] = state.pause.waitingSince
            fields["wakeAt"] = state.pause.expiresAt
        else:
            fields["waitingSince"] = None
            fields["wakeAt"] = None
        if state.status in ("completed", "failed", "cancelled"):
            fields["finishedAt"] = now_ms
        fields.update(extra or {})
        res = await self.col.update_one({"_id": state.id, "status": "running", "lease.owner": owner}, {"$set": fields})
        return res.modified_count == 1

    async def get(self, execution_id: str, *, light: bool = False) -> dict[str, Any] | None:
        return await self.col.find_one({"_id": execution_id}, HEAVY_FIELDS if light else None)

    async def claim(
        self,
        execution_id: str,
        expected: dict[str, JSON],
        *,
        owner: str,
        lease_until: int,
        now_ms: int,
        extra: dict[str, JSON] | None = None,
        spent: dict[str, JSON] | None = None,
    ) -> bool:
        """One conditional update: of several concurrent claimers exactly one wins.
        ``spent`` records an ended pause (its token hash) so a later answer gets 409 or 410."""
        fields = {
            "status": "running",
            "lease": {"owner": owner, "until": lease_until},
            "runner": owner,
            "updatedAt": now_ms,
        }
        fields.update(extra or {})
        return await self.set_fields(execution_id, expected, fields, spent=spent)

    async def set_fields(
        self,
        execution_id: str,
        expected: dict[str, JSON],
        fields: dict[str, JSON],
        *,
        spent: dict[str, JSON] | None = None,
    ) -> bool:
        update: dict[str, JSON] = {"$set": fields}
        if spent and spent.get("tokenHash"):
            update["$push"] = {"spentPauses": spent}
        res = await self.col.update_one({"_id": execution_id, **expected}, update)
        return res.modified_count == 1

    async def renew_leases(self, owner: str, until: int) -> int:
        res = await self.col.update_many({"status": "running", "lease.owner": owner}, {"$set": {"lease.until": until}})
        return res.modified_count

    async def find_ids(
        self, query: dict[str, JSON], *, sort: list[tuple[str, int]], limit: int, whole: bool = False
    ) -> list[dict[str, Any]]:
        """Candidates for a claim: the fields a claim's filter needs, or ``whole`` documents."""
        fields = None if whole else {"_id": 1, "status": 1, "pause": 1, "lease": 1, "wakeAt": 1, "createdAt": 1}
        cursor = self.col.find(query, fields)
        return await cursor.sort(sort).limit(limit).to_list(limit)

    async def _newest_first(
        self, query: dict[str, JSON], field: str, below: float | None, limit: int
    ) -> list[dict[str, Any]]:
        """The ``limit`` newest matches (``field`` below ``below`` when given), read through a time
        window that widens until it holds them.

        The embedded server reads every match of a query before it returns the first, sorted or
        not, so a page of 100,000 waiting executions would read all of them. The window bounds
        what is read to the matches in it; on mongod, which walks the index, it costs nothing."""
        newest = below if below is not None else time.time() * 1000 + 60_000
        window = 1000.0
        while True:
            lower = newest - window
            bounds: dict[str, float] = {} if below is None else {"$lt": below}
            if lower > 0:
                bounds["$gte"] = lower
            bounded = {**query, field: bounds} if bounds else dict(query)
            cursor = self.col.find(bounded, HEAVY_FIELDS).sort([(field, -1), ("_id", -1)]).limit(limit)
            docs = await cursor.to_list(limit)
            if len(docs) >= limit or lower <= 0:
                return docs
            window *= 8

    async def list_page(
        self, *, status: str | None, workflow_id: str | None, page_size: int, page_token: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """Newest first (by waitingSince for waiting executions), keyset-paginated: a page token is
        the last item's (time, id); the next page is its ties with smaller ids, then older items."""
        query: dict[str, JSON] = {}
        if status:
            query["status"] = status
        if workflow_id:
            query["workflowId"] = workflow_id
        sort_field = "waitingSince" if status == "waiting" else "createdAt"
        want = page_size + 1
        if page_token:
            last_value, last_id = decode_page_token(page_token)
            if not isinstance(last_value, int | float) or not isinstance(last_id, str):
                raise ValueError("page_token is not one this server issued")
            ties_query = {**query, sort_field: last_value, "_id": {"$lt": last_id}}
            docs = await self.col.find(ties_query, HEAVY_FIELDS).sort("_id", -1).limit(want).to_list(want)
            if len(docs) < want:
                docs += await self._newest_first(query, sort_field, last_value, want - len(docs))
        else:
            docs = await self._newest_first(query, sort_field, None, want)
        next_token = None
        if len(docs) > page_size:
            docs = docs[:page_size]
            next_token = encode_page_token([docs[-1].get(sort_field), docs[-1]["_id"]])
        return docs, next_token
