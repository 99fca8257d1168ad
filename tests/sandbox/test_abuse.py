"""Scripts that loop, allocate, recurse or flood: each fails only its own node, and the pool carries on."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from runner.sandbox import SandboxLimits, SandboxPool
from runner.sandbox.types import JSON
from tests.sandbox.support import ABUSE_LIMITS, SCRIPT_PATH, FakeHost, MiB, assert_healthy, node, run

LOOP_FOREVER = "def execute(ctx):\n    while True:\n        pass\n"


async def test_infinite_loop_fails_its_node_at_the_wall_clock_budget(abuse_pool: SandboxPool) -> None:
    started = time.monotonic()
    outcome = await run(abuse_pool, LOOP_FOREVER)
    elapsed = time.monotonic() - started
    assert outcome.error == "node exceeded its 1.0 s time limit"
    assert 0.95 <= elapsed < 2.0
    await assert_healthy(abuse_pool)


async def test_task_timeout_overrides_the_pool_budget(abuse_pool: SandboxPool) -> None:
    started = time.monotonic()
    outcome = await run(abuse_pool, "import time\ndef execute(ctx):\n    time.sleep(30)\n", timeout_seconds=0.25)
    assert outcome.error == "node exceeded its 0.25 s time limit"
    assert time.monotonic() - started < 1.0
    await assert_healthy(abuse_pool)


CPU_POOL_LIMITS = SandboxLimits(wall_seconds=10.0, cpu_seconds=1.0, memory_bytes=256 * MiB)


@pytest_asyncio.fixture(scope="module")
async def cpu_pool() -> AsyncIterator[SandboxPool]:
    sandbox = SandboxPool(CPU_POOL_LIMITS, size=1)
    sandbox.start()
    yield sandbox
    await sandbox.close()


async def test_cpu_budget_ends_a_loop_before_the_wall_clock(cpu_pool: SandboxPool) -> None:
    started = time.monotonic()
    outcome = await run(cpu_pool, LOOP_FOREVER)
    assert outcome.error == "node exceeded its 1 s CPU-time limit"
    # RLIMIT_CPU counts whole seconds (1 to 2 s of CPU here); on a loaded machine that takes longer in wall time.
    assert time.monotonic() - started < CPU_POOL_LIMITS.wall_seconds - 1
    await assert_healthy(cpu_pool)


async def test_cpu_budget_stops_a_long_computation_inside_c(cpu_pool: SandboxPool) -> None:
    # One C call (about 7 s here): no Python-level check could interrupt it; the kernel's SIGXCPU does.
    started = time.monotonic()
    outcome = await run(cpu_pool, "def execute(ctx):\n    return len(str(7 ** (10**7)))\n")
    assert outcome.error == "node exceeded its 1 s CPU-time limit"
    assert time.monotonic() - started < CPU_POOL_LIMITS.wall_seconds - 1
    await assert_healthy(cpu_pool)


@pytest.mark.parametrize(
    "source",
    [
        "def execute(ctx):\n    return 'a' * 10**10\n",
        "def execute(ctx):\n    chunks = []\n    while True:\n        chunks.append('x' * 10**6)\n",
        "def execute(ctx):\n    return [0] * (10**9)\n",
        "def execute(ctx):\n    return f\"{1:>{10**10}}\"\n",
    ],
    ids=["string-bomb", "list-growth", "list-bomb", "format-width-bomb"],
)
async def test_memory_bomb_fails_its_node_with_the_limit(abuse_pool: SandboxPool, source: str) -> None:
    # A generous time budget, so the message proves the memory limit stopped it (list growth takes a moment).
    outcome = await run(abuse_pool, source, timeout_seconds=10)
    assert outcome.error == "node used more than 256 MiB of memory"
    await assert_healthy(abuse_pool)


async def test_a_script_may_survive_its_own_memory_error(abuse_pool: SandboxPool) -> None:
    source = """
        def execute(ctx):
            try:
                'a' * 10**10
            except MemoryError:
                return "caught"
        """
    outcome = await run(abuse_pool, source)
    assert outcome.ok, outcome.error
    assert outcome.output == "caught"
    await assert_healthy(abuse_pool)


async def test_unbounded_recursion_fails_with_a_clear_message(abuse_pool: SandboxPool) -> None:
    source = """
        def dive(n):
            return dive(n + 1)

        def execute(ctx):
            return dive(0)
        """
    outcome = await run(abuse_pool, source)
    assert outcome.error == (
        f"node recursed too deeply (RecursionError: maximum recursion depth exceeded) ({SCRIPT_PATH}, line 3)"
    )
    await assert_healthy(abuse_pool)


async def test_huge_output_fails_with_both_sizes(abuse_pool: SandboxPool) -> None:
    outcome = await run(abuse_pool, "def execute(ctx):\n    return ['x' * 1000] * 200\n")
    assert outcome.error == "node output is 200601 bytes of JSON, above the 65536-byte limit"
    await assert_healthy(abuse_pool)


async def test_output_nested_beyond_reason_fails_clearly(abuse_pool: SandboxPool) -> None:
    source = """
        def execute(ctx):
            deep = []
            for _ in range(100000):
                deep = [deep]
            return deep
        """
    outcome = await run(abuse_pool, source)
    assert outcome.error == "node output is not JSON: output is nested more than 500 levels deep"
    await assert_healthy(abuse_pool)


async def test_set_output_fails_and_the_next_node_runs(abuse_pool: SandboxPool) -> None:
    outcome = await run(abuse_pool, "def execute(ctx):\n    return {1, 2, 3}\n")
    assert outcome.error == (
        "node output is not JSON: output is of type set; use dict, list, str, int, float, bool or None"
    )
    await assert_healthy(abuse_pool)


async def test_big_power_of_two_fails_its_node(abuse_pool: SandboxPool) -> None:
    # Computing it takes about half a second of C; whichever limit stops it, only this node fails.
    outcome = await run(abuse_pool, "def execute(ctx):\n    return 2 ** (10**8)\n")
    assert outcome.error in {
        "node exceeded its 1.0 s time limit",
        "node output is not JSON: output is an integer with more than 4300 digits",
    }
    await assert_healthy(abuse_pool)


async def test_log_flood_is_capped(abuse_pool: SandboxPool) -> None:
    source = """
        def execute(ctx):
            for i in range(100000):
                smartbotic.log.info("x" * 10000)
                print("p", i)
            return "done"
        """
    outcome = await run(abuse_pool, source)
    assert outcome.ok, outcome.error
    kept = ABUSE_LIMITS.max_log_lines
    assert len(outcome.logs) == kept + 1
    assert all(len(e["message"]) < ABUSE_LIMITS.max_log_line_bytes + 100 for e in outcome.logs)
    assert outcome.logs[-1]["message"] == f"{200000 - kept} more log lines dropped (limit {kept} per node run)"


async def test_wall_clock_covers_a_host_call_that_never_answers(abuse_pool: SandboxPool) -> None:
    cancelled: list[str] = []

    async def slow_host(method: str, args: list[JSON]) -> JSON:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.append(method)
            raise
        return None

    task = node("def execute(ctx):\n    return smartbotic.http.request('GET', 'https://example.org')\n")
    outcome = await abuse_pool.run(task, slow_host)
    assert outcome.error == "node exceeded its 1.0 s time limit"
    assert cancelled == ["http.request"]
    await assert_healthy(abuse_pool)


async def test_worker_killed_from_outside_fails_only_the_running_node(abuse_pool: SandboxPool) -> None:
    sleeping = asyncio.create_task(run(abuse_pool, "import time\ndef execute(ctx):\n    time.sleep(0.8)\n"))
    await asyncio.sleep(0.2)
    busy = [w for w in abuse_pool._workers if w.busy]
    assert len(busy) == 1
    pid = busy[0].process.pid
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    outcome = await sleeping
    assert not outcome.ok
    assert (outcome.error or "").startswith("the node's worker process was killed (SIGKILL)")
    await assert_healthy(abuse_pool)


async def test_idle_worker_that_dies_is_replaced(abuse_pool: SandboxPool) -> None:
    victim = next(w for w in abuse_pool._workers if not w.busy)
    assert victim.process.pid is not None
    os.kill(victim.process.pid, signal.SIGKILL)
    for _ in range(200):
        if victim not in abuse_pool._workers and len(abuse_pool._workers) == 2:
            break
        await asyncio.sleep(0.01)
    assert victim not in abuse_pool._workers
    assert len(abuse_pool._workers) == 2
    results = await asyncio.gather(*(run(abuse_pool, "def execute(ctx):\n    return 1\n") for _ in range(4)))
    assert [r.output for r in results] == [1, 1, 1, 1]


async def test_twenty_concurrent_nodes_on_two_workers_fail_only_the_hostile_ones(abuse_pool: SandboxPool) -> None:
    hostile = {
        3: ("import time\ndef execute(ctx):\n    time.sleep(5)\n", "node exceeded its 0.3 s time limit"),
        7: ("def execute(ctx):\n    return 'a' * 10**10\n", "node used more than 256 MiB of memory"),
        11: (LOOP_FOREVER, "node exceeded its 0.3 s time limit"),
        15: ("def execute(ctx):\n    return {1}\n", "node output is not JSON"),
        19: ("def execute(ctx):\n    raise ValueError('boom')\n", "ValueError: boom"),
    }
    normal = "def execute(ctx):\n    return {'n': ctx.input['n'] * 2}\n"
    host = FakeHost()
    tasks = [
        abuse_pool.run(node(hostile[i][0] if i in hostile else normal, {"input": {"n": i}}, timeout_seconds=0.3), host)
        for i in range(20)
    ]
    started = time.monotonic()
    outcomes = await asyncio.gather(*tasks)
    assert time.monotonic() - started < 5.0
    for i, outcome in enumerate(outcomes):
        if i in hostile:
            assert not outcome.ok
            assert hostile[i][1] in (outcome.error or ""), (i, outcome.error)
        else:
            assert outcome.ok, (i, outcome.error)
            assert outcome.output == {"n": i * 2}
    await assert_healthy(abuse_pool)
