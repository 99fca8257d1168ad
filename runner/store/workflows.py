"""Workflow definitions and their append-only version history in MongoDB."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import DuplicateKeyError

from ..engine.model import JSON
from .collections import WORKFLOW_VERSIONS, WORKFLOWS
from .executions import decode_page_token, encode_page_token

READ_ONLY = frozenset(
    {"version", "createdAt", "updatedAt", "archived", "archivedAt", "builtin", "changeNote", "savedBy"}
)
TOGGLES = frozenset({"active"})


class VersionConflict(Exception):
    """Another save published the same version number first."""


def definition_of(body: dict[str, JSON]) -> dict[str, JSON]:
    """The versioned part of a workflow: everything but read-only fields and the activation toggle."""
    return {k: v for k, v in body.items() if k not in READ_ONLY and k not in TOGGLES}


def webhooks_of(definition: dict[str, JSON]) -> list[dict[str, str]]:
    hooks = []
    for node in definition.get("nodes") or []:
        if isinstance(node, dict) and node.get("type") == "triggers/webhook" and not node.get("disabled"):
            config = node.get("config") or {}
            method = str(config.get("method") or "POST").upper()
            path = str(config.get("path") or "").strip("/")
            hooks.append({"key": f"{method} {path}", "method": method, "path": path, "nodeId": str(node.get("id"))})
    return hooks


def public_view(doc: dict[str, Any]) -> dict[str, JSON]:
    """The workflow as REST and gRPC show it: the definition plus read-only fields."""
    view = dict(doc["definition"])
    view.update(
        id=doc["_id"],
        active=bool(doc.get("active")),
        version=doc["version"],
        createdAt=doc.get("createdAt"),
        updatedAt=doc.get("updatedAt"),
        archived=bool(doc.get("archived")),
    )
    if doc.get("builtinSlug"):
        view["builtin"] = doc["builtinSlug"]
    return view


@dataclass
class WorkflowStore:
    db: AsyncDatabase[dict[str, Any]]

    def __post_init__(self) -> None:
        self.col = self.db[WORKFLOWS]
        self.versions = self.db[WORKFLOW_VERSIONS]

    async def get(self, workflow_id: str) -> dict[str, Any] | None:
        return await self.col.find_one({"_id": workflow_id})

    async def list_page(
        self, *, include_archived: bool, page_size: int, page_token: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        query: dict[str, JSON] = {} if include_archived else {"archived": {"$ne": True}}
        if page_token:
            (last_id,) = decode_page_token(page_token)
            query["_id"] = {"$gt": last_id}
        docs = await self.col.find(query).sort("_id", 1).limit(page_size + 1).to_list(page_size + 1)
        token = None
        if len(docs) > page_size:
            docs = docs[:page_size]
            token = encode_page_token([docs[-1]["_id"]])
        return docs, token

    async def publish(
        self,
        workflow_id: str,
        definition: dict[str, JSON],
        *,
        previous_version: int,
        active: bool,
        change_note: str,
        saved_by: str,
        now_ms: int,
        builtin_slug: str | None = None,
    ) -> dict[str, Any]:
        """Append version previous+1 and make it current. The unique index on (workflowId, version)
        decides between concurrent saves; the loser gets VersionConflict."""
        version = previous_version + 1
        try:
            await self.versions.insert_one(
                {
                    "workflowId": workflow_id,
                    "version": version,
                    "definition": definition,
                    "changeNote": change_note,
                    "savedBy": saved_by,
                    "savedAt": now_ms,
                }
            )
        except DuplicateKeyError:
            raise VersionConflict(f"workflow {workflow_id!r} was changed concurrently; reload and retry") from None
        fields: dict[str, JSON] = {
            "definition": definition,
            "version": version,
            "active": active,
            "archived": False,
            "webhooks": webhooks_of(definition),
            "updatedAt": now_ms,
        }
        if previous_version == 0:
            fields["createdAt"] = now_ms
            if builtin_slug:
                fields["builtinSlug"] = builtin_slug
            await self.col.replace_one({"_id": workflow_id}, {"_id": workflow_id, **fields}, upsert=True)
        else:
            res = await self.col.update_one({"_id": workflow_id, "version": previous_version}, {"$set": fields})
            if res.modified_count != 1:
                raise VersionConflict(f"workflow {workflow_id!r} was changed concurrently; reload and retry")
        doc = await self.get(workflow_id)
        assert doc is not None
        return doc

    async def set_flags(self, workflow_id: str, fields: dict[str, JSON]) -> dict[str, Any] | None:
        await self.col.update_one({"_id": workflow_id}, {"$set": fields})
        return await self.get(workflow_id)

    async def webhook_owners(self, key: str) -> list[dict[str, Any]]:
        """Active, non-archived workflows serving ``METHOD path`` (whole documents)."""
        return await self.col.find({"webhooks.key": key, "active": True, "archived": {"$ne": True}}).to_list(10)

    async def webhook_path_owners(self, path: str) -> list[dict[str, Any]]:
        return await self.col.find(
            {"webhooks.path": path, "active": True, "archived": {"$ne": True}}, {"webhooks": 1}
        ).to_list(20)

    async def get_version(self, workflow_id: str, version: int) -> dict[str, Any] | None:
        return await self.versions.find_one({"workflowId": workflow_id, "version": version})

    async def list_versions(
        self, workflow_id: str, *, page_size: int, page_token: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        query: dict[str, JSON] = {"workflowId": workflow_id}
        if page_token:
            (last,) = decode_page_token(page_token)
            query["version"] = {"$lt": last}
        docs = (
            await self.versions.find(query, {"definition": 0})
            .sort("version", -1)
            .limit(page_size + 1)
            .to_list(page_size + 1)
        )
        token = None
        if len(docs) > page_size:
            docs = docs[:page_size]
            token = encode_page_token([docs[-1]["version"]])
        return docs, token

    async def active_with_node_type(self, node_type: str) -> list[dict[str, Any]]:
        return await self.col.find(
            {"definition.nodes.type": node_type, "active": True, "archived": {"$ne": True}}
        ).to_list(None)
