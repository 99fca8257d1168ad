"""Saving, reading and routing workflows: validation, versions, webhook ownership."""

from __future__ import annotations

import time
from typing import Any

import grpc
import jsonpatch

from .engine.graph import build_graph
from .engine.model import JSON, WorkflowInvalid
from .errors import ServiceError, invalid, not_found
from .nodes import NodeCatalog
from .runtime import now_ms
from .schedule import validate as validate_schedule
from .scheduler import schedule_nodes
from .store.workflows import VersionConflict, WorkflowStore, definition_of, webhooks_of

ROUTE_TTL_S = 1.0
"""How long a webhook route is served from memory before it is looked up again."""


def _already(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.ALREADY_EXISTS, message, reason="conflict")


class Workflows:
    def __init__(self, store: WorkflowStore, catalog: NodeCatalog) -> None:
        self.store = store
        self.catalog = catalog
        self._routes: dict[str, tuple[float, dict[str, Any], str]] = {}

    async def get(self, workflow_id: str) -> dict[str, Any]:
        doc = await self.store.get(workflow_id)
        if doc is None:
            raise not_found(f"workflow {workflow_id!r} not found")
        return doc

    def validate(self, definition: dict[str, JSON]) -> None:
        try:
            build_graph(definition, self.catalog)
        except WorkflowInvalid as exc:
            raise invalid(str(exc)) from None
        problems = [
            f"node {node_id!r}: {problem}"
            for node_id, config in schedule_nodes(definition)
            for problem in validate_schedule(config.get("cron"), config.get("timezone"))
        ]
        if problems:
            raise invalid("workflow is invalid: " + "; ".join(problems))

    async def _check_webhooks(self, workflow_id: str, definition: dict[str, JSON]) -> None:
        for hook in webhooks_of(definition):
            for other in await self.store.webhook_owners(hook["key"]):
                if other["_id"] != workflow_id:
                    name = other["definition"].get("name") or other["_id"]
                    raise _already(
                        f"webhook {hook['method']} /webhook/{hook['path']} is already served by active workflow "
                        f"{other['_id']!r} ({name}); change the path or deactivate that workflow"
                    )

    async def save(
        self,
        body: JSON,
        *,
        mode: str,
        workflow_id: str = "",
        change_note: str = "",
        saved_by: str = "",
        builtin_slug: str | None = None,
    ) -> dict[str, Any]:
        """Create or update; every change of definition is a new version, the active toggle is not."""
        if not isinstance(body, dict):
            raise invalid("a workflow must be a JSON object")
        if workflow_id:
            if body.get("id") not in (None, workflow_id):
                raise invalid(
                    f"the body's id {body.get('id')!r} differs from the workflow id {workflow_id!r} in the path"
                )
            body = {**body, "id": workflow_id}
        wf_id = body.get("id")
        if not isinstance(wf_id, str) or not wf_id:
            raise invalid("workflow id is missing")
        definition = definition_of(body)
        self.validate(definition)
        existing = await self.store.get(wf_id)
        if mode == "create" and existing is not None:
            raise _already(f"workflow {wf_id!r} already exists; PUT /api/v1/workflows/{wf_id} changes it")
        if mode == "update" and existing is None:
            raise not_found(f"workflow {wf_id!r} not found; POST /api/v1/workflows creates it")
        if existing is not None and existing.get("builtinSlug") and builtin_slug is None:
            slug = existing["builtinSlug"]
            if definition.get("id") != existing["_id"]:
                raise invalid(f"built-in workflow {slug!r} keeps its id")
        active = bool(body.get("active", existing.get("active") if existing else True))
        if active:
            await self._check_webhooks(wf_id, definition)
        if existing is not None and existing["definition"] == definition and not existing.get("archived"):
            if bool(existing.get("active")) != active:
                self.forget_routes()
                return await self.store.set_flags(wf_id, {"active": active, "updatedAt": now_ms()}) or existing
            return existing
        try:
            self.forget_routes()
            return await self.store.publish(
                wf_id,
                definition,
                previous_version=int(existing["version"]) if existing else 0,
                active=active,
                change_note=change_note,
                saved_by=saved_by,
                now_ms=now_ms(),
                builtin_slug=builtin_slug,
            )
        except VersionConflict as exc:
            raise ServiceError(grpc.StatusCode.ABORTED, str(exc), reason="conflict") from None

    async def set_active(self, workflow_id: str, active: bool) -> dict[str, Any]:
        doc = await self.get(workflow_id)
        if doc.get("archived") and active:
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"workflow {workflow_id!r} is archived; save it again to restore it",
                reason="archived",
            )
        if active:
            await self._check_webhooks(workflow_id, doc["definition"])
        self.forget_routes()
        return await self.store.set_flags(workflow_id, {"active": active, "updatedAt": now_ms()}) or doc

    async def archive(self, workflow_id: str) -> dict[str, Any]:
        await self.get(workflow_id)
        fields = {"archived": True, "active": False, "archivedAt": now_ms(), "updatedAt": now_ms()}
        self.forget_routes()
        result = await self.store.set_flags(workflow_id, fields)
        assert result is not None
        return result

    def forget_routes(self) -> None:
        self._routes.clear()

    async def webhook_target(self, method: str, path: str) -> tuple[dict[str, Any], str]:
        """The active workflow and trigger node serving ``METHOD /webhook/path``; 404 or 405 otherwise.

        Routes are cached for ``ROUTE_TTL_S``: a change saved through this runner applies at
        once, one saved through another runner within that time."""
        path = path.strip("/")
        key = f"{method.upper()} {path}"
        cached = self._routes.get(key)
        if cached is not None and cached[0] > time.monotonic():
            return cached[1], cached[2]
        owners = await self.store.webhook_owners(key)
        if owners:
            doc = owners[0]
            node_id = next(h["nodeId"] for h in doc["webhooks"] if h["key"] == key)
            self._routes[key] = (time.monotonic() + ROUTE_TTL_S, doc, node_id)
            return doc, node_id
        others = await self.store.webhook_path_owners(path)
        allowed = sorted({h["method"] for o in others for h in o["webhooks"] if h["path"] == path})
        if allowed:
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"/webhook/{path} does not accept {method.upper()}; it accepts {', '.join(allowed)}",
                reason="method_not_allowed",
                allow=", ".join(allowed),
            )
        raise not_found(f"no active workflow serves /webhook/{path}")

    async def version(self, workflow_id: str, version: int) -> dict[str, Any]:
        """One snapshot with an RFC 6902 patch from the previous version (from ``{}`` for v1)."""
        await self.get(workflow_id)
        doc = await self.store.get_version(workflow_id, version)
        if doc is None:
            raise not_found(f"workflow {workflow_id!r} has no version {version}")
        previous = await self.store.get_version(workflow_id, version - 1) if version > 1 else None
        before = previous["definition"] if previous else {}
        doc["diff"] = jsonpatch.make_patch(before, doc["definition"]).patch
        return doc

    async def revert(self, workflow_id: str, version: int, *, saved_by: str, change_note: str) -> dict[str, Any]:
        """Publish version ``version``'s snapshot as a new version; history stays append-only."""
        current = await self.get(workflow_id)
        old = await self.store.get_version(workflow_id, version)
        if old is None:
            raise not_found(f"workflow {workflow_id!r} has no version {version}")
        self.validate(old["definition"])
        if current.get("active"):
            await self._check_webhooks(workflow_id, old["definition"])
        try:
            self.forget_routes()
            return await self.store.publish(
                workflow_id,
                old["definition"],
                previous_version=int(current["version"]),
                active=bool(current.get("active")),
                change_note=change_note or f"revert to version {version}",
                saved_by=saved_by,
                now_ms=now_ms(),
            )
        except VersionConflict as exc:
            raise ServiceError(grpc.StatusCode.ABORTED, str(exc), reason="conflict") from None

    async def reset_builtin(self, workflow_id: str, *, saved_by: str) -> dict[str, Any]:
        from .builtins import builtin_definition

        doc = await self.get(workflow_id)
        slug = doc.get("builtinSlug")
        if not slug:
            raise ServiceError(
                grpc.StatusCode.FAILED_PRECONDITION, f"workflow {workflow_id!r} is not built in", reason="not_builtin"
            )
        definition = builtin_definition(slug)
        if definition is None:
            raise not_found(f"built-in workflow {slug!r} no longer ships with this runner")
        if doc["definition"] == definition and not doc.get("archived"):
            return doc
        self.forget_routes()
        return await self.store.publish(
            workflow_id,
            definition,
            previous_version=int(doc["version"]),
            active=bool(doc.get("active")) or bool(doc.get("archived")),
            change_note="reset to the built-in definition",
            saved_by=saved_by,
            now_ms=now_ms(),
        )
