"""The contract between the runner and its sandbox (worker processes).

The engine hands a :class:`NodeTask` to :meth:`SandboxPool.run` and always gets
a :class:`NodeOutcome` back: running a node never raises. Every
``smartbotic.*`` call a script makes travels back to the runner as
``(method, args)`` and is answered by a :data:`HostCall` the runner supplies.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

JSON = Any
"""A value made only of dict, list, str, int, float, bool and None."""


class HostApiError(Exception):
    """A ``smartbotic.*`` call was refused or failed; the message goes back to the script."""


HostCall = Callable[[str, list[JSON]], Awaitable[JSON]]
"""``await host_call("fs.stat", ["/data/a.txt"])`` → plain JSON, or raises HostApiError."""


@dataclass(frozen=True)
class SandboxLimits:
    """Limits of one worker process and of one node run."""

    wall_seconds: float = 30.0
    """Default wall-clock budget of one node run; the worker is killed and replaced past it."""
    cpu_seconds: float = 30.0
    """CPU-time budget of one node run (RLIMIT_CPU, reset before each task)."""
    memory_bytes: int = 512 * 1024 * 1024
    """Address-space limit of a worker (RLIMIT_AS)."""
    max_output_bytes: int = 1024 * 1024
    """A node output whose JSON encoding is larger fails the node."""
    max_log_lines: int = 200
    """Log lines kept per node run; later lines are dropped and one notice says how many."""
    max_log_line_bytes: int = 4096
    """A longer log line is cut, and says so."""


@dataclass(frozen=True)
class NodeTask:
    """One run of a node script's ``execute(ctx)`` or ``resume(ctx, answer)``."""

    script_path: str
    """Shown in errors, e.g. ``nodes/core/set.py``."""
    source: str
    """The node script's source."""
    ctx: dict[str, JSON]
    """``{"input", "config", "node", "execution"}``; becomes ``ctx.input`` etc. in the script."""
    entry: str = "execute"
    """``execute`` or ``resume``."""
    answer: JSON = None
    """The answer handed to ``resume(ctx, answer)``."""
    user_code: str | None = None
    """``core/code``'s user code; the script calls it as ``ctx.runCode(input)``."""
    timeout_seconds: float | None = None
    """Overrides ``SandboxLimits.wall_seconds`` for this run."""


@dataclass
class NodeOutcome:
    """What a node run produced. ``ok`` False means ``error`` says why, for a person."""

    ok: bool
    output: JSON = None
    error: str | None = None
    logs: list[dict[str, JSON]] = field(default_factory=list)
    """``[{"level": "info|warn|error", "message": str, "at": ms since epoch}]``"""
    duration_ms: float = 0.0
