"""HostApi.call itself: the method table, argument checks, and unexpected failures turned into short errors."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pymongo import AsyncMongoClient

from runner.hostapi import CallScope, HostApi, HostApiError, host_call_for
from runner.settings import Settings
from runner.store.nodedata import NodeDataStore
from tests.conftest import free_port
from tests.hostapi.conftest import SCOPE, MakeApi

DESIGN_CALLS = [
    "db.delete",
    "db.find",
    "db.findOne",
    "db.insert",
    "db.update",
    "fs.exists",
    "fs.mkdir",
    "fs.readFile",
    "fs.readdir",
    "fs.stat",
    "fs.unlink",
    "fs.writeFile",
    "http.request",
    "process.exec",
    "storage.delete",
    "storage.get",
    "storage.set",
]


def test_every_call_of_the_design_is_answered(make_api: MakeApi) -> None:
    assert make_api().methods == DESIGN_CALLS


async def test_an_unknown_method_is_a_clear_error(make_api: MakeApi) -> None:
    with pytest.raises(HostApiError, match=r"unknown call smartbotic\.fs\.rmrf; known calls: db\.delete, "):
        await make_api().call(SCOPE, "fs.rmrf", ["/"])


async def test_arguments_must_be_a_list(make_api: MakeApi) -> None:
    with pytest.raises(HostApiError, match=r"fs\.stat: arguments must be a list, got dict"):
        await make_api().call(SCOPE, "fs.stat", {"path": "/"})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("method", "args", "message"),
    [
        ("fs.readFile", [], r"fs\.readFile\(path\) takes 1 argument, got 0"),
        ("fs.writeFile", ["a"], r"fs\.writeFile\(path, data\) takes 2 arguments, got 1"),
        ("fs.stat", ["a", "b"], r"fs\.stat\(path\) takes 1 argument, got 2"),
        ("db.find", [], r"db\.find\(collection, filter=None, sort=None, limit=None\) takes 1 to 4 arguments, got 0"),
        ("db.update", ["c", {}], r"db\.update\(collection, filter, fields\) takes 3 arguments, got 2"),
        ("storage.get", [], r"storage\.get\(key\) takes 1 argument, got 0"),
    ],
)
async def test_a_wrong_argument_count_shows_the_signature(
    make_api: MakeApi, method: str, args: list[Any], message: str
) -> None:
    with pytest.raises(HostApiError, match=message):
        await make_api().call(SCOPE, method, args)


async def test_an_unexpected_failure_is_a_short_error_and_logged_with_its_traceback(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # a database nobody listens on: pymongo raises ServerSelectionTimeoutError, which no handler expects
    client: AsyncMongoClient[dict[str, Any]] = AsyncMongoClient(
        f"mongodb://127.0.0.1:{free_port()}/?directConnection=true", serverSelectionTimeoutMS=200
    )
    api = HostApi(Settings(fs_roots=(str(tmp_path),)), NodeDataStore(client["unreachable"]))
    scope = CallScope("wf-9", "node-9", "exec-9")
    try:
        with caplog.at_level(logging.ERROR, logger="runner.hostapi"), pytest.raises(HostApiError) as err:
            await api.call(scope, "storage.get", ["k"])
    finally:
        await api.close()
        await client.close()
    assert str(err.value) == (
        "storage.get failed in the runner (ServerSelectionTimeoutError); the runner's log has the details"
    )
    assert err.value.__cause__ is None and err.value.__suppress_context__
    [record] = [r for r in caplog.records if r.name == "runner.hostapi.dispatch"]
    assert "workflow wf-9, node node-9, execution exec-9" in record.getMessage()
    assert record.exc_info is not None


async def test_host_call_for_answers_like_call(make_api: MakeApi, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    host_call = host_call_for(make_api(fs_roots=(str(tmp_path),)), SCOPE)
    assert await host_call("fs.readFile", ["a.txt"]) == "a"
    with pytest.raises(HostApiError, match="unknown call"):
        await host_call("nope", [])
