"""Run one fixture against a stack: save its workflow under ids of its own, play the steps, clean up."""

from __future__ import annotations

import hashlib
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verifynode.client import CallError, Http
from verifynode.fixture import Fixture, fill
from verifynode.match import FixtureError
from verifynode.stack import Endpoints
from verifynode.steps import STEPS, Context, StepFailure, prepare_workflow

FS_SUBDIR = "verify-node"


@dataclass(frozen=True)
class Outcome:
    name: str
    passed: bool
    message: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        """One line per fixture, whatever the messages it quotes hold."""
        message = self.message.replace("\r", "").replace("\n", "\\n")
        return f"PASS {self.name}" if self.passed else f"FAIL {self.name}: {message}"


def fixture_key(name: str, run_id: str) -> str:
    """The fixture's own prefix for this run: workflow id, webhook paths, collections, fs folder, event keys.

    A readable slug of the name, a hash of the whole name (slugs of different names may clash) and the run id.
    """
    slug = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:24].strip("-") or "fixture"
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    return f"{slug}-{digest}-{run_id}"


def run_fixture(fixture: Fixture, endpoints: Endpoints, run_id: str, node_db: Any | None) -> Outcome:
    started = time.monotonic()
    key = fixture_key(fixture.name, run_id)
    ctx = Context(
        http=Http(endpoints.http_url),
        workflow_id=key,
        webhook_prefix=key,
        collection_prefix=key.replace("-", "_"),
        fixture_dir=endpoints.fs_root / FS_SUBDIR / key if endpoints.fs_root else None,
        node_db=node_db,
        clock_file=endpoints.scheduler_clock_file,
    )
    message = _save_workflow(ctx, fixture, key)
    if message is None:
        try:
            message = _play(ctx, fixture)
        finally:
            _archive(ctx.http, key, fixture.name)
    return Outcome(fixture.name, message is None, message or "", time.monotonic() - started)


def _placeholders(ctx: Context) -> Callable[[str], str | None]:
    def lookup(name: str) -> str | None:
        if name == "fixture":
            return ctx.workflow_id
        if name == "fixtureDir":
            return str(ctx.path("."))
        if name.startswith("collection:"):
            return ctx.collection(name.partition(":")[2])
        if name == "executionId":
            return ctx.execution({})
        return None

    return lookup


def _save_workflow(ctx: Context, fixture: Fixture, key: str) -> str | None:
    """None when saved, else why not."""
    try:
        workflow = prepare_workflow(fill(fixture.workflow, _placeholders(ctx)), key, fixture.name)
        if ctx.fixture_dir is not None:
            ctx.fixture_dir.mkdir(parents=True, exist_ok=True)
        resp = ctx.http.api("POST", "/workflows", workflow)
    except (StepFailure, CallError, OSError) as exc:
        return f"saving the workflow: {exc}"
    return None if resp.status == 201 else f"saving the workflow: expected 201, got {resp.describe()}"


def _play(ctx: Context, fixture: Fixture) -> str | None:
    """Run the steps in order; None when all pass, else the first failure."""
    lookup = _placeholders(ctx)
    for index, raw in enumerate(fixture.steps, 1):
        where = f"step {index} ({raw['step']})"
        try:
            STEPS[raw["step"]](ctx, fill(raw, lookup))
        except (StepFailure, CallError, FixtureError, OSError) as exc:
            return f"{where}: {exc}"
        except Exception as exc:  # a harness bug must name the fixture, not end the whole run
            traceback.print_exc(file=sys.stderr)
            return f"{where}: harness error {type(exc).__name__}: {exc}"
    return None


def _archive(http: Http, workflow_id: str, name: str) -> None:
    """Archive the fixture's workflow so its webhooks and schedules stop (it matters on a long-lived stack)."""
    try:
        resp = http.api("DELETE", f"/workflows/{workflow_id}")
        problem = None if resp.status == 200 else resp.describe()
    except CallError as exc:
        problem = str(exc)
    if problem:
        print(f"verify-node: warning: {name}: could not archive workflow {workflow_id}: {problem}", file=sys.stderr)
