"""The engine's own types: workflow definitions, node types, results, state.

Everything here is plain data that serialises to JSON/BSON as-is through
``to_doc``/``from_doc``; the engine walks one :class:`ExecutionState`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

JSON = Any
NodeStatus = Literal["completed", "failed", "skipped", "waiting", "running"]
ExecStatus = Literal["pending", "running", "completed", "failed", "cancelled", "waiting"]
FINISHED: frozenset[str] = frozenset({"completed", "failed", "cancelled"})
RESERVED_KEYS = frozenset({"_branch", "_pause", "_webhookResponse", "_loop"})


class EngineError(Exception):
    """A failure the engine reports with the execution and node it concerns."""

    def __init__(self, message: str, *, execution_id: str = "", node_id: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.execution_id = execution_id
        self.node_id = node_id


class WorkflowInvalid(ValueError):
    """A workflow definition has problems; ``problems`` lists every one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("workflow is invalid: " + "; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failing node is tried again."""

    limit: int = 0
    """Extra attempts after the first."""
    delay: float = 1.0
    """Seconds before the first retry."""
    backoff: Literal["constant", "linear", "exponential"] = "constant"
    """constant: delay; linear: delay * n; exponential: delay * 2**(n-1), for retry n."""
    max_delay: float = 3600.0
    """Upper bound on one wait."""

    def delay_before(self, retry_number: int) -> float:
        if self.backoff == "linear":
            wait = self.delay * retry_number
        elif self.backoff == "exponential":
            wait = self.delay * 2 ** (retry_number - 1)
        else:
            wait = self.delay
        return float(min(wait, self.max_delay))

    @classmethod
    def from_doc(cls, doc: JSON) -> RetryPolicy:
        if not doc:
            return cls()
        return cls(
            limit=int(doc.get("limit", 0)),
            delay=float(doc.get("delay", 1.0)),
            backoff=doc.get("backoff", "constant"),
            max_delay=float(doc.get("maxDelay", 3600.0)),
        )


@dataclass(frozen=True)
class NodeType:
    """A node script under ``nodes/``, as the loader read it (never executed in the runner)."""

    type: str
    path: str
    source: str
    description: str = ""
    config_schema: dict[str, JSON] = field(default_factory=dict)
    outputs: tuple[str, ...] = ("main",)
    has_resume: bool = False
    default_retry: dict[str, JSON] | None = None
    error: str | None = None
    """Set when the script is broken: file, line and message. Such a type cannot run."""
    edit_error: str | None = None
    """A later edit of the script is broken; this (previous) version keeps serving."""

    @property
    def is_trigger(self) -> bool:
        return self.type.startswith("triggers/")

    @property
    def no_template_keys(self) -> frozenset[str]:
        return frozenset(k for k, v in self.config_schema.items() if isinstance(v, dict) and v.get("x-noTemplate"))


@dataclass
class NodeResult:
    """One node run's stored result (DESIGN §4)."""

    status: NodeStatus
    output: JSON = None
    error: str | None = None
    branch: str | None = None
    """The active output: None means "main"; "error" after onError=route."""
    startedAt: int = 0
    finishedAt: int = 0
    attempts: int = 0
    logs: list[JSON] = field(default_factory=list)
    nodeId: str = ""
    type: str = ""
    disabled: bool = False
    continued: bool = False
    """Failed, but onError=continue let the walk go on."""
    items: list[JSON] | None = None
    """core/loop: the items, fixed at its first run so a resumed loop sees the same list."""
    wakeAt: int | None = None
    """A parked retry: when to try again (ms since epoch)."""

    def to_doc(self) -> dict[str, JSON]:
        doc: dict[str, JSON] = {"status": self.status, "output": self.output}
        for name in _RESULT_OPTIONAL:
            value = getattr(self, name)
            if value not in (None, [], False):
                doc[name] = value
        return doc

    @classmethod
    def from_doc(cls, doc: dict[str, JSON]) -> NodeResult:
        return cls(**{k: v for k, v in doc.items() if k in _RESULT_FIELDS})


_RESULT_FIELDS = frozenset(NodeResult.__dataclass_fields__)
_RESULT_OPTIONAL = tuple(f for f in NodeResult.__dataclass_fields__ if f not in ("status", "output"))


@dataclass
class Pause:
    """Why and where an execution waits (DESIGN §6, §7)."""

    nodeId: str
    key: str
    kind: Literal["approval", "timer", "event", "retry"] = "approval"
    reason: str = ""
    fields: JSON = None
    expiresAt: int | None = None
    """Approval/event: when the pause times out. Timer/retry: when to wake."""
    tokenHash: str | None = None
    onTimeout: str = "fail"
    eventType: str | None = None
    eventKey: str | None = None
    waitingSince: int = 0
    notifyUrl: str | None = None

    def to_doc(self) -> dict[str, JSON]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_doc(cls, doc: dict[str, JSON]) -> Pause:
        return cls(**{k: v for k, v in doc.items() if k in cls.__dataclass_fields__})


@dataclass
class ResumeAnswer:
    """The answer that ends a pause: a person's, an event's, a timer's or a timeout's."""

    key: str
    payload: JSON = None
    by: str = ""
    at: int = 0
    timeout: bool = False
    expiresAt: int | None = None
    """For a timeout: when the pause expired."""


@dataclass
class ExecutionState:
    """Everything the walk needs and produces; serialisable as one document."""

    id: str
    workflow: dict[str, JSON]
    """The pinned snapshot of the definition."""
    workflowVersion: int
    input: JSON
    startedAt: int
    triggerNodeId: str | None = None
    status: ExecStatus = "running"
    results: dict[str, NodeResult] = field(default_factory=dict)
    output: JSON = None
    error: str | None = None
    errorNodeId: str | None = None
    webhookResponse: JSON = None
    webhookResponseNode: str | None = None
    warnings: list[str] = field(default_factory=list)
    steps: int = 0
    pause: Pause | None = None
    lastKey: str | None = None
    """Key of the last node that ran or was replayed: its output is the execution's output."""
    variables: dict[str, JSON] = field(default_factory=dict)

    @property
    def workflow_id(self) -> str:
        return str(self.workflow.get("id", ""))
