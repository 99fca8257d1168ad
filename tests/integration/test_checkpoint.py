"""Write-behind checkpoints against the real database server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from runner.checkpoint import LINGER_SECONDS, Aborted, Checkpointer
from runner.engine.model import ExecutionState, NodeResult
from runner.store.executions import ExecutionStore, Retention
from runner.store.mongo import Store


@pytest.fixture
async def store(mongo_uri: str, db_name: str) -> Any:
    s = Store.connect(mongo_uri, db_name, Retention())
    yield s.executions
    await s.client.drop_database(db_name)
    await s.close()


def _state() -> ExecutionState:
    return ExecutionState(id="e1", workflow={"id": "w", "nodes": []}, workflowVersion=1, input={}, startedAt=1)


async def _stored(store: ExecutionStore) -> set[str]:
    doc = await store.get("e1")
    assert doc is not None
    return set(doc["results"])


async def test_a_result_behind_a_slow_node_is_written_without_waiting_for_it(store: ExecutionStore) -> None:
    state = _state()
    cp = Checkpointer(store, state, "me")
    cp.begin_with(store.insert(store.new_doc(state, now_ms=1, lease={"owner": "me", "until": 10**13})))
    await cp.add("start", NodeResult("completed", output=1))  # queued behind the insert
    await cp.add("poll", NodeResult("completed", output=2))
    await asyncio.sleep(LINGER_SECONDS + 0.3)  # "a slow node runs": nothing else settles
    assert await _stored(store) == {"start", "poll"}
    await cp.add("slow", NodeResult("completed", output=3))
    unsaved = await cp.drain()  # what the final write must carry
    assert set(unsaved) | await _stored(store) == {"start", "poll", "slow"}


async def test_writes_stop_once_the_execution_is_no_longer_ours(store: ExecutionStore) -> None:
    state = _state()
    await store.insert(store.new_doc(state, now_ms=1, lease={"owner": "me", "until": 10**13}))
    await store.set_fields("e1", {}, {"status": "cancelled"})
    cp = Checkpointer(store, state, "me")
    await cp.add("a", NodeResult("completed"))
    await asyncio.sleep(LINGER_SECONDS + 0.3)  # the lingered write is refused
    with pytest.raises(Aborted):
        await cp.add("b", NodeResult("completed"))  # and the walk learns it at its next node
    assert await _stored(store) == set()
