"""Benchmarks with named workloads. Each prints a JSON line of its figures and a table.

    python scripts/bench.py engine            # starts its own stack (embedded MongoDB, runner)
    python scripts/bench.py engine --runs 30
    python scripts/bench.py engine --grpc-target 127.0.0.1:50051 --mongodb-uri mongodb://...

Database round trips per execution are read from the server's
``serverStatus.opcounters`` before and after (works on mongod and the embedded server).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import grpc  # noqa: E402
from pymongo import MongoClient  # noqa: E402

from runner._proto import workflow_pb2 as pb  # noqa: E402
from runner._proto import workflow_pb2_grpc as pb_grpc  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Target:
    grpc_target: str
    mongodb_uri: str
    database: str
    http_url: str = ""

    @property
    def stub(self) -> pb_grpc.RunnerServiceStub:
        return pb_grpc.RunnerServiceStub(grpc.insecure_channel(self.grpc_target))

    def db_ops(self) -> int:
        counters = MongoClient(self.mongodb_uri).admin.command("serverStatus")["opcounters"]
        return int(sum(v for k, v in counters.items() if k != "command"))


def _wait_port(port: int, proc: subprocess.Popen[bytes], what: str) -> None:
    end = time.monotonic() + 30
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"bench: {what} exited")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"bench: {what} did not start")


@contextmanager
def own_stack(
    *, runners: int = 1, webserver: bool = False, env_extra: dict[str, str] | None = None
) -> Iterator[Target]:
    procs: list[subprocess.Popen[bytes]] = []
    tmp = tempfile.mkdtemp(prefix="smartbotic-bench-")
    try:
        mport = free_port()
        procs.append(
            subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "secantusd-py"),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(mport),
                    "--storage-path",
                    f"{tmp}/mongo",
                    "--log-level",
                    "WARNING",
                ]
            )
        )
        _wait_port(mport, procs[-1], "embedded MongoDB")
        uri = f"mongodb://127.0.0.1:{mport}/?directConnection=true"
        base = {
            **os.environ,
            "MONGODB_URI": uri,
            "SMARTBOTIC_DATABASE": "bench",
            "SMARTBOTIC_DATA_DIR": tmp,
            "SMARTBOTIC_SEED_EXAMPLES": "0",
            **(env_extra or {}),
        }
        targets = []
        for i in range(runners):
            gport = free_port()
            env = {**base, "SMARTBOTIC_GRPC_ADDR": f"127.0.0.1:{gport}", "SMARTBOTIC_RUNNER_ID": f"bench{i}"}
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "runner"],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            _wait_port(gport, procs[-1], "runner")
            targets.append(f"127.0.0.1:{gport}")
        http_url = ""
        if webserver:
            hport = free_port()
            env = {**base, "SMARTBOTIC_HTTP_PORT": str(hport), "SMARTBOTIC_RUNNER_TARGET": targets[0]}
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "webserver"],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )
            _wait_port(hport, procs[-1], "webserver")
            http_url = f"http://127.0.0.1:{hport}"
        yield Target(targets[0], uri, "bench", http_url)
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            p.wait(15)


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def linear_code_workflow(n: int) -> dict[str, Any]:
    nodes: list[dict[str, Any]] = [{"id": "start", "type": "triggers/manual", "config": {}}]
    for i in range(n):
        nodes.append(
            {
                "id": f"n{i}",
                "type": "core/code",
                "config": {"code": "def main(input):\n    return {'i': input.get('i', 0) + 1}"},
            }
        )
    ids = [x["id"] for x in nodes]
    return {
        "id": "bench-engine",
        "name": "bench engine",
        "nodes": nodes,
        "connections": [{"from": a, "to": b} for a, b in itertools.pairwise(ids)],
    }


def workload_engine(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """40-node linear workflow of trivial core/code nodes over gRPC, waiting for completion, stored."""
    n = 40
    stub = target.stub
    wf = linear_code_workflow(n)
    stub.SaveWorkflow(pb.SaveWorkflowRequest(workflow_json=json.dumps(wf)))
    req = pb.ExecuteWorkflowRequest(
        workflow_id="bench-engine", input_json="{}", wait_for_completion=True, timeout_ms=60000
    )
    for _ in range(3):  # warm up workers and caches
        stub.ExecuteWorkflow(req)
    per_node: list[float] = []
    node_ms: list[float] = []
    ops_before = target.db_ops()
    for _ in range(args.runs):
        t0 = time.perf_counter()
        reply = stub.ExecuteWorkflow(req)
        elapsed = (time.perf_counter() - t0) * 1000
        if reply.status != pb.EXECUTION_STATUS_COMPLETED:
            raise SystemExit(f"bench: engine run failed: {reply.error}")
        per_node.append(elapsed / (n + 1))
    ops = (target.db_ops() - ops_before) / args.runs
    detail = json.loads(stub.GetExecution(pb.GetExecutionRequest(execution_id=reply.execution_id)).detail_json)
    for r in detail["results"].values():
        node_ms.append(r["finishedAt"] - r["startedAt"])
    return {
        "workload": "engine",
        "nodes": n + 1,
        "runs": args.runs,
        "ms_per_node_median": round(statistics.median(per_node), 3),
        "ms_per_node_p99": round(pct(per_node, 99), 3),
        "ms_per_execution_median": round(statistics.median(per_node) * (n + 1), 1),
        "node_run_ms_mean_in_engine": round(statistics.mean(node_ms), 3),
        "db_ops_per_execution": round(ops, 1),
    }


WORKLOADS: dict[str, tuple[Callable[[Target, argparse.Namespace], dict[str, Any]], dict[str, Any]]] = {
    "engine": (workload_engine, {}),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS), help=f"any of {', '.join(WORKLOADS)}")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--grpc-target", help="use a running runner instead of starting a stack")
    parser.add_argument("--mongodb-uri", help="with --grpc-target: the runner's database, for op counts")
    args = parser.parse_args()
    for name in args.workloads:
        if name not in WORKLOADS:
            parser.error(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}")
        fn, opts = WORKLOADS[name]
        if args.grpc_target:
            result = fn(Target(args.grpc_target, args.mongodb_uri or "mongodb://127.0.0.1:27017", "smartbotic"), args)
        else:
            with own_stack(**opts) as target:
                result = fn(target, args)
        print(json.dumps(result))
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"  {key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
