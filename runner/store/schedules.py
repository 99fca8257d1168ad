"""Schedule fires: one document per (workflow, schedule node, minute).

The unique index ``once_per_minute`` (``collections.py``) is what makes a
schedule fire at most once per minute across all runners: every runner that
finds a minute due tries to insert it, and exactly one insert succeeds.
Documents expire (TTL index on ``expireAt``) after ``keep``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from pymongo import DESCENDING
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from .collections import SCHEDULE_FIRES


def _utc(t: datetime) -> datetime:
    """BSON dates carry no zone; a client opened without tz_aware hands them back naive (UTC)."""
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


@dataclass
class ScheduleStore:
    db: AsyncDatabase[dict[str, Any]]
    keep: timedelta = timedelta(days=2)
    """How long a fire is remembered: longer than any catch-up window, so a minute can never fire twice."""
    col: AsyncCollection[dict[str, Any]] = field(init=False)

    def __post_init__(self) -> None:
        self.col = self.db[SCHEDULE_FIRES]

    async def try_fire(self, workflow_id: str, node_id: str, minute: datetime, *, fired_at: datetime) -> bool:
        """Claim ``minute`` for this schedule node: True for the one caller whose insert wins."""
        try:
            await self.col.insert_one(
                {
                    "workflowId": workflow_id,
                    "nodeId": node_id,
                    "minute": _utc(minute),
                    "firedAt": _utc(fired_at),
                    "expireAt": _utc(fired_at) + self.keep,
                }
            )
        except DuplicateKeyError:
            return False
        return True

    async def last_fired(self, workflow_id: str, node_id: str) -> datetime | None:
        """The latest minute this schedule node fired at (within ``keep``), if any."""
        doc = await self.col.find_one(
            {"workflowId": workflow_id, "nodeId": node_id}, {"minute": 1}, sort=[("minute", DESCENDING)]
        )
        return _utc(doc["minute"]) if doc else None

    async def record_error(self, workflow_id: str, node_id: str, minute: datetime, message: str) -> None:
        """Note on a claimed fire why no execution was started; the minute stays fired (at most once)."""
        await self.col.update_one(
            {"workflowId": workflow_id, "nodeId": node_id, "minute": _utc(minute)}, {"$set": {"error": message}}
        )

    async def fires(self, workflow_id: str, node_id: str) -> list[dict[str, Any]]:
        """Fires of one schedule node, oldest first (for tests and inspection)."""
        return (
            await self.col.find({"workflowId": workflow_id, "nodeId": node_id}, {"_id": 0})
            .sort("minute", 1)
            .to_list(None)
        )
