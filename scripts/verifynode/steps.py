"""What each step kind does against the stack. A step that finds a difference raises StepFailure saying what."""

from __future__ import annotations

import copy
import json
import os
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bson import ObjectId

from verifynode.client import Http, Response
from verifynode.fixture import EXECUTION_FIELDS
from verifynode.match import MISSING, is_predicate, mismatches, render

POLL_S = 0.1
TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_WAIT_TIMEOUT_S = 10.0

Doc = dict[str, Any]


class StepFailure(Exception):
    """A step found something other than what the fixture expects; the message is the explanation."""


@dataclass
class Context:
    """One fixture's run: where the stack is, and what earlier steps remembered."""

    http: Http
    workflow_id: str
    webhook_prefix: str
    collection_prefix: str
    fixture_dir: Path | None
    node_db: Any | None
    """pymongo Database of the node-facing data (``<database>_data``), or None when unknown."""
    clock_file: Path | None = None
    """The runner's scheduler clock file; None: the real clock."""
    current: str | None = None
    named: dict[str, str] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)

    def remember(self, execution_id: str, *, name: str | None = None, token: str | None = None) -> None:
        self.current = execution_id
        self.seen.add(execution_id)
        if name:
            self.named[name] = execution_id
        if token:
            self.tokens[execution_id] = token

    def execution(self, step: Doc) -> str:
        name = step.get("execution")
        if name is not None:
            if name not in self.named:
                raise StepFailure(f"no execution remembered as {name!r} (name one with 'as' first)")
            return self.named[name]
        if self.current is None:
            raise StepFailure("no execution to look at yet: run one with execute, http or latest first")
        return self.current

    def collection(self, name: str) -> str:
        full = f"{self.collection_prefix}_{name}"
        if len(full) > 64:
            raise StepFailure(f"collection name {full!r} is over 64 characters; use a shorter name than {name!r}")
        return full

    def path(self, relative: str) -> Path:
        if self.fixture_dir is None:
            raise StepFailure("this fixture uses the file system: give --fs-root (a root of the runner's fs API)")
        return self.fixture_dir / relative

    def db(self) -> Any:
        if self.node_db is None:
            raise StepFailure("this fixture uses the database: give --mongodb-uri (and --database) of the stack")
        return self.node_db


def prepare_workflow(workflow: Doc, key: str, name: str) -> Doc:
    """The fixture's workflow under its own id, its webhook paths under ``<key>/``."""
    out = copy.deepcopy(workflow)
    out["id"] = key
    out.setdefault("name", f"verify-node {name}")
    out.setdefault("active", True)
    for node in out["nodes"]:
        config = node.get("config") if isinstance(node, dict) else None
        if node.get("type") == "triggers/webhook" and isinstance(config, dict) and isinstance(config.get("path"), str):
            config["path"] = f"{key}/{config['path'].lstrip('/')}"
    return out


def check_response(resp: Response, expect: Doc) -> None:
    """Assert an HTTP answer's status, headers (subset, names case-insensitive) and body."""
    problems = mismatches(expect["status"], resp.status, "status")
    if "headers" in expect:
        got = resp.header_map()
        for name, want in expect["headers"].items():
            problems += mismatches(want, got.get(name.lower(), MISSING), f"headers.{name}")
    if "body" in expect:
        problems += mismatches(expect["body"], resp.body, "body")
    if problems:
        raise StepFailure("; ".join(problems))


def _reply_json(resp: Response, what: str) -> Doc:
    body = resp.body
    if not isinstance(body, dict):
        raise StepFailure(f"{what}: expected a JSON object, got {resp.describe()}")
    return body


def get_execution(ctx: Context, execution_id: str) -> Doc:
    resp = ctx.http.api("GET", f"/executions/{execution_id}")
    if resp.status != 200:
        raise StepFailure(f"reading execution {execution_id}: {resp.describe()}")
    return _reply_json(resp, f"execution {execution_id}")


def _remember_reply(ctx: Context, body: Any, *, name: str | None = None) -> None:
    if isinstance(body, dict) and isinstance(body.get("executionId"), str) and body["executionId"]:
        pause = body.get("pause")
        token = pause.get("token") if isinstance(pause, dict) else None
        ctx.remember(body["executionId"], name=name, token=token if isinstance(token, str) else None)


# --- the steps ---------------------------------------------------------------------------------------------------


def step_execute(ctx: Context, step: Doc) -> None:
    params = []
    if step.get("wait") is False:
        params.append("wait=false")
    if "triggerNodeId" in step:
        params.append(f"triggerNodeId={step['triggerNodeId']}")
    query = "?" + "&".join(params) if params else ""
    resp = ctx.http.request(
        "POST", f"/api/v1/workflows/{ctx.workflow_id}/run{query}", json_body=step.get("input"), has_json=True
    )
    if "expect" in step:
        check_response(resp, step["expect"])
    elif resp.status not in (200, 202):
        raise StepFailure(f"run: expected 200 or 202, got {resp.describe()}")
    _remember_reply(ctx, resp.body, name=step.get("as"))


def step_save(ctx: Context, step: Doc) -> None:
    """Save a new version of the fixture's workflow (PUT), prepared as the first one was."""
    workflow = prepare_workflow(step["workflow"], ctx.workflow_id, ctx.workflow_id)
    resp = ctx.http.api("PUT", f"/workflows/{ctx.workflow_id}", workflow)
    check_response(resp, step.get("expect", {"status": 200}))


def step_expect(ctx: Context, step: Doc) -> None:
    detail = get_execution(ctx, ctx.execution(step))
    problems: list[str] = []
    for key in EXECUTION_FIELDS:
        if key in step:
            problems += mismatches(step[key], detail.get(key, MISSING), key)
    results = detail.get("results") or {}
    for node_key, want in step.get("nodes", {}).items():
        problems += [f"node {node_key}: {p}" for p in _node_mismatches(want, results.get(node_key, MISSING))]
    if problems:
        raise StepFailure("; ".join(problems))


def _node_mismatches(want: Any, got: Any) -> list[str]:
    """A node expectation lists result fields to check (status, output, error, branch, attempts, logs…)."""
    if is_predicate(want):
        if want == {"$exists": False} and got is not MISSING:
            return [f"expected no result (the node never ran), got {render(got)}"]
        return mismatches(want, got, "result")
    if not isinstance(want, dict):
        return [f"a node expectation is an object of result fields, not {render(want)}"]
    if got is MISSING:
        return [f"expected a result with {render(want)}, got none (the node has no result: it never ran)"]
    out: list[str] = []
    for key, value in want.items():
        out += mismatches(value, got.get(key, MISSING), key)
    return out


def step_http(ctx: Context, step: Doc) -> None:
    path = f"/webhook/{ctx.webhook_prefix}/{step['path'].lstrip('/')}"
    resp = ctx.http.request(
        step.get("method", "POST").upper(),
        path,
        json_body=step.get("json"),
        has_json="json" in step,
        text_body=step.get("body"),
        headers=step.get("headers"),
    )
    _remember_reply(ctx, resp.body, name=step.get("as"))
    check_response(resp, step["expect"])


def step_resume(ctx: Context, step: Doc) -> None:
    execution_id = ctx.execution(step)
    token = step.get("token", ctx.tokens.get(execution_id))
    if not token:
        raise StepFailure(f"no pause token remembered for execution {execution_id}; give 'token'")
    body: Doc = {"token": token}
    body.update({k: step[k] for k in ("approved", "data", "by") if k in step})
    resp = ctx.http.api("POST", f"/executions/{execution_id}/resume", body)
    check_response(resp, step.get("expect", {"status": 200}))
    if resp.status in (200, 202):
        _remember_reply(ctx, resp.body)


def step_event(ctx: Context, step: Doc) -> None:
    body = {k: step[k] for k in ("type", "key", "data") if k in step}
    resp = ctx.http.api("POST", "/events", body)
    check_response(resp, step.get("expect", {"status": 200}))


def step_wait(ctx: Context, step: Doc) -> None:
    if "seconds" in step:
        time.sleep(float(step["seconds"]))
        return
    wanted = step["status"] if isinstance(step["status"], list) else [step["status"]]
    timeout = float(step.get("timeout", DEFAULT_WAIT_TIMEOUT_S))
    execution_id = ctx.execution(step)
    deadline = time.monotonic() + timeout
    while True:
        detail = get_execution(ctx, execution_id)
        status = detail.get("status")
        if status in wanted:
            return
        settled = status in TERMINAL
        if settled or time.monotonic() >= deadline:
            expected = " or ".join(render(w) for w in wanted)
            if settled:
                error = f"; error: {detail['error']}" if detail.get("error") else ""
                raise StepFailure(f"status: expected {expected}, got {render(status)} (final{error})")
            raise StepFailure(f"status: expected {expected} within {timeout:g} s, got {render(status)}")
        time.sleep(POLL_S)


def _list_executions(ctx: Context) -> list[Doc]:
    """Every execution of the fixture's workflow, oldest first."""
    items: list[Doc] = []
    token = ""
    while True:
        query = f"?workflowId={ctx.workflow_id}&pageSize=100" + (f"&pageToken={token}" if token else "")
        resp = ctx.http.api("GET", f"/executions{query}")
        if resp.status != 200:
            raise StepFailure(f"listing executions: {resp.describe()}")
        page = _reply_json(resp, "execution list")
        items += [i for i in page.get("items") or [] if isinstance(i, dict)]
        token = page.get("nextPageToken") or ""
        if not token:
            return sorted(items, key=lambda i: (i.get("createdAt") or 0, str(i.get("executionId"))))


def step_latest(ctx: Context, step: Doc) -> None:
    """Remember the newest execution of the fixture's workflow that no earlier step has seen."""
    timeout = float(step.get("timeout", 0))
    deadline = time.monotonic() + timeout
    while True:
        items = _list_executions(ctx)
        fresh = [i for i in items if i.get("executionId") not in ctx.seen]
        if fresh:
            ctx.remember(str(fresh[-1]["executionId"]), name=step.get("as"))
            return
        if time.monotonic() >= deadline:
            raise StepFailure(
                f"expected a new execution of workflow {ctx.workflow_id} within {timeout:g} s, "
                f"got none ({len(items)} seen before)"
            )
        time.sleep(POLL_S)


def step_executions(ctx: Context, step: Doc) -> None:
    """Assert the fixture workflow's executions, oldest first (summaries: executionId, status, error, ...)."""
    items = _list_executions(ctx)
    problems: list[str] = []
    if "count" in step:
        problems += mismatches(step["count"], len(items), "count")
    if "items" in step:
        problems += mismatches(step["items"], items, "items")
    if problems:
        raise StepFailure("; ".join(problems))


_CLOCK_LOCK = threading.Lock()


def step_clock(ctx: Context, step: Doc) -> None:
    """Move the scheduler to the start of the n-th whole minute after the later of now and its clock.

    With the runner's clock file known, the file is rewritten (instant); with the real clock, wait for that minute.
    """
    minutes = int(step.get("minutes", 1))
    with _CLOCK_LOCK:
        now = datetime.now(UTC)
        current = _read_clock(ctx.clock_file) if ctx.clock_file else None
        base = max(now, current) if current else now
        target = base.replace(second=0, microsecond=0) + timedelta(minutes=minutes)
        if ctx.clock_file is None:
            time.sleep(max(0.0, (target - now).total_seconds()))
            return
        temp = ctx.clock_file.with_name(ctx.clock_file.name + ".tmp")
        temp.write_text(target.isoformat().replace("+00:00", "Z"))
        os.replace(temp, ctx.clock_file)  # the runner never reads half a time


def _read_clock(path: Path) -> datetime | None:
    try:
        text = path.read_text().strip()
        moment = datetime.fromisoformat(text) if text else None
    except (OSError, ValueError):
        return None
    return moment.astimezone(UTC) if moment else None


def step_fs(ctx: Context, step: Doc) -> None:
    op, path = step["op"], ctx.path(step["path"])
    if op == "create":
        if path.exists():
            raise StepFailure(f"create {step['path']}: it already exists")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(step["content"], encoding="utf-8")
    elif op == "modify":
        if not path.is_file():
            raise StepFailure(f"modify {step['path']}: no such file")
        before = path.stat().st_mtime_ns
        path.write_text(step["content"], encoding="utf-8")
        after = path.stat().st_mtime_ns
        if after <= before:  # a coarse clock must not hide the change from an mtime-based watcher
            os.utime(path, ns=(after, before + 1_000_000))
    elif op == "mkdir":
        path.mkdir(parents=True, exist_ok=True)
    elif op == "delete":
        if not path.exists():
            raise StepFailure(f"delete {step['path']}: no such file or folder")
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    else:
        _fs_check(step, path)


def _fs_check(step: Doc, path: Path) -> None:
    problems: list[str] = []
    where = f"file {step['path']}"
    if "exists" in step:
        problems += mismatches(step["exists"], path.exists(), f"{where} exists")
    if "content" in step or "json" in step:
        if not path.is_file():
            raise StepFailure(f"{where}: expected a file, got none")
        text = path.read_text(encoding="utf-8", errors="replace")
        if "content" in step:
            problems += mismatches(step["content"], text, f"{where} content")
        if "json" in step:
            try:
                parsed = json.loads(text)
            except ValueError as exc:
                raise StepFailure(f"{where}: expected JSON, got {render(text)} ({exc})") from None
            problems += mismatches(step["json"], parsed, f"{where} json")
    if problems:
        raise StepFailure("; ".join(problems))


def step_db(ctx: Context, step: Doc) -> None:
    coll = ctx.db()[ctx.collection(step["collection"])]
    op = step["op"]
    now = time.time_ns() // 1_000_000  # as runner/store/nodedata.py stamps them
    if op == "insert":
        docs = step["documents"] if "documents" in step else [step["document"]]
        coll.insert_many([{"_id": str(ObjectId()), "_createdAt": now, "_updatedAt": now, **d} for d in docs])
    elif op == "update":
        coll.update_many(step["filter"], {"$set": {"_updatedAt": now, **step["set"]}})
    elif op == "delete":
        coll.delete_many(step["filter"])
    else:
        found = list(coll.find(step.get("filter") or {}).sort([("_createdAt", 1), ("_id", 1)]))
        problems: list[str] = []
        if "count" in step:
            problems += mismatches(step["count"], len(found), f"{step['collection']} count")
        if "documents" in step:
            plain = json.loads(json.dumps(found, default=str))
            problems += mismatches(step["documents"], plain, f"{step['collection']} documents")
        if problems:
            raise StepFailure("; ".join(problems))


STEPS: dict[str, Callable[[Context, Doc], None]] = {
    "execute": step_execute,
    "expect": step_expect,
    "http": step_http,
    "resume": step_resume,
    "event": step_event,
    "wait": step_wait,
    "latest": step_latest,
    "executions": step_executions,
    "clock": step_clock,
    "save": step_save,
    "fs": step_fs,
    "db": step_db,
}
