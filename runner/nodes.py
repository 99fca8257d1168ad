"""The node catalog: every script under ``nodes/``, read without running it.

Metadata (``@description``, ``CONFIG``, ``OUTPUTS``, ``RETRY``) is read with
``ast.literal_eval``; the script itself only ever runs in the sandbox. A
broken script is kept in the catalog with its error (file, line, message), so
the runner keeps serving and ``ListNodeTypes`` shows what is wrong.
"""

from __future__ import annotations

import ast
import logging
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from RestrictedPython import compile_restricted_exec

from .engine.model import NodeType

log = logging.getLogger(__name__)


def _literal(tree: ast.Module, name: str) -> Any:
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets):
            return ast.literal_eval(stmt.value)
    return None


def _description(doc: str | None) -> str:
    for line in (doc or "").splitlines():
        if line.strip().startswith("@description"):
            return line.strip()[len("@description") :].strip()
    return (doc or "").strip().splitlines()[0] if doc and doc.strip() else ""


def load_node_type(path: Path, type_name: str) -> NodeType:
    rel = f"nodes/{type_name}.py"
    try:
        source = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return NodeType(type_name, rel, "", error=f"{rel}: cannot read: {exc}")
    try:
        tree = ast.parse(source, filename=rel)
    except SyntaxError as exc:
        return NodeType(type_name, rel, source, error=f"{rel}, line {exc.lineno}: {exc.msg}")
    compiled = compile_restricted_exec(source, filename=rel)
    if compiled.errors:
        return NodeType(type_name, rel, source, error=f"{rel}: {'; '.join(compiled.errors)}")
    functions = {s.name for s in tree.body if isinstance(s, ast.FunctionDef)}
    if "execute" not in functions:
        return NodeType(type_name, rel, source, error=f"{rel}: defines no execute(ctx) function")
    try:
        config = _literal(tree, "CONFIG") or {}
        outputs = _literal(tree, "OUTPUTS") or ["main"]
        retry = _literal(tree, "RETRY")
    except (ValueError, SyntaxError) as exc:
        return NodeType(type_name, rel, source, error=f"{rel}: CONFIG, OUTPUTS and RETRY must be literals: {exc}")
    if not isinstance(config, dict) or not all(isinstance(o, str) for o in outputs):
        return NodeType(type_name, rel, source, error=f"{rel}: CONFIG must be a dict and OUTPUTS a list of names")
    return NodeType(
        type=type_name,
        path=rel,
        source=source,
        description=_description(ast.get_docstring(tree)),
        config_schema=config,
        outputs=tuple(outputs),
        has_resume="resume" in functions,
        default_retry=retry,
    )


class NodeCatalog(Mapping[str, NodeType]):
    """All node types by name (``core/set``); reloadable while the runner serves."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._types: dict[str, NodeType] = {}
        self._lock = threading.Lock()
        self.reload()

    def reload(self) -> None:
        found: dict[str, NodeType] = {}
        for path in sorted(self.root.glob("*/*.py")):
            if path.name.startswith("_"):
                continue
            type_name = f"{path.parent.name}/{path.stem}"
            found[type_name] = load_node_type(path, type_name)
            if found[type_name].error:
                log.error("node script is broken: %s", found[type_name].error)
        with self._lock:
            self._types = found

    def reload_file(self, path: Path) -> NodeType | None:
        """Reload one script. A broken edit keeps the previous version serving and is reported."""
        try:
            rel = path.resolve().relative_to(self.root.resolve())
        except ValueError:
            return None
        if len(rel.parts) != 2 or rel.suffix != ".py" or rel.name.startswith("_"):
            return None
        type_name = f"{rel.parts[0]}/{rel.stem}"
        if not path.exists():
            with self._lock:
                self._types.pop(type_name, None)
            return None
        fresh = load_node_type(path, type_name)
        with self._lock:
            previous = self._types.get(type_name)
            if fresh.error and previous is not None and not previous.error:
                log.error("kept the previous version of %s: %s", type_name, fresh.error)
                self._types[type_name] = _with_error_note(previous, fresh.error)
            else:
                self._types[type_name] = fresh
        return self._types[type_name]

    def __getitem__(self, key: str) -> NodeType:
        return self._types[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._types)

    def __len__(self) -> int:
        return len(self._types)


def _with_error_note(previous: NodeType, error: str) -> NodeType:
    """The previous, working version keeps serving; the catalog shows the broken edit's error."""
    return replace(previous, edit_error=error)
