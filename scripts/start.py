"""Start the whole stack: the embedded MongoDB-compatible server (unless MONGODB_URI
is set), one runner and the webserver. Ctrl-C stops everything.

Usage: python scripts/start.py        (after scripts/start.sh made the virtualenv)
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runner.settings import Settings, SettingsError  # noqa: E402


def port_open(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((host, port)) == 0


def wait_port(host: str, port: int, proc: subprocess.Popen[bytes], name: str, seconds: float = 30) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"start: {name} exited with status {proc.returncode}; see the output above")
        if port_open(host, port):
            return
        time.sleep(0.1)
    raise SystemExit(f"start: {name} did not listen on {host}:{port} within {seconds:.0f} s")


def main() -> int:
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"start: {exc}", file=sys.stderr)
        return 2
    env = dict(os.environ)
    procs: list[tuple[str, subprocess.Popen[bytes]]] = []
    try:
        if not settings.mongodb_uri:
            mongo_port = int(env.get("SMARTBOTIC_MONGO_PORT", "27017"))
            if port_open("127.0.0.1", mongo_port):
                return _fail(f"port {mongo_port} is taken; set SMARTBOTIC_MONGO_PORT or MONGODB_URI")
            data = settings.data_dir / "mongo"
            data.mkdir(parents=True, exist_ok=True)
            exe = Path(sys.executable).parent / "secantusd-py"
            cmd = [
                str(exe),
                "--host",
                "127.0.0.1",
                "--port",
                str(mongo_port),
                "--storage-path",
                str(data),
                "--log-level",
                "WARNING",
            ]
            procs.append(("mongodb", subprocess.Popen(cmd)))
            wait_port("127.0.0.1", mongo_port, procs[-1][1], "the embedded MongoDB server")
            env["MONGODB_URI"] = f"mongodb://127.0.0.1:{mongo_port}/?directConnection=true"
            print(f"start: embedded MongoDB-compatible server on 127.0.0.1:{mongo_port}, data in {data}")
        grpc_host, _, grpc_port = settings.grpc_addr.rpartition(":")
        procs.append(("runner", subprocess.Popen([sys.executable, "-m", "runner"], cwd=ROOT, env=env)))
        wait_port(grpc_host, int(grpc_port), procs[-1][1], "the runner")
        env.setdefault("SMARTBOTIC_RUNNER_TARGET", settings.grpc_addr)
        procs.append(("webserver", subprocess.Popen([sys.executable, "-m", "webserver"], cwd=ROOT, env=env)))
        wait_port(settings.http_host, settings.http_port, procs[-1][1], "the webserver")
        print(
            f"start: ready: http://{settings.http_host}:{settings.http_port} (REST /api/v1, webhooks /webhook/<path>),"
            f" gRPC {settings.grpc_addr}. Ctrl-C stops everything.",
            flush=True,
        )
        signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
        while all(p.poll() is None for _, p in procs):
            time.sleep(0.5)
        dead = next(name for name, p in procs if p.poll() is not None)
        print(f"start: {dead} stopped; stopping the rest", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for _, p in reversed(procs):
            if p.poll() is None:
                p.terminate()
        for _, p in reversed(procs):
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()


def _fail(message: str) -> int:
    print(f"start: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
