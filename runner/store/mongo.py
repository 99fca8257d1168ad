"""Open the database and create every index at start-up."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase

from .collections import INDEXES
from .executions import ExecutionStore, Retention
from .workflows import WorkflowStore


@dataclass
class Store:
    client: AsyncMongoClient[dict[str, Any]]
    db: AsyncDatabase[dict[str, Any]]
    executions: ExecutionStore
    workflows: WorkflowStore

    @classmethod
    def connect(cls, uri: str, database: str, retention: Retention) -> Store:
        client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
            uri, tz_aware=True, serverSelectionTimeoutMS=10000, retryWrites=False
        )
        db = client[database]
        return cls(client, db, ExecutionStore(db, retention), WorkflowStore(db))

    async def ensure_indexes(self) -> None:
        for name, indexes in INDEXES.items():
            await self.db[name].create_indexes(indexes)

    async def ping(self) -> bool:
        try:
            await self.client.admin.command("ping")
            return True
        except Exception:
            return False

    async def close(self) -> None:
        await self.client.close()
