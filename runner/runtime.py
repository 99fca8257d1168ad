"""The runner's core: starts, runs, resumes and finishes executions.

The gRPC servicer converts messages and calls this; the background loops
(``background.py``) call it for queued work, due waits and lapsed leases.
All coordination between runners goes through conditional updates in the
store; the waiters here only serve callers connected to this process.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .checkpoint import Aborted, Checkpointer
from .engine.graph import Graph, build_graph
from .engine.model import JSON, ExecutionState, NodeResult, ResumeAnswer
from .engine.walk import EngineLimits, NodeCall, Walker
from .hostapi import CallScope, HostApi, host_call_for
from .nodes import NodeCatalog
from .sandbox import NodeOutcome, NodeTask, SandboxPool
from .settings import Settings
from .store.executions import state_from_doc
from .store.mongo import Store

log = logging.getLogger(__name__)

MAX_RUNNING = 64
"""Executions one runner runs at once; the background loops claim no more than that."""
SOON_SECONDS = 600.0
"""Pauses due within this are woken by a timer in the runner that stored them, besides polling."""

AfterFinish = Callable[[ExecutionState, str | None], Awaitable[None]]


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class RunHandle:
    """What a caller connected to this runner waits on."""

    state: ExecutionState
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    responded: asyncio.Event = field(default_factory=asyncio.Event)
    token: str | None = None
    task: asyncio.Task[None] | None = None
    new_doc: dict[str, Any] | None = None
    """A new execution's document, inserted as the run's first write."""
    respond_early: bool = False
    """A caller waits for the webhook response, not the end (responseMode responseNode)."""


class _Hooks:
    def __init__(self, checkpointer: Checkpointer, handle: RunHandle) -> None:
        self._checkpointer = checkpointer
        self._handle = handle

    async def node_settled(self, state: ExecutionState, key: str, result: NodeResult) -> None:
        await self._checkpointer.add(key, result)

    async def webhook_response(self, state: ExecutionState) -> None:
        if self._handle.respond_early:  # the response leaves before the run ends: store first
            await self._checkpointer.flush()
            self._handle.responded.set()

    def now_ms(self) -> int:
        return now_ms()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class Runtime:
    def __init__(self, settings: Settings, store: Store, catalog: NodeCatalog, pool: SandboxPool, api: HostApi) -> None:
        self.settings = settings
        self.store = store
        self.catalog = catalog
        self.pool = pool
        self.api = api
        self.runner_id = settings.runner_id
        self.limits = EngineLimits(max_output_bytes=settings.max_output_bytes)
        self.handles: dict[str, RunHandle] = {}
        self.before_finish: list[AfterFinish] = []
        """Run when the walk has settled, before the outcome is stored and callers are told."""
        self.after_finish: list[AfterFinish] = []
        """Run after the outcome is stored (notifications)."""
        self.capacity = asyncio.Semaphore(MAX_RUNNING)
        self._graphs: OrderedDict[tuple[str, int], Graph] = OrderedDict()
        self.work_available = asyncio.Event()

    # -- graphs -----------------------------------------------------------------------------------

    def graph_for(self, definition: dict[str, JSON], version: int) -> Graph:
        """Validated graph of a definition; stored versions are immutable, so they are cached."""
        if version == 0:  # inline definitions: no identity to cache by
            return build_graph(definition, self.catalog)
        key = (str(definition.get("id")), version)
        graph = self._graphs.get(key)
        if graph is None:
            graph = build_graph(definition, self.catalog)
            self._graphs[key] = graph
            if len(self._graphs) > 256:
                self._graphs.popitem(last=False)
        return graph

    # -- nodes ------------------------------------------------------------------------------------

    async def run_node(self, call: NodeCall) -> NodeOutcome:
        nt = call.node_type
        user_code_key = next(
            (k for k, v in nt.config_schema.items() if isinstance(v, dict) and v.get("x-noTemplate")), None
        )
        task = NodeTask(
            script_path=nt.path,
            source=nt.source,
            ctx={
                "input": call.input,
                "config": call.config,
                "node": {"id": call.node_id, "type": nt.type, "key": call.key},
                "execution": call.execution,
            },
            entry=call.entry,
            answer=call.answer,
            user_code=call.config.get(user_code_key) if user_code_key else None,
            timeout_seconds=call.timeout_seconds or self.settings.node_timeout_seconds,
        )
        scope = CallScope(workflow_id=call.workflow_id, node_id=call.node_id, execution_id=call.execution_id)
        return await self.pool.run(task, host_call_for(self.api, scope))

    # -- executions -------------------------------------------------------------------------------

    def new_state(
        self, definition: dict[str, JSON], version: int, input_: JSON, trigger_node_id: str | None
    ) -> ExecutionState:
        return ExecutionState(
            id=uuid.uuid4().hex,
            workflow=definition,
            workflowVersion=version,
            input=input_,
            startedAt=now_ms(),
            triggerNodeId=trigger_node_id or None,
        )

    def lease(self) -> dict[str, JSON]:
        return {"owner": self.runner_id, "until": now_ms() + int(self.settings.lease_seconds * 1000)}

    async def start(self, state: ExecutionState, *, queue: bool, respond_early: bool = False) -> RunHandle:
        """Store a new execution and run it here now, or leave it queued for any runner.

        Run here, the insert is the run's first write and the walk does not wait for it: a
        caller is answered only after the final write, which follows the insert."""
        self.graph_for(state.workflow, state.workflowVersion)  # invalid definitions never get stored
        handle = RunHandle(state, respond_early=respond_early)
        if queue:
            state.status = "pending"
            await self.store.executions.insert(self.store.executions.new_doc(state, now_ms=now_ms(), lease=None))
            self.work_available.set()
            return handle
        handle.new_doc = self.store.executions.new_doc(state, now_ms=now_ms(), lease=self.lease())
        self.launch(handle)
        return handle

    def launch(self, handle: RunHandle, resume: ResumeAnswer | None = None) -> None:
        self.handles[handle.state.id] = handle
        handle.task = asyncio.create_task(self._run(handle, resume))

    async def continue_stored(self, doc: dict[str, Any], resume: ResumeAnswer | None) -> RunHandle:
        """Run an execution this runner has just claimed (queued, due, resumed or taken over)."""
        handle = RunHandle(state_from_doc(doc))
        self.launch(handle, resume)
        return handle

    async def _run(self, handle: RunHandle, resume: ResumeAnswer | None) -> None:
        state = handle.state
        async with self.capacity:
            checkpointer = Checkpointer(self.store.executions, state, self.runner_id)
            if handle.new_doc is not None:
                checkpointer.begin_with(self.store.executions.insert(handle.new_doc))
                handle.new_doc = None
            try:
                graph = self.graph_for(state.workflow, state.workflowVersion)
                walker = Walker(graph, self.catalog, self.run_node, _Hooks(checkpointer, handle), self.limits)
                await walker.run(state, resume)
                handle.token = walker.issued_token
                unsaved = await checkpointer.drain()
                for hook in self.before_finish:
                    await hook(state, handle.token)
                if not await self.store.executions.finish(
                    state, owner=self.runner_id, now_ms=now_ms(), unsaved=unsaved, extra=_answer_record(resume)
                ):
                    raise Aborted(state.id)
            except Aborted:
                log.info("execution %s is no longer ours (cancelled or taken over); stopped", state.id)
                doc = await self.store.executions.get(state.id, light=True)
                state.status = doc["status"] if doc else "cancelled"
            except Exception as exc:  # a defect: record it on the execution rather than lose it
                log.exception("execution %s crashed", state.id)
                state.status, state.error = "failed", f"internal error: {exc}"
                await self.store.executions.finish(state, owner=self.runner_id, now_ms=now_ms(), unsaved={})
            finally:
                handle.settled.set()
                handle.responded.set()
                self.handles.pop(state.id, None)
                if len(self.handles) + 1 >= MAX_RUNNING:
                    self.work_available.set()  # we were full: look for queued work now
        self._wake_when_due(state)
        for hook in self.after_finish:
            try:
                await hook(state, handle.token)
            except Exception:
                log.exception("after-finish hook failed for execution %s", state.id)

    def _wake_when_due(self, state: ExecutionState) -> None:
        """A pause this runner just stored that falls due soon: look for due work right then,
        rather than at the next poll (other runners find it by polling)."""
        pause = state.pause
        if state.status != "waiting" or pause is None or pause.expiresAt is None:
            return
        delay = (pause.expiresAt - now_ms()) / 1000
        if delay < SOON_SECONDS:
            asyncio.get_running_loop().call_later(max(delay, 0) + 0.005, self.work_available.set)

    async def wait(self, handle: RunHandle, timeout_s: float, *, until_response: bool = False) -> None:
        event = handle.responded if until_response else handle.settled
        try:
            await asyncio.wait_for(event.wait(), timeout_s)
        except TimeoutError:
            pass

    async def shutdown(self) -> None:
        tasks = [h.task for h in self.handles.values() if h.task is not None]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _answer_record(resume: ResumeAnswer | None) -> dict[str, JSON] | None:
    if resume is None or (not resume.by and not resume.timeout):
        return None
    return {
        f"answers.{resume.key.replace('/', '_')}": {
            "key": resume.key,
            "by": resume.by,
            "at": resume.at,
            "timeout": resume.timeout,
        }
    }
