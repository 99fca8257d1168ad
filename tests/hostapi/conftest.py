"""Fixtures for the host API: a real NodeDataStore on the session's MongoDB server and HostApi factories."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from pymongo import AsyncMongoClient

from runner.hostapi import CallScope, HostApi
from runner.settings import Settings
from runner.store.nodedata import NodeDataStore

SCOPE = CallScope(workflow_id="wf-1", node_id="node-1", execution_id="exec-1")

MakeApi = Callable[..., HostApi]


@pytest.fixture
async def mongo(mongo_uri: str) -> AsyncIterator[AsyncMongoClient[dict[str, Any]]]:
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(mongo_uri)
    yield client
    await client.close()


@pytest.fixture
async def node_data(mongo: AsyncMongoClient[dict[str, Any]], db_name: str) -> AsyncIterator[NodeDataStore]:
    store = NodeDataStore(mongo[db_name])
    await store.ensure_indexes()
    yield store
    await mongo.drop_database(db_name)
    await mongo.drop_database(db_name + "_data")


@pytest.fixture
async def make_api(node_data: NodeDataStore) -> AsyncIterator[MakeApi]:
    """``make_api(fs_roots=..., allow_exec=..., exec_output_cap=...)``: a HostApi, closed after the test."""
    apis: list[HostApi] = []

    def make(*, exec_output_cap: int | None = None, http_response_cap: int | None = None, **settings: Any) -> HostApi:
        caps = {"exec_output_cap": exec_output_cap, "http_response_cap": http_response_cap}
        api = HostApi(Settings(**settings), node_data, **{k: v for k, v in caps.items() if v is not None})
        apis.append(api)
        return api

    yield make
    for api in apis:
        await api.close()


@pytest.fixture
def roots(tmp_path: Path) -> dict[str, Path]:
    """``files`` (the fs root), ``outside`` (a sibling holding secret.txt) and the prefix-trap ``files-evil``."""
    layout = {name: tmp_path / name for name in ("files", "outside", "files-evil")}
    for path in layout.values():
        path.mkdir()
    (layout["outside"] / "secret.txt").write_text("secret")
    (layout["files-evil"] / "evil.txt").write_text("evil")
    return layout


@pytest.fixture
def fs_api(make_api: MakeApi, roots: dict[str, Path]) -> HostApi:
    return make_api(fs_roots=(str(roots["files"]),))
