"""smartbotic.storage and smartbotic.db through HostApi, against the real MongoDB-compatible server."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from bson import ObjectId
from pymongo import AsyncMongoClient

from runner.hostapi import CallScope, HostApi, HostApiError, host_call_for
from runner.store.nodedata import NodeDataStore, now_ms
from tests.hostapi.conftest import SCOPE, MakeApi


@pytest.fixture
def api(make_api: MakeApi) -> HostApi:
    return make_api()


async def call(api: HostApi, method: str, *args: object, scope: CallScope = SCOPE) -> Any:
    return await api.call(scope, method, list(args))


# --- storage ------------------------------------------------------------------------------------


async def test_storage_set_get_delete_round_trip(api: HostApi) -> None:
    value = {"cursor": [1700000000000, "abc"], "n": 2.5, "ok": True, "none": None, "example.com": {"x": 1}}
    assert await call(api, "storage.set", "state", value) is None
    assert await call(api, "storage.get", "state") == value
    await call(api, "storage.set", "state", 7)
    assert await call(api, "storage.get", "state") == 7
    assert await call(api, "storage.delete", "state") is True
    assert await call(api, "storage.get", "state") is None
    assert await call(api, "storage.delete", "state") is False


async def test_storage_get_of_an_unset_key_is_null(api: HostApi) -> None:
    assert await call(api, "storage.get", "never-set") is None


async def test_storage_is_scoped_to_workflow_and_node(api: HostApi) -> None:
    scopes = [
        CallScope("wf-1", "node-a", "e1"),
        CallScope("wf-1", "node-b", "e1"),
        CallScope("wf-2", "node-a", "e2"),
        CallScope("a:b", "c", "e3"),  # ids joined naively would collide with the next one
        CallScope("a", "b:c", "e4"),
    ]
    for i, scope in enumerate(scopes):
        await call(api, "storage.set", "k", i, scope=scope)
    for i, scope in enumerate(scopes):
        assert await call(api, "storage.get", "k", scope=scope) == i
    await call(api, "storage.delete", "k", scope=scopes[0])
    assert await call(api, "storage.get", "k", scope=scopes[0]) is None
    assert await call(api, "storage.get", "k", scope=scopes[1]) == 1


async def test_storage_documents_carry_ids_and_update_time(
    api: HostApi, mongo: AsyncMongoClient[dict[str, Any]], db_name: str
) -> None:
    before = now_ms()
    await call(api, "storage.set", "k", "v")
    doc = await mongo[db_name]["node_storage"].find_one({"workflowId": SCOPE.workflow_id})
    assert doc is not None
    assert (doc["nodeId"], doc["key"], doc["value"]) == (SCOPE.node_id, "k", "v")
    assert before <= doc["updatedAt"] <= now_ms()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["storage.get", ""], "a storage key must be a string of 1 to 512 characters"),
        (["storage.get", 5], "a storage key must be a string"),
        (["storage.set", "x" * 513, 1], "a storage key must be a string of 1 to 512 characters"),
        (["storage.set", "k", {"$where": "1"}], r"field name '\$where' is not allowed"),
        (["storage.set", "k"], r"storage\.set\(key, value\) takes 2 arguments, got 1"),
    ],
)
async def test_storage_refuses_bad_keys_and_values(api: HostApi, args: list[Any], message: str) -> None:
    with pytest.raises(HostApiError, match=message):
        await call(api, *args)


async def test_host_call_for_binds_the_scope(api: HostApi) -> None:
    node_a = host_call_for(api, CallScope("wf", "a", "e"))
    node_b = host_call_for(api, CallScope("wf", "b", "e"))
    await node_a("storage.set", ["k", "from a"])
    assert await node_b("storage.get", ["k"]) is None
    assert await node_a("storage.get", ["k"]) == "from a"


# --- db -----------------------------------------------------------------------------------------


async def test_db_insert_adds_a_string_id_and_timestamps(api: HostApi) -> None:
    before = now_ms()
    doc = await call(api, "db.insert", "orders", {"state": "new", "total": 12.5})
    assert re.fullmatch(r"[0-9a-f]{24}", doc["_id"])
    assert doc["_createdAt"] == doc["_updatedAt"]
    assert before <= doc["_createdAt"] <= now_ms()
    assert {k: doc[k] for k in ("state", "total")} == {"state": "new", "total": 12.5}
    assert await call(api, "db.findOne", "orders", {"_id": doc["_id"]}) == doc


async def test_db_insert_keeps_a_given_id_and_refuses_a_duplicate(api: HostApi) -> None:
    doc = await call(api, "db.insert", "orders", {"_id": "order-1", "_createdAt": 0, "_updatedAt": 0})
    assert doc["_id"] == "order-1"
    assert doc["_createdAt"] > 0  # maintained, whatever the script sent
    with pytest.raises(HostApiError, match=r"db\.insert: insert into 'orders': a document with the same key"):
        await call(api, "db.insert", "orders", {"_id": "order-1"})
    with pytest.raises(HostApiError, match="_id must be a string or an integer"):
        await call(api, "db.insert", "orders", {"_id": {"a": 1}})


async def test_db_update_sets_fields_and_bumps_updated_at_only(api: HostApi) -> None:
    doc = await call(api, "db.insert", "orders", {"state": "new", "address": {"city": "A", "zip": "1"}})
    other = await call(api, "db.insert", "orders", {"state": "old"})
    result = await call(api, "db.update", "orders", {"state": "new"}, {"state": "paid", "address.city": "B"})
    assert result == {"matched": 1, "modified": 1}
    updated = await call(api, "db.findOne", "orders", {"_id": doc["_id"]})
    assert updated["state"] == "paid"
    assert updated["address"] == {"city": "B", "zip": "1"}
    assert updated["_createdAt"] == doc["_createdAt"]
    assert updated["_updatedAt"] >= doc["_updatedAt"]
    assert await call(api, "db.findOne", "orders", {"_id": other["_id"]}) == other
    assert await call(api, "db.update", "orders", {"state": "none"}, {"x": 1}) == {"matched": 0, "modified": 0}


async def test_db_update_applies_to_every_match(api: HostApi) -> None:
    for i in range(3):
        await call(api, "db.insert", "jobs", {"i": i, "state": "queued"})
    assert await call(api, "db.update", "jobs", {"i": {"$gte": 1}}, {"state": "done"}) == {"matched": 2, "modified": 2}
    states = [d["state"] for d in await call(api, "db.find", "jobs", None, {"i": 1})]
    assert states == ["queued", "done", "done"]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"$inc": {"n": 1}}, r"update field '\$inc' is not allowed.*operators such as \$inc"),
        ({"$set": {"a": 1}}, r"update field '\$set' is not allowed"),
        ({"_id": "x"}, "_id, _createdAt and _updatedAt are maintained"),
        ({"_createdAt": 1}, "_id, _createdAt and _updatedAt are maintained"),
        ({"_updatedAt.x": 1}, "_id, _createdAt and _updatedAt are maintained"),
        ({"a": {"$where": "1"}}, r"field name '\$where' is not allowed"),
        ({}, "update takes a non-empty object"),
    ],
)
async def test_db_update_refuses_operators_and_maintained_fields(
    api: HostApi, fields: dict[str, Any], message: str
) -> None:
    await call(api, "db.insert", "orders", {"a": 1})
    with pytest.raises(HostApiError, match=message):
        await call(api, "db.update", "orders", {}, fields)


async def test_db_find_filters_sorts_and_limits(api: HostApi) -> None:
    for i, state in enumerate(["new", "paid", "new", "new", "shipped"]):
        await call(api, "db.insert", "orders", {"_id": f"o{i}", "n": i, "state": state, "tags": ["t"] if i else []})
    found = await call(api, "db.find", "orders", {"state": "new"}, {"n": -1}, 2)
    assert [d["_id"] for d in found] == ["o3", "o2"]
    found = await call(api, "db.find", "orders", {"$or": [{"n": {"$lt": 1}}, {"state": {"$in": ["shipped"]}}]})
    assert sorted(d["_id"] for d in found) == ["o0", "o4"]
    found = await call(api, "db.find", "orders", {"state": {"$regex": "^NE", "$options": "i"}}, [["n", 1]])
    assert [d["_id"] for d in found] == ["o0", "o2", "o3"]
    found = await call(api, "db.find", "orders", {"n": {"$gte": 1, "$lte": 3, "$ne": 2}}, [["_id", 1]])
    assert [d["_id"] for d in found] == ["o1", "o3"]
    found = await call(api, "db.find", "orders", {"missing": {"$exists": False}, "state": {"$nin": ["new"]}})
    assert sorted(d["_id"] for d in found) == ["o1", "o4"]
    assert len(await call(api, "db.find", "orders")) == 5


async def test_db_find_sorts_by_updated_at_then_id_for_polling(api: HostApi) -> None:
    for name in ("b", "a", "c"):
        await call(api, "db.insert", "events", {"_id": name})
    await call(api, "db.update", "events", {}, {"seen": True})  # one _updatedAt for all: ties broken by _id
    found = await call(api, "db.find", "events", None, [["_updatedAt", 1], ["_id", 1]])
    assert [d["_id"] for d in found] == ["a", "b", "c"]


async def test_db_find_limit_defaults_to_100_and_is_bounded(api: HostApi, node_data: NodeDataStore) -> None:
    await node_data.node_db["many"].insert_many([{"_id": f"{i:03}"} for i in range(120)])
    assert len(await call(api, "db.find", "many")) == 100
    assert len(await call(api, "db.find", "many", None, None, 1000)) == 120
    for bad in (0, 1001, -1, 2.5, True, "10"):
        with pytest.raises(HostApiError, match="limit must be an integer from 1 to 1000"):
            await call(api, "db.find", "many", None, None, bad)


@pytest.mark.parametrize("sort", [{"n": 2}, {"n": "asc"}, [["n"]], ["n"], "n", {"$natural": 1}, {"n": True}])
async def test_db_find_refuses_bad_sorts(api: HostApi, sort: Any) -> None:
    with pytest.raises(HostApiError, match="sort"):
        await call(api, "db.find", "orders", None, sort)


async def test_db_find_one_returns_a_document_or_null(api: HostApi) -> None:
    doc = await call(api, "db.insert", "orders", {"state": "new"})
    assert await call(api, "db.findOne", "orders", {"state": "new"}) == doc
    assert await call(api, "db.findOne", "orders") == doc
    assert await call(api, "db.findOne", "orders", {"state": "gone"}) is None


async def test_db_delete_removes_matches_and_needs_a_filter(api: HostApi) -> None:
    for i in range(3):
        await call(api, "db.insert", "orders", {"i": i})
    assert await call(api, "db.delete", "orders", {"i": {"$lt": 2}}) == {"deleted": 2}
    assert [d["i"] for d in await call(api, "db.find", "orders")] == [2]
    with pytest.raises(HostApiError, match=r"db\.delete: delete takes a filter; pass \{\} to delete every document"):
        await call(api, "db.delete", "orders", None)
    assert await call(api, "db.delete", "orders", {}) == {"deleted": 1}


@pytest.mark.parametrize(
    "flt",
    [
        {"$where": "this.a == 1"},
        {"$expr": {"$function": {"body": "function() {return true}", "args": [], "lang": "js"}}},
        {"a": {"$function": {"body": "function() {return true}", "args": [], "lang": "js"}}},
        {"$accumulator": {}},
        {"$comment": "x"},
        {"$text": {"$search": "x"}},
        {"a": {"$not": {"$eq": 1}}},
        {"a": {"$elemMatch": {"$where": "1"}}},
        {"a": {"$eq": 1, "b": 2}},
        {"a": {"$eq": {"$where": "1"}}},
        {"a": {"$in": [{"$where": "1"}]}},
        {"a": {"$in": "x"}},
        {"a": {"$exists": 1}},
        {"a": {"$regex": "x" * 513}},
        {"a": {"$options": "i"}},
        {"a": {"$regex": "x", "$options": "e"}},
        {"$and": []},
        {"$or": {"a": 1}},
        {"$nor": [{"$where": "1"}]},
        {"a": {"b": {"$gt": 1}}},
    ],
)
async def test_db_refuses_operators_outside_the_allowed_set(api: HostApi, flt: dict[str, Any]) -> None:
    with pytest.raises(HostApiError, match=r"^db\.find: "):
        await call(api, "db.find", "orders", flt)


async def test_db_invalid_regex_is_a_clear_error(api: HostApi) -> None:
    await call(api, "db.insert", "orders", {"a": "x"})
    with pytest.raises(HostApiError, match=r"db\.find: find in 'orders': the database refused it: .*"):
        await call(api, "db.find", "orders", {"a": {"$regex": "("}})


@pytest.mark.parametrize("name", ["", "a.b", "$cmd", "system", "system_users", "System", "a b", "x" * 65, 5, None])
async def test_db_refuses_bad_collection_names(api: HostApi, name: Any) -> None:
    with pytest.raises(HostApiError, match=r"collection name .* is not allowed"):
        await call(api, "db.find", name)


async def test_db_insert_refuses_dollar_fields_and_non_objects(api: HostApi) -> None:
    with pytest.raises(HostApiError, match=r"field name '\$set' is not allowed"):
        await call(api, "db.insert", "orders", {"a": [{"$set": 1}]})
    with pytest.raises(HostApiError, match="insert takes an object, got list"):
        await call(api, "db.insert", "orders", [1])


async def test_db_collections_live_in_their_own_database(
    api: HostApi, mongo: AsyncMongoClient[dict[str, Any]], db_name: str
) -> None:
    await call(api, "db.insert", "node_storage", {"_id": "mine"})
    assert await mongo[f"{db_name}_data"]["node_storage"].find_one({"_id": "mine"}) is not None
    assert await mongo[db_name]["node_storage"].find_one({"_id": "mine"}) is None


async def test_db_returns_plain_json_for_documents_written_by_others(api: HostApi, node_data: NodeDataStore) -> None:
    oid = ObjectId()
    when = datetime(2024, 5, 1, 12, 30, 15, 250000, tzinfo=UTC)
    await node_data.node_db["external"].insert_one({"_id": oid, "at": when, "ref": ObjectId(str(oid)), "raw": b"\x01"})
    assert await call(api, "db.findOne", "external") == {
        "_id": str(oid),
        "at": "2024-05-01T12:30:15.250Z",
        "ref": str(oid),
        "raw": "AQ==",
    }


async def test_two_host_apis_over_one_store_see_the_same_data(make_api: MakeApi, node_data: NodeDataStore) -> None:
    # a second HostApi over the same store sees the same data: nothing is kept in memory
    first, second = make_api(), make_api()
    await call(first, "storage.set", "k", 1)
    doc = await call(first, "db.insert", "orders", {"a": 1})
    assert await call(second, "storage.get", "k") == 1
    assert await call(second, "db.findOne", "orders", {"_id": doc["_id"]}) == doc
