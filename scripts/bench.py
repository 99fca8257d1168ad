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
from dataclasses import dataclass, field
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
    pids: list[int] = field(default_factory=list)
    """The stack's processes (database, runners, webserver), for CPU accounting."""
    runner_pids: dict[str, int] = field(default_factory=dict)

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


def _spawn_module(module: str, env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [sys.executable, "-m", module], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _wait_port(port, proc, module)
    return proc


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
        runner_pids = {}
        for i in range(runners):
            gport = free_port()
            env = {**base, "SMARTBOTIC_GRPC_ADDR": f"127.0.0.1:{gport}", "SMARTBOTIC_RUNNER_ID": f"bench{i}"}
            procs.append(_spawn_module("runner", env, gport))
            targets.append(f"127.0.0.1:{gport}")
            runner_pids[f"bench{i}"] = procs[-1].pid
        http_url = ""
        if webserver:
            hport = free_port()
            env = {**base, "SMARTBOTIC_HTTP_PORT": str(hport), "SMARTBOTIC_RUNNER_TARGET": targets[0]}
            procs.append(_spawn_module("webserver", env, hport))
            http_url = f"http://127.0.0.1:{hport}"
        yield Target(targets[0], uri, "bench", http_url, [p.pid for p in procs], runner_pids)
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
    return chain_workflow("bench-engine", nodes)


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


def _node(node_id: str, type_: str, **config: Any) -> dict[str, Any]:
    return {"id": node_id, "type": type_, "config": config}


def chain_workflow(wf_id: str, nodes: list[dict[str, Any]]) -> dict[str, Any]:
    """A workflow whose nodes run one after the other."""
    return {
        "id": wf_id,
        "name": wf_id.replace("-", " "),
        "nodes": nodes,
        "connections": [{"from": a["id"], "to": b["id"]} for a, b in itertools.pairwise(nodes)],
    }


def _save_rest(target: Target, wf: dict[str, Any]) -> None:
    import urllib.request

    req = urllib.request.Request(
        target.http_url + "/api/v1/workflows",
        data=json.dumps(wf).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(req).read()


def workload_webhook(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """webhook → three code nodes → respond; 32 concurrent clients for args.seconds seconds."""
    import asyncio

    import aiohttp

    trivial = "def main(input):\n    return {'n': 1}"
    wf = chain_workflow(
        "bench-hook",
        [
            _node("hook", "triggers/webhook", path="bench", method="POST"),
            _node("a", "core/code", code=trivial),
            _node("b", "core/code", code=trivial),
            _node("c", "core/code", code=trivial),
            _node("reply", "core/respond-to-webhook", status=200, body={"ok": True}),
        ],
    )
    _save_rest(target, wf)
    latencies: list[float] = []
    errors = 0

    async def client(session: aiohttp.ClientSession, until: float) -> None:
        nonlocal errors
        while time.perf_counter() < until:
            t0 = time.perf_counter()
            async with session.post(target.http_url + "/webhook/bench", json={"x": 1}) as resp:
                await resp.read()
                if resp.status != 200:
                    errors += 1
            latencies.append((time.perf_counter() - t0) * 1000)

    async def drive(seconds: float) -> float:
        connector = aiohttp.TCPConnector(limit=64)
        async with aiohttp.ClientSession(connector=connector) as session:
            warm_until = time.perf_counter() + 2
            await asyncio.gather(*(client(session, warm_until) for _ in range(8)))
            latencies.clear()
            start = time.perf_counter()
            await asyncio.gather(*(client(session, start + seconds) for _ in range(args.clients)))
            return time.perf_counter() - start

    cpu_before = _stack_cpu_seconds(target)
    ops_before = target.db_ops()
    elapsed = asyncio.run(drive(args.seconds))
    ops = target.db_ops() - ops_before
    cpu = _stack_cpu_seconds(target) - cpu_before
    done = len(latencies)
    return {
        "workload": "webhook",
        "clients": args.clients,
        "seconds": round(elapsed, 1),
        "executions": done,
        "errors": errors,
        "executions_per_s": round(done / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(pct(latencies, 99), 1),
        "stack_cpu_seconds": round(cpu, 1),
        "executions_per_cpu_second": round(done / cpu, 1) if cpu else None,
        "db_ops_per_execution": round(ops / max(done, 1), 1),
    }


def _stack_cpu_seconds(target: Target) -> float:
    """CPU time used so far by this stack's processes (runner, workers, webserver, database)."""
    total = 0.0
    for pid in target.pids:
        for proc_pid in [pid, *_children(pid)]:
            try:
                fields = Path(f"/proc/{proc_pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        direct = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return found
    for child in map(int, direct):
        found.append(child)
        found.extend(_children(child))
    return found


def _http_json(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    import urllib.error
    import urllib.request

    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null")


def workload_resume(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """Pause → resume → completed over REST: the time of the resume call, which waits for completion."""
    wf = {
        "id": "bench-resume",
        "name": "bench resume",
        "nodes": [
            _node("start", "triggers/manual"),
            _node("ask", "core/wait-for-approval", reason="ok?"),
            _node("after", "core/set", values={"done": True}),
        ],
        "connections": [{"from": "start", "to": "ask"}, {"from": "ask", "output": "approved", "to": "after"}],
    }
    _save_rest(target, wf)
    paused = []
    for _ in range(args.runs + 5):
        status, reply = _http_json("POST", target.http_url + "/api/v1/workflows/bench-resume/run", {})
        paused.append((reply["executionId"], reply["pause"]["token"]))
    for execution_id, token in paused[:5]:  # warm up
        _http_json(
            "POST", f"{target.http_url}/api/v1/executions/{execution_id}/resume", {"token": token, "approved": True}
        )
    times: list[float] = []
    ops_before = target.db_ops()
    for execution_id, token in paused[5:]:
        t0 = time.perf_counter()
        status, reply = _http_json(
            "POST", f"{target.http_url}/api/v1/executions/{execution_id}/resume", {"token": token, "approved": True}
        )
        times.append((time.perf_counter() - t0) * 1000)
        if status != 200 or reply["status"] != "completed":
            raise SystemExit(f"bench: resume failed: {status} {reply}")
    ops = (target.db_ops() - ops_before) / args.runs
    return {
        "workload": "resume",
        "runs": args.runs,
        "p50_ms": round(statistics.median(times), 2),
        "p99_ms": round(pct(times, 99), 2),
        "db_ops_per_resume": round(ops, 1),
    }


def workload_pending(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """GET /api/v1/executions/pending, first and second page, with args.waiting waiting executions
    stored, paused evenly over the last args.span_s seconds (default: a week)."""
    client: MongoClient[dict[str, Any]] = MongoClient(target.mongodb_uri)
    col = client[target.database]["executions"]
    now = int(time.time() * 1000)
    snapshot = {"id": "bench-pending", "name": "bench pending", "nodes": [], "connections": []}
    batch = []
    step = max(1, int(args.span_s * 1000 / args.waiting))
    for i in range(args.waiting):
        since = now - i * step
        batch.append(
            {
                "_id": f"p{i:07d}",
                "workflowId": "bench-pending",
                "workflowName": "bench pending",
                "workflowVersion": 1,
                "workflowSnapshot": snapshot,
                "status": "waiting",
                "input": {"i": i},
                "results": {"ask": {"status": "waiting"}},
                "startedAt": since,
                "createdAt": since,
                "waitingSince": since,
                "wakeAt": now + 86400_000,
                "pause": {
                    "nodeId": "ask",
                    "key": "ask",
                    "kind": "approval",
                    "reason": f"item {i}",
                    "expiresAt": now + 86400_000,
                    "waitingSince": since,
                    "tokenHash": "0" * 64,
                },
            }
        )
        if len(batch) == 5000:
            col.insert_many(batch)
            batch = []
    if batch:
        col.insert_many(batch)
    url = target.http_url + "/api/v1/executions/pending"
    for _ in range(3):
        _http_json("GET", url)
    times = []
    for _ in range(args.runs):
        t0 = time.perf_counter()
        status, page = _http_json("GET", url)
        times.append((time.perf_counter() - t0) * 1000)
        assert status == 200 and len(page["items"]) == 50, page
    t0 = time.perf_counter()
    status, _ = _http_json("GET", url + "?pageToken=" + page["nextPageToken"])
    second = (time.perf_counter() - t0) * 1000
    client.close()
    return {
        "workload": "pending",
        "waiting": args.waiting,
        "span_s": args.span_s,
        "first_page_p50_ms": round(statistics.median(times), 1),
        "first_page_p99_ms": round(pct(times, 99), 1),
        "second_page_ms": round(second, 1),
    }


def workload_sandbox(target: Target | None, args: argparse.Namespace) -> dict[str, Any]:
    """In-process: a trivial node, a 30-line node and one fs.stat call from a node, through the pool."""
    import asyncio

    from runner.sandbox import HostApiError, NodeTask, SandboxLimits, SandboxPool

    pool = SandboxPool(SandboxLimits(), size=2)
    pool.start()
    trivial = "def execute(ctx):\n    return ctx.input\n"
    thirty = (
        "def execute(ctx):\n"
        + "".join(f"    v{i} = [x * {i} for x in range(5)]\n" for i in range(27))
        + "    total = sum(v1) + sum(v26)\n    return {'total': total}\n"
    )
    stat = "def execute(ctx):\n    return smartbotic.fs.stat('/data/a.txt')\n"

    async def host_call(method: str, call_args: list[Any]) -> Any:
        if method == "fs.stat":
            return {"size": 3, "modifiedAt": 0, "isDirectory": False, "isFile": True}
        raise HostApiError("unexpected")

    async def measure(source: str) -> tuple[float, float]:
        task = NodeTask("bench.py", source, {"input": {"a": 1}, "config": {}, "node": {}, "execution": {}})
        for _ in range(50):
            await pool.run(task, host_call)
        times = []
        for _ in range(args.runs * 20):
            t0 = time.perf_counter()
            outcome = await pool.run(task, host_call)
            times.append((time.perf_counter() - t0) * 1e6)
            assert outcome.ok, outcome.error
        return statistics.median(times), pct(times, 99)

    async def main() -> dict[str, Any]:
        try:
            t = await measure(trivial)
            f = await measure(thirty)
            s = await measure(stat)
        finally:
            await pool.close()
        return {
            "workload": "sandbox",
            "trivial_p50_us": round(t[0]),
            "trivial_p99_us": round(t[1]),
            "node_30_lines_p50_us": round(f[0]),
            "node_30_lines_p99_us": round(f[1]),
            "fs_stat_node_p50_us": round(s[0]),
            "fs_stat_node_p99_us": round(s[1]),
        }

    return asyncio.run(main())


def workload_fanout(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """args.fanout queued executions (a burst stored at once, as from webhooks in onReceived mode),
    drained by the stack's runners: executions/s from the burst to the last completion."""
    from runner.engine.model import ExecutionState
    from runner.store.executions import ExecutionStore

    stub = target.stub
    wf = chain_workflow(
        "bench-fanout",
        [_node("start", "triggers/manual"), _node("c", "core/code", code="def main(input):\n    return input")],
    )
    saved = stub.SaveWorkflow(pb.SaveWorkflowRequest(workflow_json=json.dumps(wf)))
    client: MongoClient[dict[str, Any]] = MongoClient(target.mongodb_uri)
    col = client[target.database]["executions"]
    now = int(time.time() * 1000)
    docs = []
    for i in range(args.fanout):
        state = ExecutionState(
            id=f"fan{i:06d}",
            workflow=wf,
            workflowVersion=saved.version,
            input={"i": i},
            startedAt=now,
            status="pending",
        )
        docs.append(ExecutionStore.new_doc(state, now_ms=now + i, lease=None))
    ops_before = target.db_ops()
    cpu_before = _stack_cpu_seconds(target)
    start_ms = time.time() * 1000
    col.insert_many(docs)
    # Polled slowly: on the embedded server a count reads every matching document, and polling
    # fast would make the benchmark measure itself.
    while col.count_documents({"status": {"$in": ["pending", "running"]}}):
        time.sleep(0.5)
    last = col.find_one({"workflowId": "bench-fanout"}, sort=[("finishedAt", -1)])
    assert last is not None
    elapsed = (last["finishedAt"] - start_ms) / 1000
    cpu = _stack_cpu_seconds(target) - cpu_before
    by_runner: dict[str, int] = {}
    for doc in col.find({"workflowId": "bench-fanout"}, {"runner": 1, "status": 1}):
        assert doc["status"] == "completed", doc
        by_runner[doc["runner"]] = by_runner.get(doc["runner"], 0) + 1
    ops = target.db_ops() - ops_before
    client.close()
    return {
        "workload": "fanout",
        "runners": len(target.runner_pids),
        "executions": args.fanout,
        "drain_s": round(elapsed, 2),
        "executions_per_s": round(args.fanout / elapsed, 1),
        "by_runner": by_runner,
        "stack_cpu_seconds": round(cpu, 1),
        "db_ops_per_execution": round(ops / args.fanout, 1),
    }


def workload_waits(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """How late a durable 1 s core/wait wakes, over args.waits waits."""
    stub = target.stub
    wf = chain_workflow(
        "bench-wait",
        [_node("start", "triggers/manual"), _node("nap", "core/wait", duration="1s"), _node("after", "core/noop")],
    )
    stub.SaveWorkflow(pb.SaveWorkflowRequest(workflow_json=json.dumps(wf)))
    req = pb.ExecuteWorkflowRequest(workflow_id="bench-wait", input_json="{}", wait_for_completion=True)
    ids = []
    for _ in range(args.waits):
        ids.append(stub.ExecuteWorkflow(req).execution_id)
        time.sleep(0.02)
    late: list[float] = []
    for execution_id in ids:
        while True:
            d = json.loads(stub.GetExecution(pb.GetExecutionRequest(execution_id=execution_id)).detail_json)
            if d["status"] == "completed":
                break
            time.sleep(0.05)
        due = d["results"]["start"]["finishedAt"] + 1000  # the wait began right after the trigger
        late.append(d["results"]["after"]["startedAt"] - due)
    return {
        "workload": "waits",
        "waits": args.waits,
        "late_p50_ms": statistics.median(late),
        "late_p99_ms": pct(late, 99),
        "late_max_ms": max(late),
    }


def workload_takeover(target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """Kill -9 the runner in the middle of a run; time until the second runner has taken it over."""
    import signal

    stub = target.stub
    spin = "def main(input):\n    n = 0\n    for i in range(300000):\n        n += i\n    return input"
    nodes = [_node("start", "triggers/manual")] + [_node(f"s{i}", "core/code", code=spin) for i in range(30)]
    wf = chain_workflow("bench-takeover", nodes)
    stub.SaveWorkflow(pb.SaveWorkflowRequest(workflow_json=json.dumps(wf)))
    client: MongoClient[dict[str, Any]] = MongoClient(target.mongodb_uri)
    col = client[target.database]["executions"]
    reply = stub.ExecuteWorkflow(
        pb.ExecuteWorkflowRequest(workflow_id="bench-takeover", input_json="{}", wait_for_completion=False)
    )
    while True:
        doc = col.find_one({"_id": reply.execution_id}) or {}
        if doc.get("status") == "running" and len(doc.get("results", {})) >= 3:
            break
        time.sleep(0.01)
    owner = doc["runner"]
    victim = target.runner_pids[owner]
    os.kill(victim, signal.SIGKILL)
    killed = time.perf_counter()
    while True:
        doc = col.find_one({"_id": reply.execution_id}) or {}
        if doc.get("runner") not in (None, owner):
            picked = time.perf_counter() - killed
            break
        time.sleep(0.01)
    while (col.find_one({"_id": reply.execution_id}) or {}).get("status") != "completed":
        time.sleep(0.05)
    done = time.perf_counter() - killed
    client.close()
    return {
        "workload": "takeover",
        "lease_seconds": args.lease,
        "picked_up_after_s": round(picked, 2),
        "completed_after_s": round(done, 2),
    }


WORKLOADS: dict[str, tuple[Callable[[Any, argparse.Namespace], dict[str, Any]], dict[str, Any]]] = {
    "engine": (workload_engine, {}),
    "webhook": (workload_webhook, {"webserver": True}),
    "resume": (workload_resume, {"webserver": True}),
    "pending": (workload_pending, {"webserver": True}),
    "sandbox": (workload_sandbox, {"none": True}),
    "fanout": (workload_fanout, {}),
    "fanout2": (workload_fanout, {"runners": 2}),
    "waits": (workload_waits, {}),
    "takeover": (workload_takeover, {"runners": 2, "lease": True}),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS), help=f"any of {', '.join(WORKLOADS)}")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--seconds", type=float, default=20.0, help="webhook: load duration")
    parser.add_argument("--clients", type=int, default=32, help="webhook: concurrent clients")
    parser.add_argument("--waiting", type=int, default=100_000, help="pending: waiting executions stored")
    parser.add_argument("--span-s", type=float, default=7 * 86400, help="pending: waits spread over this")
    parser.add_argument("--fanout", type=int, default=1000, help="fanout: queued executions")
    parser.add_argument("--waits", type=int, default=50, help="waits: durable waits measured")
    parser.add_argument("--lease", type=float, default=5.0, help="takeover: SMARTBOTIC_LEASE_SECONDS")
    parser.add_argument("--grpc-target", help="use a running runner instead of starting a stack")
    parser.add_argument("--mongodb-uri", help="with --grpc-target: the runner's database, for op counts")
    args = parser.parse_args()
    for name in args.workloads:
        if name not in WORKLOADS:
            parser.error(f"unknown workload {name!r}; choose from {', '.join(WORKLOADS)}")
        fn, opts = WORKLOADS[name]
        if opts.get("none"):
            result = fn(None, args)
        elif args.grpc_target:
            result = fn(Target(args.grpc_target, args.mongodb_uri or "mongodb://127.0.0.1:27017", "smartbotic"), args)
        else:
            env = {"SMARTBOTIC_LEASE_SECONDS": str(args.lease)} if opts.get("lease") else {}
            stack = own_stack(runners=opts.get("runners", 1), webserver=opts.get("webserver", False), env_extra=env)
            with stack as target:
                result = fn(target, args)
        print(json.dumps(result))
        width = max(len(k) for k in result)
        for key, value in result.items():
            print(f"  {key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
