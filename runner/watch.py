"""watchdog, twice (DESIGN §7):

- node scripts: a changed file under ``nodes/`` is reloaded at once (a broken
  edit keeps the previous version serving and is reported);
- file-watch workflows with ``watch: true``: a change in the watched
  directory starts the workflow at once (debounced); the node's cursor still
  decides what is new, so an extra run reports nothing rather than repeats.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch

from .nodes import NodeCatalog

log = logging.getLogger(__name__)


class _Forward(FileSystemEventHandler):
    def __init__(self, loop: asyncio.AbstractEventLoop, callback: Callable[[FileSystemEvent], None]) -> None:
        self.loop = loop
        self.callback = callback

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        self.loop.call_soon_threadsafe(self.callback, event)


class NodeScriptWatcher:
    def __init__(self, catalog: NodeCatalog) -> None:
        self.catalog = catalog
        self.observer: BaseObserver = Observer()

    def start(self) -> None:
        loop = asyncio.get_running_loop()
        self.observer.schedule(_Forward(loop, self._changed), str(self.catalog.root), recursive=True)
        self.observer.start()

    def _changed(self, event: FileSystemEvent) -> None:
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            path = Path(os.fsdecode(raw)) if raw else None
            if path is not None and path.suffix == ".py":
                nt = self.catalog.reload_file(path)
                if nt is not None:
                    log.info(
                        "reloaded node script %s%s",
                        nt.path,
                        f" (edit rejected: {nt.edit_error})" if nt.edit_error else "",
                    )

    def stop(self) -> None:
        self.observer.stop()
        self.observer.join(5)


StartWorkflow = Callable[[str, str], Awaitable[Any]]
"""``start(workflow_id, directory)``: start one poll of that workflow."""


class DirectoryWatcher:
    """Keeps one watch per directory that an active ``watch: true`` file-watch node names."""

    def __init__(self, start: StartWorkflow, *, debounce_s: float = 0.2) -> None:
        self.start_workflow = start
        self.debounce_s = debounce_s
        self.observer: BaseObserver = Observer()
        self.watches: dict[str, ObservedWatch] = {}
        self.workflows: dict[str, set[str]] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def begin(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.observer.start()

    def update(self, wanted: dict[str, set[str]]) -> None:
        """``wanted``: directory → workflow ids that watch it."""
        assert self._loop is not None
        for directory in list(self.watches):
            if directory not in wanted:
                self.observer.unschedule(self.watches.pop(directory))
        for directory in wanted:
            if directory not in self.watches and os.path.isdir(directory):
                handler = _Forward(self._loop, functools.partial(self._on_event, directory))
                self.watches[directory] = self.observer.schedule(handler, directory, recursive=False)
                log.info("watching %s for %s", directory, ", ".join(sorted(wanted[directory])))
        self.workflows = wanted

    def _on_event(self, directory: str, event: FileSystemEvent) -> None:
        self._changed(directory)

    def _changed(self, directory: str) -> None:
        assert self._loop is not None
        for workflow_id in self.workflows.get(directory, ()):
            key = f"{workflow_id}\0{directory}"
            if key in self._pending:
                self._pending[key].cancel()
            self._pending[key] = self._loop.call_later(self.debounce_s, self._fire, key, workflow_id, directory)

    def _fire(self, key: str, workflow_id: str, directory: str) -> None:
        self._pending.pop(key, None)
        task = asyncio.ensure_future(self.start_workflow(workflow_id, directory))
        task.add_done_callback(_log_failure)

    def stop(self) -> None:
        for handle in self._pending.values():
            handle.cancel()
        self.observer.stop()
        self.observer.join(5)


def _log_failure(task: asyncio.Future[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("a watch-started run failed to start: %s", task.exception())
