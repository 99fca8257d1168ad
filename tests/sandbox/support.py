"""Helpers of the sandbox tests: a fake runner side for host calls, task builders, limits."""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field
from typing import Any

from runner.sandbox import HostApiError, NodeOutcome, NodeTask, SandboxLimits, SandboxPool
from runner.sandbox.types import JSON

SECRET_NAME = "SMARTBOTIC_SANDBOX_TEST_SECRET"
SECRET_VALUE = "s3cret-token-that-must-not-leak"
# Set before any pool (and so the forkserver) starts: no worker may ever see it.
os.environ.setdefault(SECRET_NAME, SECRET_VALUE)

MiB = 1024 * 1024


@dataclass
class FakeHost:
    """The runner's side of smartbotic.* calls: records them and answers a few."""

    calls: list[tuple[str, list[JSON]]] = field(default_factory=list)
    storage: dict[str, JSON] = field(default_factory=dict)

    async def __call__(self, method: str, args: list[JSON]) -> JSON:
        self.calls.append((method, args))
        if method == "fs.stat":
            return {"size": 3, "isFile": True}
        if method == "fs.readFile":
            raise HostApiError(f"fs.readFile: {args[0]} is outside the allowed roots")
        if method == "storage.set":
            self.storage[str(args[0])] = args[1]
            return None
        if method == "storage.get":
            return self.storage.get(str(args[0]))
        if method == "process.exec":
            raise RuntimeError("a defect in the runner")
        return {"method": method, "args": args}


SCRIPT_PATH = "nodes/test/node.py"


def node(
    source: str,
    ctx: dict[str, JSON] | None = None,
    *,
    entry: str = "execute",
    answer: JSON = None,
    user_code: str | None = None,
    timeout_seconds: float | None = None,
) -> NodeTask:
    return NodeTask(
        script_path=SCRIPT_PATH,
        source=textwrap.dedent(source),
        ctx={"input": {}, "config": {}, "node": {}, "execution": {}} if ctx is None else ctx,
        entry=entry,
        answer=answer,
        user_code=None if user_code is None else textwrap.dedent(user_code),
        timeout_seconds=timeout_seconds,
    )


async def run(
    pool: SandboxPool,
    source: str,
    host: FakeHost | None = None,
    ctx: dict[str, JSON] | None = None,
    **options: Any,
) -> NodeOutcome:
    return await pool.run(node(source, ctx, **options), host or FakeHost())


TRIVIAL = "def execute(ctx):\n    return {'ok': True}\n"


async def assert_healthy(pool: SandboxPool) -> None:
    """The pool runs a normal node right after whatever the test did."""
    outcome = await run(pool, TRIVIAL)
    assert outcome.ok, outcome.error
    assert outcome.output == {"ok": True}


FUNCTIONAL_LIMITS = SandboxLimits(
    wall_seconds=10.0,
    cpu_seconds=10.0,
    memory_bytes=256 * MiB,
    max_output_bytes=64 * 1024,
    max_log_lines=5,
    max_log_line_bytes=100,
)

ABUSE_LIMITS = SandboxLimits(
    wall_seconds=1.0,
    cpu_seconds=5.0,
    memory_bytes=256 * MiB,
    max_output_bytes=64 * 1024,
)
