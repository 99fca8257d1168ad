"""What the walk is given: something that runs a node, hooks into the store, and limits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from .model import JSON, ExecutionState, NodeResult, NodeType


@dataclass(frozen=True)
class NodeCall:
    """What the engine asks the node executor to run."""

    execution_id: str
    workflow_id: str
    node_id: str
    key: str
    node_type: NodeType
    config: dict[str, JSON]
    input: JSON
    execution: dict[str, JSON]
    entry: str = "execute"
    answer: JSON = None
    timeout_seconds: float | None = None


class NodeOutcomeLike(Protocol):
    ok: bool
    output: JSON
    error: str | None
    logs: list[dict[str, JSON]]


RunNode = Callable[[NodeCall], Awaitable[NodeOutcomeLike]]


class WalkHooks(Protocol):
    async def node_settled(self, state: ExecutionState, key: str, result: NodeResult) -> None:
        """A node's result is final for now (checkpoint it)."""

    async def webhook_response(self, state: ExecutionState) -> None:
        """A node recorded the HTTP response."""

    def now_ms(self) -> int: ...

    async def sleep(self, seconds: float) -> None: ...


@dataclass(frozen=True)
class EngineLimits:
    """Engine-wide policies; per-workflow settings override the guards."""

    max_output_bytes: int = 1024 * 1024
    """A node output above this fails the node."""
    park_retry_after_seconds: float = 5.0
    """A retry wait longer than this parks the execution instead of sleeping."""
    max_steps: int = 500
    """Default maxSteps guard: node runs per execution."""
    max_duration_seconds: float = 86400.0
    """Default maxDurationSeconds guard, counted over running time (waits excluded)."""
