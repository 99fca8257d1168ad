"""The worker process itself: who it runs as, what it holds open, what it imported."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from runner.sandbox import SandboxPool
from runner.sandbox.confine import NOBODY
from tests.sandbox.support import FUNCTIONAL_LIMITS

ROOT = Path(__file__).resolve().parents[2]


def _worker_pid(pool: SandboxPool) -> int:
    pid = next(iter(pool._workers)).process.pid
    assert pid is not None
    return pid


def _limits(pid: int) -> dict[str, tuple[str, str]]:
    rows = Path(f"/proc/{pid}/limits").read_text().splitlines()[1:]
    parsed = {}
    for row in rows:
        name = row[:26].strip()
        soft, hard = row[26:].split()[:2]
        parsed[name] = (soft, hard)
    return parsed


@pytest.mark.skipif(os.geteuid() != 0, reason="privileges are only dropped when the runner is root")
async def test_worker_runs_as_nobody_when_the_runner_is_root(solo_pool: SandboxPool) -> None:
    status = Path(f"/proc/{_worker_pid(solo_pool)}/status").read_text()
    uids = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1:]
    gids = next(line for line in status.splitlines() if line.startswith("Gid:")).split()[1:]
    groups = next(line for line in status.splitlines() if line.startswith("Groups:")).split()[1:]
    assert uids == [str(NOBODY)] * 4
    assert gids == [str(NOBODY)] * 4
    assert groups == []


async def test_worker_holds_only_its_pipe_and_dev_null(solo_pool: SandboxPool) -> None:
    pid = _worker_pid(solo_pool)
    fds = {int(fd): os.readlink(f"/proc/{pid}/fd/{fd}") for fd in os.listdir(f"/proc/{pid}/fd")}
    assert sorted(fds) == [0, 1, 2, 3]
    assert fds[0] == fds[1] == fds[2] == "/dev/null"
    assert fds[3].startswith("socket:")
    assert os.readlink(f"/proc/{pid}/cwd") == "/"


async def test_worker_process_limits(solo_pool: SandboxPool) -> None:
    limits = _limits(_worker_pid(solo_pool))
    memory = str(FUNCTIONAL_LIMITS.memory_bytes)
    assert limits["Max address space"] == (memory, memory)
    assert limits["Max file size"] == ("0", "0")
    assert limits["Max core file size"] == ("0", "0")
    assert limits["Max open files"] == ("4", "4")
    assert limits["Max processes"] == ("0", "0")


async def test_worker_environment_is_empty_apart_from_the_forkserver_basics(solo_pool: SandboxPool) -> None:
    environ = Path(f"/proc/{_worker_pid(solo_pool)}/environ").read_bytes()
    names = {entry.split(b"=", 1)[0].decode() for entry in environ.split(b"\0") if entry}
    assert names <= {"PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "LD_LIBRARY_PATH", "PYTHONHOME"}


def test_worker_module_imports_no_client_library() -> None:
    check = (
        "import sys, runner.sandbox.worker, runner.sandbox.spawning\n"
        "loaded = sorted(m for m in ('grpc', 'pymongo', 'aiohttp') if m in sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", check], cwd=ROOT, check=True, timeout=60)


def test_pool_starts_from_a_main_module_without_a_main_guard(tmp_path: Path) -> None:
    # multiprocessing would re-run this file in every worker; the pool hides it, so this does not recurse or crash.
    script = tmp_path / "unguarded.py"
    script.write_text(
        textwrap.dedent(
            """
            import asyncio
            from runner.sandbox import NodeTask, SandboxLimits, SandboxPool

            async def host(method, args):
                return None

            async def main():
                pool = SandboxPool(SandboxLimits(), size=1)
                pool.start()
                outcome = await pool.run(NodeTask("x.py", "def execute(ctx):\\n    return 41 + 1\\n", {}), host)
                await pool.close()
                print("OUTPUT", outcome.output, outcome.error)

            asyncio.run(main())
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "OUTPUT 42 None"
