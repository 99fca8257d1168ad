"""Start a throw-away stack for a harness run: embedded MongoDB, one runner, one webserver, all on free ports."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "verify_node"
START_TIMEOUT_S = 60.0


class StackError(RuntimeError):
    """The stack could not be started; the message carries the failing process's log tail."""


@dataclass(frozen=True)
class Endpoints:
    """Where the harness finds a stack."""

    http_url: str
    """The webserver, e.g. ``http://127.0.0.1:8080``."""
    grpc_target: str | None = None
    """The runner's gRPC address (informational: the harness talks REST)."""
    mongodb_uri: str | None = None
    """The MongoDB the runner uses; needed by ``db`` steps."""
    database: str = "smartbotic"
    """``SMARTBOTIC_DATABASE``; node data lives in ``<database>_data``."""
    fs_root: Path | None = None
    """A root of the runner's fs API; needed by ``fs`` steps and ``{{fixtureDir}}``."""
    scheduler_clock_file: Path | None = None
    """``SMARTBOTIC_SCHEDULER_CLOCK_FILE`` of the runner: ``clock`` steps move it; None means the real clock."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class _Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, chars: int = 3000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""


@dataclass
class OwnStack:
    """A stack in a temporary directory; ``stop()`` ends its processes and removes the directory."""

    tmp: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="verify-node-")))
    procs: list[_Proc] = field(default_factory=list)
    endpoints: Endpoints | None = None

    def start(self) -> Endpoints:
        """Start the three processes; StackError (with the failing one's log) when one does not come up."""
        files = self.tmp / "data" / "files"
        files.mkdir(parents=True)
        mongo_port, grpc_port, http_port = free_port(), free_port(), free_port()
        mongo_uri = f"mongodb://127.0.0.1:{mongo_port}/?directConnection=true"
        exe = Path(sys.executable).parent / "secantusd-py"
        mongo_cmd = [str(exe), "--host", "127.0.0.1", "--port", str(mongo_port), "--storage-path", ":memory:"]
        mongo = self._spawn("mongodb", [*mongo_cmd, "--log-level", "WARNING"], dict(os.environ))
        _wait_port(mongo_port, mongo)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTBOTIC_")}
        grpc_target = f"127.0.0.1:{grpc_port}"
        clock = self.tmp / "scheduler-clock"  # no file: schedules wait for a fixture's clock step
        env.update(
            MONGODB_URI=mongo_uri,
            SMARTBOTIC_DATABASE=DATABASE,
            SMARTBOTIC_DATA_DIR=str(self.tmp / "data"),
            SMARTBOTIC_SEED_EXAMPLES="0",
            SMARTBOTIC_WORKERS="2",
            SMARTBOTIC_POLL_INTERVAL_SECONDS="0.1",
            SMARTBOTIC_GRPC_ADDR=grpc_target,
            SMARTBOTIC_RUNNER_TARGET=grpc_target,
            SMARTBOTIC_HTTP_HOST="127.0.0.1",
            SMARTBOTIC_HTTP_PORT=str(http_port),
            SMARTBOTIC_SCHEDULER_CLOCK_FILE=str(clock),
            PYTHONUNBUFFERED="1",
        )
        runner = self._spawn("runner", [sys.executable, "-m", "runner"], env)
        _wait_port(grpc_port, runner)
        webserver = self._spawn("webserver", [sys.executable, "-m", "webserver"], env)
        http_url = f"http://127.0.0.1:{http_port}"
        _wait_healthy(http_url, webserver)
        self.endpoints = Endpoints(http_url, grpc_target, mongo_uri, DATABASE, files, clock)
        return self.endpoints

    def _spawn(self, name: str, cmd: list[str], env: dict[str, str]) -> _Proc:
        log = self.tmp / f"{name}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        proc = _Proc(name, popen, log)
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ({p.log}) ---\n{p.tail()}" for p in self.procs)

    def stop(self, *, keep_dir: bool = False) -> None:
        for proc in reversed(self.procs):
            if proc.popen.poll() is None:
                proc.popen.terminate()
        for proc in reversed(self.procs):
            try:
                proc.popen.wait(10)
            except subprocess.TimeoutExpired:
                proc.popen.kill()
                proc.popen.wait(5)
        self.procs.clear()
        if not keep_dir:
            shutil.rmtree(self.tmp, ignore_errors=True)


def _start_failed(proc: _Proc, why: str) -> StackError:
    return StackError(f"could not start the stack: {proc.name} {why}; its log ends:\n{proc.tail()}")


def _wait_port(port: int, proc: _Proc) -> None:
    end = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < end:
        if proc.popen.poll() is not None:
            raise _start_failed(proc, f"exited with status {proc.popen.returncode}")
        with socket.socket() as s:
            s.settimeout(0.2)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise _start_failed(proc, f"did not listen on 127.0.0.1:{port} within {START_TIMEOUT_S:.0f} s")


def _wait_healthy(url: str, proc: _Proc) -> None:
    end = time.monotonic() + START_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < end:
        if proc.popen.poll() is not None:
            raise _start_failed(proc, f"exited with status {proc.popen.returncode}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as resp:
                if resp.status == 200:
                    return
        except urllib.error.HTTPError as err:
            last = f"/healthz answered {err.code}"
        except OSError as err:
            last = str(err)
        time.sleep(0.1)
    raise _start_failed(proc, f"at {url} not healthy within {START_TIMEOUT_S:.0f} s ({last})")


def check_reachable(url: str) -> None:
    """A given stack must answer /healthz with 200 (runner and database reachable) before fixtures run."""
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=5) as resp:
            if resp.status == 200:
                return
            problem = f"answered {resp.status}"
    except urllib.error.HTTPError as err:
        problem = f"answered {err.code}: {err.read()[:300].decode(errors='replace')}"
    except OSError as err:
        problem = str(err)
    raise StackError(f"the stack at {url} is not healthy: {url}/healthz {problem}")
