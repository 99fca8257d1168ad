"""Polling triggers' side of the runner: commit cursors when a run ends, and start
file-watch workflows at once when their directory changes (``watch: true``)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from typing import Any

from .engine.model import ExecutionState
from .runtime import Runtime, now_ms
from .store.cursors import CursorStore
from .watch import DirectoryWatcher

log = logging.getLogger(__name__)
POLLING_TYPES = frozenset({"triggers/database-change", "triggers/file-watch"})


def polls(state: ExecutionState) -> bool:
    return any(n.get("type") in POLLING_TYPES for n in state.workflow.get("nodes", []))


class CursorCommitter:
    """When a walk settles, before its outcome is stored: completed or waiting → commit its
    staged cursors; failed → release them, so the next poll reports the same changes.
    Committing first means a slot whose holder is stored as finished was never committed
    (its runner died in between), which is what lets the next poll take it over."""

    def __init__(self, cursors: CursorStore) -> None:
        self.cursors = cursors

    async def __call__(self, state: ExecutionState, token: str | None) -> None:
        if not polls(state) or state.status in ("running", "pending"):
            return
        commit = state.status in ("completed", "waiting")
        count = await self.cursors.finish(state.id, commit=commit, now_ms=now_ms())
        if count:
            log.info("execution %s %s %d cursor(s)", state.id, "committed" if commit else "released", count)


def watched_directories(docs: list[dict[str, Any]], first_root: str | None) -> dict[str, set[str]]:
    """Directory → ids of active workflows whose file-watch node asks for ``watch: true``."""
    wanted: dict[str, set[str]] = {}
    for doc in docs:
        for node in doc["definition"].get("nodes", []):
            config = node.get("config") or {}
            path = config.get("path")
            if node.get("type") != "triggers/file-watch" or not config.get("watch") or node.get("disabled"):
                continue
            if not isinstance(path, str) or "{{" in path:
                continue
            if not os.path.isabs(path):
                if first_root is None:
                    continue
                path = os.path.join(first_root, path)
            wanted.setdefault(os.path.realpath(path), set()).add(doc["_id"])
    return wanted


class WatchStarter:
    """Refreshes the directory watches from the stored workflows and starts a poll on a change."""

    def __init__(self, runtime: Runtime, watcher_factory: Callable[..., DirectoryWatcher]) -> None:
        self.runtime = runtime
        roots = [r for r in runtime.settings.fs_roots if r != "*"]
        self.first_root = roots[0] if roots else None
        self.watcher = watcher_factory(self.start)

    async def start(self, workflow_id: str, directory: str) -> None:
        doc = await self.runtime.store.workflows.get(workflow_id)
        if doc is None or not doc.get("active") or doc.get("archived"):
            return
        state = self.runtime.new_state(
            doc["definition"], int(doc["version"]), {"watch": {"directory": directory, "at": now_ms()}}, None
        )
        await self.runtime.start(state, queue=False)

    async def refresh(self) -> None:
        docs = await self.runtime.store.workflows.active_with_node_type("triggers/file-watch")
        self.watcher.update(watched_directories(docs, self.first_root))

    async def run(self, interval_s: float = 1.0) -> None:
        self.watcher.begin()
        try:
            while True:
                try:
                    await self.refresh()
                except Exception:
                    log.exception("refreshing directory watches failed")
                await asyncio.sleep(interval_s)
        finally:
            self.watcher.stop()
