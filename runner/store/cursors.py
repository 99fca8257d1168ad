"""Polling-trigger cursors (DESIGN §7), one per workflow id + node id.

A poll takes the node's in-flight slot with one conditional update, reads the
committed cursor, and stages the cursor it reached. The runner that finishes
the execution commits the staged cursor when the run completed or parked in
``waiting``, and only releases the slot when it failed or was cancelled — so
the next poll reports the same changes again (at least once, never lost).
While the slot is held by a run that is still going, other polls of that
node report nothing (one poll in flight per node).

A slot whose holder has finished (its runner died before committing) or no
longer exists is taken over by the next poll, without committing: the
changes are reported again.
"""

from __future__ import annotations

from typing import Any

from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from ..engine.model import JSON
from .collections import CURSORS, EXECUTIONS

LIVE = ("pending", "running")


def cursor_id(workflow_id: str, node_id: str) -> str:
    return f"{workflow_id}:{node_id}"


class CursorStore:
    def __init__(self, db: AsyncDatabase[dict[str, Any]]) -> None:
        self.col = db[CURSORS]
        self.executions = db[EXECUTIONS]

    async def begin(self, workflow_id: str, node_id: str, execution_id: str, now_ms: int) -> dict[str, JSON]:
        """Take the in-flight slot for this execution: ``{acquired, initialized, cursor, heldBy}``."""
        _id = cursor_id(workflow_id, node_id)
        slot = {"executionId": execution_id, "since": now_ms, "staged": None, "hasStaged": False}
        doc = await self.col.find_one({"_id": _id})
        if doc is None:
            try:
                await self.col.insert_one(
                    {
                        "_id": _id,
                        "workflowId": workflow_id,
                        "nodeId": node_id,
                        "cursor": None,
                        "initialized": False,
                        "inflight": slot,
                        "updatedAt": now_ms,
                    }
                )
                return {"acquired": True, "initialized": False, "cursor": None, "heldBy": None}
            except DuplicateKeyError:
                doc = await self.col.find_one({"_id": _id})
                assert doc is not None
        holder = (doc.get("inflight") or {}).get("executionId")
        if holder == execution_id:  # a retry of the same poll
            return self._view(doc, acquired=True)
        if holder is not None and await self._holder_alive(holder):
            return self._view(doc, acquired=False)
        res = await self.col.update_one(
            {"_id": _id, "inflight.executionId": holder}, {"$set": {"inflight": slot, "updatedAt": now_ms}}
        )
        return self._view(doc, acquired=res.modified_count == 1)

    async def _holder_alive(self, execution_id: str) -> bool:
        holder = await self.executions.find_one({"_id": execution_id}, {"status": 1})
        return holder is not None and holder["status"] in LIVE

    @staticmethod
    def _view(doc: dict[str, Any], *, acquired: bool) -> dict[str, JSON]:
        return {
            "acquired": acquired,
            "initialized": bool(doc.get("initialized")),
            "cursor": doc.get("cursor"),
            "heldBy": None if acquired else (doc.get("inflight") or {}).get("executionId"),
        }

    async def stage(self, workflow_id: str, node_id: str, execution_id: str, value: JSON) -> bool:
        res = await self.col.update_one(
            {"_id": cursor_id(workflow_id, node_id), "inflight.executionId": execution_id},
            {"$set": {"inflight.staged": value, "inflight.hasStaged": True}},
        )
        return res.matched_count == 1

    async def finish(self, execution_id: str, *, commit: bool, now_ms: int) -> int:
        """Commit (or just release) every slot this execution holds; returns how many."""
        done = 0
        async for doc in self.col.find({"inflight.executionId": execution_id}):
            slot = doc["inflight"]
            fields: dict[str, JSON] = {"inflight": None, "updatedAt": now_ms}
            if commit and slot.get("hasStaged"):
                fields.update(cursor=slot.get("staged"), initialized=True, committedBy=execution_id)
            res = await self.col.update_one({"_id": doc["_id"], "inflight.executionId": execution_id}, {"$set": fields})
            done += res.modified_count
        return done
