"""Workflow graphs: validation that names every problem, deterministic order, loop bodies.

Order is Kahn's algorithm with ties broken by position in ``nodes``.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from jsonschema import Draft202012Validator

from .model import JSON, NodeType, WorkflowInvalid
from .templating import TemplateError, has_template, parse_path

NODE_ID = re.compile(r"\A[A-Za-z0-9_-]{1,64}\Z")
ON_ERROR = ("fail", "continue", "route")
BACKOFFS = ("constant", "linear", "exponential")


@dataclass(frozen=True)
class Connection:
    source: str
    target: str
    output: str = "main"


@dataclass
class Graph:
    """A validated definition with the derived structure the walk needs."""

    definition: dict[str, JSON]
    nodes: dict[str, dict[str, JSON]]
    index: dict[str, int]
    connections: list[Connection]
    incoming: dict[str, list[Connection]] = field(default_factory=dict)
    outgoing: dict[str, list[Connection]] = field(default_factory=dict)
    body_of: dict[str, str] = field(default_factory=dict)
    """node id → the loop whose body it belongs to (innermost)."""
    checked: dict[str, str] = field(default_factory=dict)
    """node id → source of the node script its template-free config was validated against."""

    @cached_property
    def order(self) -> list[str]:
        return topological_order(self.nodes, self.index, self.connections)

    def scope_order(self, loop_id: str | None) -> list[str]:
        """Nodes that run directly in a scope: the top level (None) or a loop's body."""
        return [n for n in self.order if self.body_of.get(n) == loop_id]

    def node_type(self, node_id: str) -> str:
        return str(self.nodes[node_id]["type"])


def _config_validator(nt: NodeType) -> Draft202012Validator:
    props: dict[str, Any] = {}
    required: list[str] = []
    for key, spec in nt.config_schema.items():
        if isinstance(spec, dict):
            spec = dict(spec)
            if spec.pop("required", False) is True:
                required.append(key)
            props[key] = {k: v for k, v in spec.items() if not k.startswith("x-")}
    schema = {"type": "object", "properties": props, "required": required}
    return Draft202012Validator(schema)


_VALIDATORS: dict[tuple[str, str], Draft202012Validator] = {}


def config_errors(nt: NodeType, config: Mapping[str, JSON], *, allow_templates: bool) -> list[str]:
    """Schema problems of a node's config. With allow_templates, templated values are checked at run time."""
    key = (nt.type, nt.source)
    validator = _VALIDATORS.get(key)
    if validator is None:
        validator = _VALIDATORS[key] = _config_validator(nt)
    instance = dict(config)
    if allow_templates:
        for k in [k for k, v in instance.items() if has_template(v)]:
            schema: Any = validator.schema
            props: dict[str, Any] = schema["properties"]
            instance[k] = _placeholder(props.get(k, {}), instance[k])
    problems = []
    for err in sorted(validator.iter_errors(instance), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in err.path) or "config"
        problems.append(f"{where}: {err.message}")
    return problems


def _placeholder(prop: Mapping[str, JSON], value: JSON) -> JSON:
    """A stand-in that satisfies the property's type, for a value only known at run time."""
    kind = prop.get("type")
    if isinstance(value, str) and kind in (None, "string"):
        return value
    if prop.get("default") is not None:
        return prop["default"]
    return {"integer": 0, "number": 0, "boolean": False, "object": {}, "array": [], "string": ""}.get(
        kind if isinstance(kind, str) else "", value
    )


def topological_order(
    nodes: Mapping[str, JSON], index: Mapping[str, int], connections: Iterable[Connection]
) -> list[str]:
    indegree = dict.fromkeys(nodes, 0)
    children: dict[str, list[str]] = {n: [] for n in nodes}
    for c in connections:
        indegree[c.target] += 1
        children[c.source].append(c.target)
    ready = [(index[n], n) for n, d in indegree.items() if d == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, node = heapq.heappop(ready)
        order.append(node)
        for child in children[node]:
            indegree[child] -= 1
            if indegree[child] == 0:
                heapq.heappush(ready, (index[child], child))
    return order


def _check_node(raw: JSON, i: int, types: Mapping[str, NodeType], problems: list[str]) -> str | None:
    if not isinstance(raw, dict):
        problems.append(f"nodes[{i}] must be an object")
        return None
    node_id = raw.get("id")
    label = f"node {node_id!r}" if isinstance(node_id, str) else f"nodes[{i}]"
    if not isinstance(node_id, str) or not NODE_ID.match(node_id):
        problems.append(f"{label}: id must be 1-64 letters, digits, '_' or '-'")
        node_id = None
    ntype = raw.get("type")
    nt = types.get(ntype) if isinstance(ntype, str) else None
    if nt is None:
        problems.append(f"{label}: unknown node type {ntype!r}")
    elif nt.error:
        problems.append(f"{label}: node type {ntype!r} is broken: {nt.error}")
    config = raw.get("config", {})
    if not isinstance(config, dict):
        problems.append(f"{label}: config must be an object")
    elif nt is not None and not nt.error:
        problems.extend(f"{label}: {p}" for p in config_errors(nt, config, allow_templates=True))
        problems.extend(f"{label}: {p}" for p in _template_problems(config))
    on_error = raw.get("onError", "fail")
    if on_error not in ON_ERROR:
        problems.append(f"{label}: onError must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    retry = raw.get("retry")
    if retry is not None:
        problems.extend(f"{label}: {p}" for p in _retry_problems(retry))
    timeout = raw.get("timeoutSeconds")
    if timeout is not None and (not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0):
        problems.append(f"{label}: timeoutSeconds must be a positive number")
    return node_id


def _template_problems(value: JSON) -> list[str]:
    found: list[str] = []
    if isinstance(value, str) and "{{" in value:
        from .templating import _TEMPLATE, ROOTS  # local: only needed for validation

        for m in _TEMPLATE.finditer(value):
            try:
                root = parse_path(m.group(1))[0]
            except TemplateError as exc:
                found.append(str(exc))
                continue
            if root not in ROOTS:
                found.append(f"unknown root {root!r} in {{{{{m.group(1)}}}}}; use one of {', '.join(ROOTS)}")
    elif isinstance(value, dict):
        for v in value.values():
            found.extend(_template_problems(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(_template_problems(v))
    return found


def _retry_problems(retry: JSON) -> list[str]:
    if not isinstance(retry, dict):
        return ["retry must be an object {limit, delay, backoff}"]
    problems = []
    limit = retry.get("limit", 0)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 <= limit <= 100:
        problems.append("retry.limit must be an integer from 0 to 100")
    delay = retry.get("delay", 1)
    if not isinstance(delay, int | float) or isinstance(delay, bool) or delay < 0:
        problems.append("retry.delay must be a number of seconds >= 0")
    if retry.get("backoff", "constant") not in BACKOFFS:
        problems.append(f"retry.backoff must be one of {', '.join(BACKOFFS)}")
    return problems


def _check_settings(settings: JSON, problems: list[str]) -> None:
    if not isinstance(settings, dict):
        problems.append("settings must be an object")
        return
    for key in ("maxSteps", "maxDurationSeconds"):
        value = settings.get(key)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool) or value <= 0):
            problems.append(f"settings.{key} must be a positive number")


def build_graph(definition: JSON, types: Mapping[str, NodeType]) -> Graph:
    """Validate a definition and derive its graph; raises WorkflowInvalid listing every problem."""
    problems: list[str] = []
    if not isinstance(definition, dict):
        raise WorkflowInvalid(["a workflow must be a JSON object"])
    wf_id = definition.get("id")
    if not isinstance(wf_id, str) or not NODE_ID.match(wf_id):
        problems.append("id must be 1-64 letters, digits, '_' or '-'")
    if not isinstance(definition.get("name", ""), str):
        problems.append("name must be a string")
    _check_settings(definition.get("settings", {}) or {}, problems)
    raw_nodes = definition.get("nodes")
    if not isinstance(raw_nodes, list) or not raw_nodes:
        problems.append("nodes must be a non-empty list")
        raw_nodes = []
    nodes: dict[str, dict[str, JSON]] = {}
    index: dict[str, int] = {}
    for i, raw in enumerate(raw_nodes):
        node_id = _check_node(raw, i, types, problems)
        if node_id is None:
            continue
        if node_id in nodes:
            problems.append(f"duplicate node id {node_id!r}")
            continue
        nodes[node_id] = raw
        index[node_id] = i
    connections = _check_connections(definition.get("connections", []), nodes, types, problems)
    order = topological_order(nodes, index, connections)
    if len(order) < len(nodes):
        stuck = sorted(set(nodes) - set(order), key=index.__getitem__)
        problems.append(f"the connections form a cycle through {', '.join(stuck)}")
    graph = Graph(definition, nodes, index, connections)
    for node_id, raw in nodes.items():
        nt = types.get(str(raw.get("type")))
        if nt is not None and not has_template(raw.get("config") or {}):
            graph.checked[node_id] = nt.source
    for c in connections:
        graph.incoming.setdefault(c.target, []).append(c)
        graph.outgoing.setdefault(c.source, []).append(c)
    if not problems:
        _assign_loop_bodies(graph, problems)
    if problems:
        raise WorkflowInvalid(problems)
    return graph


def _check_connections(
    raw: JSON, nodes: Mapping[str, dict[str, JSON]], types: Mapping[str, NodeType], problems: list[str]
) -> list[Connection]:
    if not isinstance(raw, list):
        problems.append("connections must be a list")
        return []
    found: list[Connection] = []
    seen: set[Connection] = set()
    for i, c in enumerate(raw):
        if not isinstance(c, dict) or not isinstance(c.get("from"), str) or not isinstance(c.get("to"), str):
            problems.append(f"connections[{i}] must be an object with string 'from' and 'to'")
            continue
        conn = Connection(c["from"], c["to"], c.get("output") or "main")
        bad = False
        for end in (conn.source, conn.target):
            if end not in nodes:
                problems.append(f"connections[{i}] refers to missing node {end!r}")
                bad = True
        if bad:
            continue
        source = nodes[conn.source]
        nt = types.get(str(source.get("type")))
        outputs = set(nt.outputs if nt else ("main",))
        if source.get("onError") == "route":
            outputs.add("error")
        if conn.output not in outputs:
            problems.append(
                f"connections[{i}]: node {conn.source!r} has no output {conn.output!r} "
                f"(it has {', '.join(sorted(outputs))})"
            )
            continue
        if conn in seen:
            problems.append(f"connections[{i}] repeats {conn.source} -> {conn.target}")
            continue
        seen.add(conn)
        found.append(conn)
    return found


def _assign_loop_bodies(graph: Graph, problems: list[str]) -> None:
    """Every node reachable from a core/loop's ``body`` output belongs to that loop's body."""
    loops = [n for n in graph.order if graph.node_type(n) == "core/loop"]
    for loop_id in reversed(loops):  # innermost (later) loops first, so outer ones don't overwrite
        body: set[str] = set()
        stack = [c.target for c in graph.outgoing.get(loop_id, []) if c.output == "body"]
        while stack:
            node = stack.pop()
            if node in body:
                continue
            body.add(node)
            stack.extend(c.target for c in graph.outgoing.get(node, []))
        for node in body:
            if node == loop_id:
                continue
            graph.body_of.setdefault(node, loop_id)
    for node in graph.order:
        scope = graph.body_of.get(node)
        for c in graph.incoming.get(node, []):
            src_scope = graph.body_of.get(c.source)
            if src_scope == scope or (c.source == scope and c.output == "body"):
                continue
            if scope is not None and not _inside(graph, c.source, scope):
                problems.append(
                    f"node {node!r} is in the body of loop {scope!r} but has an input from {c.source!r} outside it"
                )
            elif scope is None and src_scope is not None:
                problems.append(
                    f"node {node!r} takes input from {c.source!r} inside loop {src_scope!r}'s body; "
                    f"connect it to the loop's 'done' output instead"
                )


def _inside(graph: Graph, node: str, loop_id: str) -> bool:
    scope = graph.body_of.get(node)
    while scope is not None:
        if scope == loop_id:
            return True
        scope = graph.body_of.get(scope)
    return False
