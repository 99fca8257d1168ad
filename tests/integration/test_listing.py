"""Listing executions newest first, page by page, against the real database server."""

from __future__ import annotations

import random
import time
from typing import Any

import pytest

from runner.store.executions import ExecutionStore, Retention
from runner.store.mongo import Store


@pytest.fixture
async def store(mongo_uri: str, db_name: str) -> Any:
    s = Store.connect(mongo_uri, db_name, Retention())
    await s.ensure_indexes()
    yield s.executions
    await s.client.drop_database(db_name)
    await s.close()


async def _seed(store: ExecutionStore, ages_ms: list[int], status: str = "waiting") -> list[str]:
    now = int(time.time() * 1000)
    docs = []
    for i, age in enumerate(ages_ms):
        t = now - age
        docs.append(
            {
                "_id": f"{status}-{i:04d}",
                "status": status,
                "workflowId": "w",
                "createdAt": t,
                "waitingSince": t if status == "waiting" else None,
                "workflowSnapshot": {"big": "x" * 100},
            }
        )
    await store.col.insert_many(docs)
    ordered = sorted(docs, key=lambda d: (d["createdAt"], d["_id"]), reverse=True)
    return [d["_id"] for d in ordered]


async def _all_pages(store: ExecutionStore, status: str | None, size: int) -> list[str]:
    seen: list[str] = []
    token = None
    while True:
        docs, token = await store.list_page(status=status, workflow_id=None, page_size=size, page_token=token)
        assert all("workflowSnapshot" not in d for d in docs)
        seen.extend(d["_id"] for d in docs)
        if token is None:
            return seen


async def test_pages_walk_every_execution_newest_first_once(store: ExecutionStore) -> None:
    rng = random.Random(7)
    day = 86_400_000
    ages = [rng.randrange(0, 40 * day) for _ in range(90)] + [5, 5, 5, 1] + [rng.randrange(0, 2000) for _ in range(40)]
    expected = await _seed(store, ages)
    await _seed(store, [1, 2, 3], status="completed")
    assert await _all_pages(store, "waiting", 50) == expected
    assert await _all_pages(store, "waiting", 7) == expected
    everything = await _all_pages(store, None, 25)
    assert len(everything) == len(expected) + 3 and len(set(everything)) == len(everything)


async def test_a_page_token_we_did_not_issue_is_refused(store: ExecutionStore) -> None:
    with pytest.raises(ValueError, match="page_token"):
        await store.list_page(status="waiting", workflow_id=None, page_size=5, page_token="garbage!")
