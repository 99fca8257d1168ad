"""Fixture files: load, check their shape before anything runs, and fill in the harness's placeholders."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifynode.match import FixtureError, check_expected

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
PLACEHOLDER = re.compile(r"\{\{\s*(fixtureDir|fixture|executionId|collection:[A-Za-z0-9_-]+)\s*\}\}")
RESPONSE_FIELDS = frozenset({"status", "headers", "body"})
EXECUTION_FIELDS = frozenset({"status", "output", "error", "errorNodeId", "webhookResponse", "pause", "warnings"})

# kind → (required fields, optional fields); every step also takes "step" and "note".
STEP_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "execute": (frozenset(), frozenset({"input", "wait", "triggerNodeId", "as", "expect"})),
    "expect": (frozenset(), frozenset({"execution", "nodes", *EXECUTION_FIELDS})),
    "http": (frozenset({"path", "expect"}), frozenset({"method", "headers", "json", "body", "as"})),
    "resume": (frozenset(), frozenset({"execution", "token", "approved", "data", "by", "expect"})),
    "fs": (frozenset({"op", "path"}), frozenset({"content", "exists", "json"})),
    "db": (frozenset({"op", "collection"}), frozenset({"document", "documents", "filter", "set", "count"})),
    "wait": (frozenset(), frozenset({"for", "status", "timeout", "seconds", "execution"})),
    "event": (frozenset({"type"}), frozenset({"key", "data", "expect"})),
    "latest": (frozenset(), frozenset({"timeout", "as"})),
    "executions": (frozenset(), frozenset({"count", "items"})),
    "clock": (frozenset(), frozenset({"minutes"})),
    "save": (frozenset({"workflow"}), frozenset({"expect"})),
}
FS_OPS = frozenset({"create", "modify", "delete", "mkdir", "check"})
DB_OPS = frozenset({"insert", "update", "delete", "check"})


@dataclass(frozen=True)
class Fixture:
    path: Path
    name: str
    nodes: tuple[str, ...]
    """The node types this fixture covers."""
    workflow: dict[str, Any]
    steps: tuple[dict[str, Any], ...]

    @property
    def moves_clock(self) -> bool:
        """Fixtures that move the scheduler's clock run one at a time, so no other's schedules fire meanwhile."""
        return any(step["step"] == "clock" for step in self.steps)


def load(path: Path) -> Fixture:
    """Read and check one fixture file; FixtureError says what is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise FixtureError(f"cannot read {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise FixtureError(f"{path} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise FixtureError("a fixture is a JSON object {name, node, workflow, steps}")
    unknown = set(data) - {"name", "node", "description", "workflow", "steps"}
    if unknown:
        raise FixtureError(f"unknown top-level field(s) {', '.join(sorted(unknown))}")
    name = data.get("name")
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise FixtureError("'name' must be 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit")
    covered = data.get("node")
    types = [covered] if isinstance(covered, str) else covered
    if not isinstance(types, list) or not types or not all(isinstance(t, str) and t for t in types):
        raise FixtureError("'node' must be the node type covered (a string) or a list of them")
    workflow = data.get("workflow")
    if not isinstance(workflow, dict) or not isinstance(workflow.get("nodes"), list):
        raise FixtureError("'workflow' must be a workflow definition (DESIGN §3) with a 'nodes' list")
    used = {n.get("type") for n in workflow["nodes"] if isinstance(n, dict)}
    missing = [t for t in types if t not in used]
    if missing:
        raise FixtureError(f"'node' names {', '.join(missing)} but the workflow has no node of that type")
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise FixtureError("'steps' must be a non-empty list")
    for index, step in enumerate(steps, 1):
        check_step(index, step)
    return Fixture(path, name, tuple(types), workflow, tuple(steps))


def check_step(index: int, step: Any) -> None:
    kind = step.get("step") if isinstance(step, dict) else None
    if kind not in STEP_FIELDS:
        raise FixtureError(f"step {index}: 'step' must be one of {', '.join(STEP_FIELDS)}, got {kind!r}")
    assert isinstance(step, dict)
    where = f"step {index} ({kind})"
    required, optional = STEP_FIELDS[kind]
    fields = set(step) - {"step", "note"}
    if required - fields:
        raise FixtureError(f"{where}: missing {', '.join(sorted(required - fields))}")
    if fields - required - optional:
        raise FixtureError(f"{where}: unknown field(s) {', '.join(sorted(fields - required - optional))}")
    try:
        CHECKS[kind](step)
        for key in expectation_fields(step):
            check_expected(step[key], key)
    except FixtureError as exc:
        raise FixtureError(f"{where}: {exc}") from None


def expectation_fields(step: dict[str, Any]) -> list[str]:
    """The fields of a step that hold expected values (exact or predicates), as opposed to things to send."""
    kind = step["step"]
    if kind == "expect":
        keys = ["nodes", *EXECUTION_FIELDS]
    elif kind == "fs":
        keys = ["content", "json"] if step["op"] == "check" else []
    elif kind == "db":
        keys = ["documents", "count"] if step["op"] == "check" else []
    elif kind == "executions":
        keys = ["count", "items"]
    elif kind == "clock":
        keys = []
    else:
        keys = ["expect"]
    return [k for k in keys if k in step]


def _response_expectation(step: dict[str, Any], *, status_required: bool) -> None:
    expect = step.get("expect")
    if expect is None and not status_required:
        return
    if not isinstance(expect, dict) or not set(expect) <= RESPONSE_FIELDS:
        raise FixtureError(f"'expect' is an object with {', '.join(sorted(RESPONSE_FIELDS))}")
    if "status" not in expect:
        raise FixtureError("'expect' needs the HTTP 'status' the call must get")


def _check_execute(step: dict[str, Any]) -> None:
    if "wait" in step and not isinstance(step["wait"], bool):
        raise FixtureError("'wait' is true or false")
    _response_expectation(step, status_required=False)


def _check_expect(step: dict[str, Any]) -> None:
    if not set(step) & {"nodes", *EXECUTION_FIELDS}:
        raise FixtureError(f"says nothing to check; give nodes or any of {', '.join(sorted(EXECUTION_FIELDS))}")
    if "nodes" in step and (not isinstance(step["nodes"], dict) or not step["nodes"]):
        raise FixtureError("'nodes' is an object {nodeKey: {status, output, error, ...}}")


def _check_http(step: dict[str, Any]) -> None:
    if "json" in step and "body" in step:
        raise FixtureError("give 'json' or 'body', not both")
    if "body" in step and not isinstance(step["body"], str):
        raise FixtureError("'body' is the raw request text; use 'json' for a JSON body")
    _response_expectation(step, status_required=True)


def _check_resume(step: dict[str, Any]) -> None:
    if "approved" in step and not isinstance(step["approved"], bool):
        raise FixtureError("'approved' is true or false")
    _response_expectation(step, status_required=False)


def _check_fs(step: dict[str, Any]) -> None:
    op, path = step["op"], step["path"]
    if op not in FS_OPS:
        raise FixtureError(f"'op' must be one of {', '.join(sorted(FS_OPS))}")
    if not isinstance(path, str) or not path or path.startswith("/") or ".." in Path(path).parts:
        raise FixtureError("'path' is relative to the fixture's folder, without '..'")
    if op in ("create", "modify") and not isinstance(step.get("content"), str):
        raise FixtureError(f"{op} needs 'content' (a string)")
    if op == "check" and not set(step) & {"exists", "content", "json"}:
        raise FixtureError("check needs 'exists', 'content' or 'json'")


def _check_db(step: dict[str, Any]) -> None:
    op = step["op"]
    if op not in DB_OPS:
        raise FixtureError(f"'op' must be one of {', '.join(sorted(DB_OPS))}")
    if op == "insert" and ("document" in step) == ("documents" in step):
        raise FixtureError("insert takes 'document' or 'documents'")
    if op == "update" and not isinstance(step.get("set"), dict):
        raise FixtureError("update takes 'filter' and 'set' (an object of fields)")
    if op in ("update", "delete") and not isinstance(step.get("filter"), dict):
        raise FixtureError(f"{op} takes a 'filter' object ({{}} for every document)")
    if op == "check" and not set(step) & {"documents", "count"}:
        raise FixtureError("check takes 'documents' and/or 'count'")


def _check_wait(step: dict[str, Any]) -> None:
    if "seconds" in step:
        if set(step) - {"step", "note", "seconds"} or not isinstance(step["seconds"], int | float):
            raise FixtureError("a pause is {'seconds': n} alone")
        return
    if step.get("for") != "status" or "status" not in step:
        raise FixtureError("wait takes {'for': 'status', 'status': ..., 'timeout': s} or {'seconds': n}")


def _check_event(step: dict[str, Any]) -> None:
    _response_expectation(step, status_required=False)


def _check_latest(step: dict[str, Any]) -> None:
    if not isinstance(step.get("timeout", 0), int | float):
        raise FixtureError("'timeout' is a number of seconds")


def _check_executions(step: dict[str, Any]) -> None:
    if not set(step) & {"count", "items"}:
        raise FixtureError("executions takes 'count' and/or 'items'")


def _check_save(step: dict[str, Any]) -> None:
    if not isinstance(step["workflow"], dict) or not isinstance(step["workflow"].get("nodes"), list):
        raise FixtureError("'workflow' is a workflow definition with a 'nodes' list")
    _response_expectation(step, status_required=False)


def _check_clock(step: dict[str, Any]) -> None:
    minutes = step.get("minutes", 1)
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 1 <= minutes <= 60:
        raise FixtureError("'minutes' is a whole number from 1 to 60")


CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {
    "execute": _check_execute,
    "expect": _check_expect,
    "http": _check_http,
    "resume": _check_resume,
    "fs": _check_fs,
    "db": _check_db,
    "wait": _check_wait,
    "event": _check_event,
    "latest": _check_latest,
    "executions": _check_executions,
    "clock": _check_clock,
    "save": _check_save,
}


def fill(value: Any, lookup: Callable[[str], str | None]) -> Any:
    """Replace the harness's ``{{placeholders}}`` in every string of ``value``; ``lookup`` None leaves one as is."""
    if isinstance(value, str):
        return PLACEHOLDER.sub(lambda m: _lookup(lookup, m), value)
    if isinstance(value, dict):
        return {fill(k, lookup): fill(v, lookup) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, lookup) for v in value]
    return value


def _lookup(lookup: Callable[[str], str | None], match: re.Match[str]) -> str:
    found = lookup(match.group(1))
    return match.group(0) if found is None else found


def discover(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.json") if p.is_file())


def select(root: Path, wanted: Iterable[str]) -> list[Path]:
    """Fixture files named on the command line: a file, a folder of fixtures, or a fixture name under ``root``."""
    chosen: list[Path] = []
    by_name: dict[str, Path] | None = None
    for item in wanted:
        path = Path(item)
        if path.is_file():
            chosen.append(path)
        elif path.is_dir():
            chosen.extend(discover(path))
        else:
            if by_name is None:
                by_name = _names(root)
            if item not in by_name:
                raise FixtureError(f"no fixture file or fixture named {item!r} under {root}")
            chosen.append(by_name[item])
    return list(dict.fromkeys(chosen))


def _names(root: Path) -> dict[str, Path]:
    names: dict[str, Path] = {}
    for path in discover(root):
        names.setdefault(path.stem, path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            names[data["name"]] = path
    return names
