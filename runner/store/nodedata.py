"""Node-facing data: ``smartbotic.storage`` and ``smartbotic.db`` (DESIGN §8).

Two places hold it:

- ``node_storage`` in the runner's database: one document per
  (workflow id, node id, key) — ``{_id, workflowId, nodeId, key, value,
  updatedAt}``. ``_id`` is the JSON text of ``[workflowId, nodeId, key]``, so
  it is unique by construction and no id can collide with another however
  they are spelt (``"a:b" + "c"`` vs ``"a" + "b:c"``).
- the user collections ``smartbotic.db.collection(name)`` reaches, in a
  separate database (default: the runner's database name + ``_data``) so a
  script can never name a runner collection.

Rules for user documents, all enforced here:

- ``_id`` is a string (an ObjectId's hex when the document brings none) or an
  integer; ``_createdAt`` and ``_updatedAt`` are int milliseconds since the
  epoch, set by every insert and update (a polling trigger uses
  ``(_updatedAt, _id)`` as its cursor).
- Field names starting with ``$`` are refused anywhere in documents, update
  fields and filter values.
- Filters: top-level ``$and``/``$or``/``$nor`` (lists of filters); per field a
  literal (equality) or a document of the operators in :data:`FIELD_OPERATORS`
  (``$regex`` patterns at most :data:`MAX_REGEX_LENGTH` characters).
- Updates ``$set`` the given fields (dotted paths allowed) plus
  ``_updatedAt``; no update operators, and ``_id``/``_createdAt``/
  ``_updatedAt`` cannot be set.
- Everything returned is plain JSON: ObjectId → hex string, datetime → ISO
  8601 UTC string.

Only plain CRUD is used (no ``find_one_and_*``), so SecantusDB and mongod
behave alike (MONGODB.md).
"""

from __future__ import annotations

import base64
import json
import re
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from bson import ObjectId
from bson.errors import InvalidDocument
from pymongo.asynchronous.collection import AsyncCollection
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DocumentTooLarge, DuplicateKeyError, OperationFailure

Doc = dict[str, Any]

NODE_STORAGE = "node_storage"
DEFAULT_LIMIT = 100
MAX_LIMIT = 1000
MAX_REGEX_LENGTH = 512
MAX_KEY_LENGTH = 512
LOGICAL_OPERATORS = frozenset({"$and", "$or", "$nor"})
FIELD_OPERATORS = frozenset(
    {"$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$exists", "$regex", "$options"}
)
MAINTAINED_FIELDS = frozenset({"_id", "_createdAt", "_updatedAt"})
_COLLECTION_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_REGEX_OPTIONS = re.compile(r"[imsx]*")


class NodeDataError(ValueError):
    """A storage or db request was refused or failed; the message says why, for the script's author."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def to_json(value: Any) -> Any:
    """A stored value as plain JSON data."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    if isinstance(value, ObjectId):
        return str(value)
    if isinstance(value, datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        return aware.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    return str(value)


# --- validation ---------------------------------------------------------------------------------


def validate_collection_name(name: Any) -> str:
    if not isinstance(name, str) or not _COLLECTION_NAME.fullmatch(name):
        raise NodeDataError(
            f"collection name {name!r} is not allowed: use 1-64 letters, digits, '_' or '-' (no '.' or '$')"
        )
    if name.lower().startswith("system"):
        raise NodeDataError(f"collection name {name!r} is not allowed: names starting with 'system' are reserved")
    return name


def refuse_operator_keys(value: Any, where: str) -> None:
    """Refuse ``$``-prefixed field names anywhere inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise NodeDataError(f"{where}: field names must be strings, got {key!r}")
            if key.startswith("$"):
                raise NodeDataError(f"{where}: field name {key!r} is not allowed (names starting with '$' are refused)")
            refuse_operator_keys(item, where)
    elif isinstance(value, list):
        for item in value:
            refuse_operator_keys(item, where)


def validate_filter(flt: Any) -> Doc:
    """A filter a script sent, checked against the allowed operators; None means everything."""
    if flt is None:
        return {}
    if not isinstance(flt, dict):
        raise NodeDataError(f"a filter must be an object, got {type(flt).__name__}")
    for key, cond in flt.items():
        if not isinstance(key, str) or not key:
            raise NodeDataError(f"filter field names must be non-empty strings, got {key!r}")
        if key in LOGICAL_OPERATORS:
            if not isinstance(cond, list) or not cond:
                raise NodeDataError(f"{key} takes a non-empty list of filters")
            for sub in cond:
                if not isinstance(sub, dict):
                    raise NodeDataError(f"{key} takes a list of filter objects, got {type(sub).__name__} in it")
                validate_filter(sub)
        elif key.startswith("$"):
            raise NodeDataError(
                f"filter operator {key!r} is not allowed; top-level operators: {', '.join(sorted(LOGICAL_OPERATORS))}"
            )
        else:
            _validate_condition(key, cond)
    return flt


def _validate_condition(field: str, cond: Any) -> None:
    if not (isinstance(cond, dict) and any(isinstance(k, str) and k.startswith("$") for k in cond)):
        refuse_operator_keys(cond, f"filter on {field!r}")  # a literal: equality, embedded documents included
        return
    for op, operand in cond.items():
        if not op.startswith("$"):
            raise NodeDataError(f"filter on {field!r} mixes operators and field names ({op!r}); use one or the other")
        if op not in FIELD_OPERATORS:
            raise NodeDataError(
                f"filter operator {op!r} on {field!r} is not allowed; allowed: {', '.join(sorted(FIELD_OPERATORS))}"
            )
        if op in ("$in", "$nin") and not isinstance(operand, list):
            raise NodeDataError(f"{op} on {field!r} takes a list")
        if op == "$exists" and not isinstance(operand, bool):
            raise NodeDataError(f"$exists on {field!r} takes true or false")
        if op == "$regex":
            if not isinstance(operand, str):
                raise NodeDataError(f"$regex on {field!r} takes a string")
            if len(operand) > MAX_REGEX_LENGTH:
                raise NodeDataError(f"$regex on {field!r} is {len(operand)} characters; the cap is {MAX_REGEX_LENGTH}")
        if op == "$options" and (
            "$regex" not in cond or not isinstance(operand, str) or not _REGEX_OPTIONS.fullmatch(operand)
        ):
            raise NodeDataError(f"$options on {field!r} goes with $regex and takes letters from 'imsx'")
        refuse_operator_keys(operand, f"filter on {field!r}")


def validate_sort(sort: Any) -> list[tuple[str, int]] | None:
    """``{field: 1|-1}`` or ``[[field, 1|-1], ...]``."""
    if sort is None:
        return None
    pairs: list[Any]
    if isinstance(sort, dict):
        pairs = list(sort.items())
    elif isinstance(sort, list):
        pairs = [tuple(p) if isinstance(p, list) else p for p in sort]
    else:
        raise NodeDataError(f"sort must be {{field: 1 or -1}} or a list of [field, 1 or -1] pairs, got {sort!r}")
    result: list[tuple[str, int]] = []
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise NodeDataError(f"sort entries must be [field, 1 or -1] pairs, got {pair!r}")
        field, direction = pair
        if not isinstance(field, str) or not field or field.startswith("$"):
            raise NodeDataError(f"sort field {field!r} is not a field name")
        if isinstance(direction, bool) or direction not in (1, -1):
            raise NodeDataError(f"sort direction of {field!r} must be 1 or -1, got {direction!r}")
        result.append((field, int(direction)))
    return result or None


def validate_limit(limit: Any) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise NodeDataError(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return limit


def _validate_update_fields(fields: Any) -> Doc:
    if not isinstance(fields, dict) or not fields:
        raise NodeDataError("update takes a non-empty object of fields to set")
    for key in fields:
        if not isinstance(key, str) or not key:
            raise NodeDataError(f"update field names must be non-empty strings, got {key!r}")
        if key.startswith("$"):
            raise NodeDataError(
                f"update field {key!r} is not allowed: update sets the given fields (dotted paths allowed); "
                "operators such as $inc or $unset are not supported"
            )
        if key.split(".", 1)[0] in MAINTAINED_FIELDS:
            raise NodeDataError(f"update field {key!r} is not allowed: _id, _createdAt and _updatedAt are maintained")
    refuse_operator_keys(fields, "update")
    return fields


@contextmanager
def _database_errors(action: str) -> Iterator[None]:
    """Turn the errors a script's own data can cause into NodeDataError; others stay as they are."""
    try:
        yield
    except DuplicateKeyError as exc:
        key = (exc.details or {}).get("keyValue")
        raise NodeDataError(f"{action}: a document with the same key already exists ({key or exc})") from None
    except OperationFailure as exc:
        message = (exc.details or {}).get("errmsg") or str(exc)
        raise NodeDataError(f"{action}: the database refused it: {message}") from None
    except DocumentTooLarge:
        raise NodeDataError(f"{action}: the document is larger than the database's 16 MiB limit") from None
    except (InvalidDocument, OverflowError) as exc:
        raise NodeDataError(f"{action}: the document cannot be stored: {exc}") from None


# --- the store ----------------------------------------------------------------------------------


class NodeDataStore:
    """``smartbotic.storage`` (per workflow + node) and ``smartbotic.db`` (user collections)."""

    def __init__(self, db: AsyncDatabase[Doc], *, node_db: AsyncDatabase[Doc] | None = None) -> None:
        self._storage: AsyncCollection[Doc] = db[NODE_STORAGE]
        self._node_db: AsyncDatabase[Doc] = node_db if node_db is not None else db.client[db.name + "_data"]
        self._indexed: set[str] = set()

    @property
    def node_db(self) -> AsyncDatabase[Doc]:
        return self._node_db

    async def ensure_indexes(self) -> None:
        await self._storage.create_index([("workflowId", 1), ("nodeId", 1)], name="workflow_node")

    # storage

    @staticmethod
    def _storage_id(workflow_id: str, node_id: str, key: Any) -> str:
        if not isinstance(key, str) or not key or len(key) > MAX_KEY_LENGTH:
            raise NodeDataError(f"a storage key must be a string of 1 to {MAX_KEY_LENGTH} characters, got {key!r}")
        return json.dumps([workflow_id, node_id, key], separators=(",", ":"))

    async def storage_get(self, workflow_id: str, node_id: str, key: str) -> Any:
        """The stored value, or None when the key has none."""
        doc = await self._storage.find_one({"_id": self._storage_id(workflow_id, node_id, key)}, {"value": 1})
        return None if doc is None else to_json(doc.get("value"))

    async def storage_set(self, workflow_id: str, node_id: str, key: str, value: Any) -> None:
        sid = self._storage_id(workflow_id, node_id, key)
        refuse_operator_keys(value, f"storage.set({key!r})")
        doc = {"workflowId": workflow_id, "nodeId": node_id, "key": key, "value": value, "updatedAt": now_ms()}
        with _database_errors(f"storage.set({key!r})"):
            try:
                await self._storage.replace_one({"_id": sid}, doc, upsert=True)
            except DuplicateKeyError:  # two first writes of one key raced; the second one replaces
                await self._storage.replace_one({"_id": sid}, doc, upsert=True)

    async def storage_delete(self, workflow_id: str, node_id: str, key: str) -> bool:
        """True when a value was deleted."""
        result = await self._storage.delete_one({"_id": self._storage_id(workflow_id, node_id, key)})
        return result.deleted_count == 1

    # db

    def _collection(self, name: Any) -> AsyncCollection[Doc]:
        return self._node_db[validate_collection_name(name)]

    async def db_insert(self, collection: str, doc: Doc) -> Doc:
        """Store ``doc``; returns it as stored, with ``_id``, ``_createdAt`` and ``_updatedAt``."""
        coll = self._collection(collection)
        if not isinstance(doc, dict):
            raise NodeDataError(f"insert takes an object, got {type(doc).__name__}")
        refuse_operator_keys(doc, f"insert into {collection!r}")
        stored = dict(doc)
        doc_id = stored.setdefault("_id", str(ObjectId()))
        if isinstance(doc_id, bool) or not isinstance(doc_id, str | int):
            raise NodeDataError(f"_id must be a string or an integer, got {doc_id!r}")
        stored["_createdAt"] = stored["_updatedAt"] = now_ms()
        if collection not in self._indexed:
            # the (cursor field, _id) order a polling trigger reads in
            await coll.create_index([("_updatedAt", 1), ("_id", 1)], name="updated_id")
            self._indexed.add(collection)
        with _database_errors(f"insert into {collection!r}"):
            await coll.insert_one(stored)
        return {str(k): to_json(v) for k, v in stored.items()}

    async def db_update(self, collection: str, flt: Doc, fields: Doc) -> dict[str, int]:
        """Set ``fields`` (and ``_updatedAt``) on every matching document."""
        coll = self._collection(collection)
        query = validate_filter(flt)
        changes = {**_validate_update_fields(fields), "_updatedAt": now_ms()}
        with _database_errors(f"update of {collection!r}"):
            result = await coll.update_many(query, {"$set": changes})
        return {"matched": result.matched_count, "modified": result.modified_count}

    async def db_find(
        self, collection: str, flt: Doc | None = None, sort: Any = None, limit: int | None = None
    ) -> list[Doc]:
        coll = self._collection(collection)
        query, order, count = validate_filter(flt), validate_sort(sort), validate_limit(limit)
        with _database_errors(f"find in {collection!r}"):
            docs = await coll.find(query, sort=order, limit=count).to_list()
        return [to_json(d) for d in docs]

    async def db_find_one(self, collection: str, flt: Doc | None = None) -> Doc | None:
        coll = self._collection(collection)
        query = validate_filter(flt)
        with _database_errors(f"findOne in {collection!r}"):
            doc = await coll.find_one(query)
        return None if doc is None else to_json(doc)

    async def db_delete(self, collection: str, flt: Doc) -> dict[str, int]:
        """Delete every matching document; ``{}`` matches all of them."""
        coll = self._collection(collection)
        if flt is None:
            raise NodeDataError("delete takes a filter; pass {} to delete every document")
        query = validate_filter(flt)
        with _database_errors(f"delete in {collection!r}"):
            result = await coll.delete_many(query)
        return {"deleted": result.deleted_count}
