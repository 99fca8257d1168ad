"""``smartbotic.storage`` and ``smartbotic.db``: argument checks, then :class:`NodeDataStore`.

| call | args |
| --- | --- |
| ``storage.get`` | ``[key]`` → the value, or null when unset |
| ``storage.set`` | ``[key, value]`` → null |
| ``storage.delete`` | ``[key]`` → true when a value was deleted |
| ``db.insert`` | ``[collection, doc]`` → the stored doc |
| ``db.update`` | ``[collection, filter, fields]`` → ``{matched, modified}`` |
| ``db.find`` | ``[collection, filter=None, sort=None, limit=None]`` → list of docs |
| ``db.findOne`` | ``[collection, filter=None]`` → doc or null |
| ``db.delete`` | ``[collection, filter]`` → ``{deleted}`` |

Storage is scoped to the calling workflow id + node id. What filters, sorts
and documents may contain is in :mod:`runner.store.nodedata`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from runner.hostapi.args import take
from runner.hostapi.scope import CallScope
from runner.sandbox.types import JSON, HostApiError
from runner.store.nodedata import NodeDataError, NodeDataStore

ScopedHandler = Callable[[CallScope, list[JSON]], Awaitable[JSON]]


class NodeDataCalls:
    """The storage and db calls of one runner."""

    def __init__(self, store: NodeDataStore) -> None:
        self._store = store

    def handlers(self) -> dict[str, ScopedHandler]:
        calls: dict[str, ScopedHandler] = {
            "storage.get": self.storage_get,
            "storage.set": self.storage_set,
            "storage.delete": self.storage_delete,
            "db.insert": self.db_insert,
            "db.update": self.db_update,
            "db.find": self.db_find,
            "db.findOne": self.db_find_one,
            "db.delete": self.db_delete,
        }
        return {name: _refusals_as_host_errors(name, handler) for name, handler in calls.items()}

    async def storage_get(self, scope: CallScope, args: list[JSON]) -> JSON:
        (key,) = take("storage.get", args, ("key",))
        return await self._store.storage_get(scope.workflow_id, scope.node_id, key)

    async def storage_set(self, scope: CallScope, args: list[JSON]) -> JSON:
        key, value = take("storage.set", args, ("key", "value"))
        await self._store.storage_set(scope.workflow_id, scope.node_id, key, value)
        return None

    async def storage_delete(self, scope: CallScope, args: list[JSON]) -> JSON:
        (key,) = take("storage.delete", args, ("key",))
        return await self._store.storage_delete(scope.workflow_id, scope.node_id, key)

    async def db_insert(self, scope: CallScope, args: list[JSON]) -> JSON:
        collection, doc = take("db.insert", args, ("collection", "doc"))
        return await self._store.db_insert(collection, doc)

    async def db_update(self, scope: CallScope, args: list[JSON]) -> JSON:
        collection, flt, fields = take("db.update", args, ("collection", "filter", "fields"))
        return await self._store.db_update(collection, flt, fields)

    async def db_find(self, scope: CallScope, args: list[JSON]) -> JSON:
        collection, flt, sort, limit = take("db.find", args, ("collection", "filter", "sort", "limit"), 1)
        return await self._store.db_find(collection, flt, sort, limit)

    async def db_find_one(self, scope: CallScope, args: list[JSON]) -> JSON:
        collection, flt = take("db.findOne", args, ("collection", "filter"), 1)
        return await self._store.db_find_one(collection, flt)

    async def db_delete(self, scope: CallScope, args: list[JSON]) -> JSON:
        collection, flt = take("db.delete", args, ("collection", "filter"))
        return await self._store.db_delete(collection, flt)


def _refusals_as_host_errors(name: str, handler: ScopedHandler) -> ScopedHandler:
    async def call(scope: CallScope, args: list[JSON]) -> JSON:
        try:
            return await handler(scope, args)
        except NodeDataError as exc:
            raise HostApiError(f"{name}: {exc}") from None

    return call
