"""Fixtures that run the real stack as processes: runner(s) and webserver.

``stack`` starts one runner (``python -m runner``) and one webserver
(``python -m webserver``) against a fresh database on the session's MongoDB
server, and stops them after the test. ``stack.start_runner()`` adds more
runner processes sharing the same database.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pytest

from runner._proto import workflow_pb2_grpc
from tests.conftest import ROOT, free_port


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def kill9(self) -> None:
        self.popen.send_signal(signal.SIGKILL)
        self.popen.wait(10)

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)


def _wait_grpc(target: str, proc: Proc, deadline_s: float = 30.0) -> None:
    channel = grpc.insecure_channel(target)
    ready = grpc.channel_ready_future(channel)
    try:
        end = time.monotonic() + deadline_s
        while True:
            if proc.popen.poll() is not None:
                raise RuntimeError(f"{proc.name} exited:\n{proc.output()[-3000:]}")
            try:
                ready.result(timeout=0.2)
                return
            except grpc.FutureTimeoutError:
                if time.monotonic() > end:
                    raise RuntimeError(f"{proc.name} did not listen on {target}:\n{proc.output()[-3000:]}") from None
    finally:
        ready.cancel()
        channel.close()


def _wait_http(url: str, proc: Proc, deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc.popen.poll() is not None:
            raise RuntimeError(f"{proc.name} exited:\n{proc.output()[-3000:]}")
        try:
            urllib.request.urlopen(url + "/healthz", timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{proc.name} did not answer on {url}:\n{proc.output()[-3000:]}")


@dataclass
class Stack:
    mongo_uri: str
    db_name: str
    tmp: Path
    env: dict[str, str]
    procs: list[Proc] = field(default_factory=list)
    grpc_target: str = ""
    http_url: str = ""
    _channel: grpc.Channel | None = None

    @property
    def stub(self) -> workflow_pb2_grpc.RunnerServiceStub:
        if self._channel is None:
            self._channel = grpc.insecure_channel(self.grpc_target)
        stub_class: Any = workflow_pb2_grpc.RunnerServiceStub
        return stub_class(self._channel)

    def base_env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SMARTBOTIC_")}
        env.update(
            MONGODB_URI=self.mongo_uri,
            SMARTBOTIC_DATABASE=self.db_name,
            SMARTBOTIC_DATA_DIR=str(self.tmp / "data"),
            SMARTBOTIC_SEED_EXAMPLES="0",
            SMARTBOTIC_WORKERS="2",
            SMARTBOTIC_POLL_INTERVAL_SECONDS="0.1",
            PYTHONUNBUFFERED="1",
        )
        env.update(self.env)
        env.update(extra)
        return env

    def _spawn(self, name: str, module: str, env: dict[str, str]) -> Proc:
        log = self.tmp / f"{name}.log"
        popen = subprocess.Popen(
            [sys.executable, "-m", module], cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
        )
        proc = Proc(name, popen, log)
        self.procs.append(proc)
        return proc

    def start_runner(self, **extra: str) -> tuple[Proc, str]:
        """Start another runner process; returns it and its gRPC target."""
        target = f"127.0.0.1:{free_port()}"
        name = f"runner{sum(p.name.startswith('runner') for p in self.procs) + 1}"
        env = self.base_env(SMARTBOTIC_GRPC_ADDR=target, SMARTBOTIC_RUNNER_ID=name, **extra)
        proc = self._spawn(name, "runner", env)
        _wait_grpc(target, proc)
        return proc, target

    def start_webserver(self, runner_target: str | None = None, **extra: str) -> tuple[Proc, str]:
        port = free_port()
        env = self.base_env(
            SMARTBOTIC_HTTP_PORT=str(port), SMARTBOTIC_RUNNER_TARGET=runner_target or self.grpc_target, **extra
        )
        proc = self._spawn(f"webserver{port}", "webserver", env)
        url = f"http://127.0.0.1:{port}"
        _wait_http(url, proc)
        return proc, url

    def http(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        """One real HTTP request to the webserver: (status, headers, parsed JSON body or text)."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        hdrs = {"Content-Type": "application/json"} if data is not None and raw is None else {}
        hdrs.update(headers or {})
        req = urllib.request.Request(self.http_url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                status, rhdrs, payload = resp.status, dict(resp.headers), resp.read()
        except urllib.error.HTTPError as err:
            status, rhdrs, payload = err.code, dict(err.headers), err.read()
        text = payload.decode(errors="replace")
        try:
            return status, rhdrs, json.loads(text)
        except ValueError:
            return status, rhdrs, text

    def close(self) -> None:
        if self._channel is not None:
            self._channel.close()
        for proc in reversed(self.procs):
            proc.stop()


@pytest.fixture
def stack_env() -> dict[str, str]:
    """Extra environment for the stack's processes; override in a test module."""
    return {}


@pytest.fixture
def stack(mongo_uri: str, db_name: str, tmp_path: Path, stack_env: dict[str, str]) -> Iterator[Stack]:
    s = Stack(mongo_uri=mongo_uri, db_name=db_name, tmp=tmp_path, env=dict(stack_env))
    (tmp_path / "data" / "files").mkdir(parents=True)
    try:
        _, s.grpc_target = s.start_runner()
        _, s.http_url = s.start_webserver()
        yield s
    except Exception:
        for p in s.procs:
            sys.stderr.write(f"--- {p.name} ---\n{p.output()[-4000:]}\n")
        raise
    finally:
        s.close()
