"""A pure test double for the engine's node executor: node types as Python functions.

The engine takes "something that runs a node" as a parameter; these tests of
ordering, branching, markers, retries and guards hand it plain functions, so
they run in microseconds. The real sandbox is tested in tests/sandbox and
end to end in tests/integration.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runner.engine.graph import build_graph
from runner.engine.model import ExecutionState, NodeResult, NodeType
from runner.engine.walk import EngineLimits, NodeCall, Walker


@dataclass
class Outcome:
    ok: bool
    output: Any = None
    error: str | None = None
    logs: list[dict[str, Any]] = field(default_factory=list)


Fn = Callable[[NodeCall], Any]


def passthrough(call: NodeCall) -> Any:
    return call.input


def node_type(
    name: str, outputs: tuple[str, ...] = ("main",), config: dict[str, Any] | None = None, has_resume: bool = False
) -> NodeType:
    return NodeType(
        name, f"nodes/{name}.py", f"# {name}", config_schema=config or {}, outputs=outputs, has_resume=has_resume
    )


class Kit:
    """Node types whose behaviour is a Python function, and a recorder of what ran."""

    def __init__(self) -> None:
        self.types: dict[str, NodeType] = {}
        self.fns: dict[str, Fn] = {}
        self.ran: list[str] = []
        self.settled: list[tuple[str, str]] = []
        self.responses = 0
        self.clock = itertools.count(1_700_000_000_000, 10)
        self.slept: list[float] = []
        self.add("triggers/manual", passthrough)
        self.add("core/noop", passthrough)

    def add(self, name: str, fn: Fn, **kw: Any) -> None:
        self.types[name] = node_type(name, **kw)
        self.fns[name] = fn

    async def run_node(self, call: NodeCall) -> Outcome:
        self.ran.append(call.key)
        try:
            return Outcome(True, self.fns[call.node_type.type](call))
        except Exception as exc:
            return Outcome(False, error=f"{type(exc).__name__}: {exc}")

    # WalkHooks
    async def node_settled(self, state: ExecutionState, key: str, result: NodeResult) -> None:
        self.settled.append((key, result.status))

    async def webhook_response(self, state: ExecutionState) -> None:
        self.responses += 1

    def now_ms(self) -> int:
        return next(self.clock)

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    async def run(
        self,
        wf: dict[str, Any],
        input_: Any = None,
        *,
        state: ExecutionState | None = None,
        resume: Any = None,
        limits: EngineLimits | None = None,
    ) -> tuple[ExecutionState, Walker]:
        graph = build_graph(wf, self.types)
        walker = Walker(graph, self.types, self.run_node, self, limits or EngineLimits())
        state = state or ExecutionState(id="e1", workflow=wf, workflowVersion=1, input=input_, startedAt=self.now_ms())
        await walker.run(state, resume)
        return state, walker


def wf(nodes: list[dict[str, Any]], connections: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    return {"id": "w", "name": "test", "nodes": nodes, "connections": connections or [], **extra}
