"""``{{ expr }}`` templating of node config (DESIGN §3).

``expr`` is a dotted path with optional ``[n]`` indexes rooted at ``input``,
``steps``, ``variables``, ``execution``, ``workflow`` or ``now``. A string that
is exactly one ``{{ expr }}`` keeps the value's JSON type; otherwise the parts
are rendered into a string. A missing path is None (rendered as ""); an
unknown root is an error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

ROOTS = ("input", "steps", "variables", "execution", "workflow", "now")
_TEMPLATE = re.compile(r"\{\{(.*?)\}\}", re.S)
_WHOLE = re.compile(r"\A\{\{(.*?)\}\}\Z", re.S)
_SEGMENT = re.compile(r"\s*([^.\[\]\s]+)?((?:\[\s*-?\d+\s*\])*)\s*")
_INDEX = re.compile(r"\[\s*(-?\d+)\s*\]")


class TemplateError(ValueError):
    """A template cannot be evaluated; the message names the expression."""


def parse_path(expr: str) -> list[str | int]:
    """``steps.a-b.items[0].name`` → ``["steps", "a-b", "items", 0, "name"]``."""
    text = expr.strip()
    if not text:
        raise TemplateError("empty expression {{ }}")
    path: list[str | int] = []
    for part in text.split("."):
        match = _SEGMENT.fullmatch(part)
        if match is None or (match.group(1) is None and not path):
            raise TemplateError(f"cannot parse {{{{ {text} }}}}: expected a dotted path such as input.body.items[0]")
        if match.group(1) is not None:
            path.append(match.group(1))
        elif not match.group(2):
            raise TemplateError(f"cannot parse {{{{ {text} }}}}: empty path segment")
        path.extend(int(i) for i in _INDEX.findall(match.group(2)))
    return path


def lookup(scope: Mapping[str, Any], expr: str) -> Any:
    path = parse_path(expr)
    root = path[0]
    if root not in ROOTS or root not in scope:
        raise TemplateError(f"unknown root {root!r} in {{{{ {expr.strip()} }}}}; use one of {', '.join(ROOTS)}")
    value: Any = scope[root]
    for key in path[1:]:
        if isinstance(key, int) and isinstance(value, list):
            value = value[key] if -len(value) <= key < len(value) else None
        elif isinstance(value, Mapping):
            value = value.get(str(key))
        else:
            return None
        if value is None:
            return None
    if isinstance(value, Mapping) and not isinstance(value, dict):
        return dict(value)
    return value


def render_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def render(value: Any, scope: Mapping[str, Any], *, skip_keys: frozenset[str] = frozenset()) -> Any:
    """Interpolate every string inside ``value``; top-level keys in ``skip_keys`` are left alone."""
    if isinstance(value, str):
        if "{{" not in value:
            return value
        whole = _WHOLE.match(value)
        if whole is not None and "{{" not in whole.group(1):
            return lookup(scope, whole.group(1))
        return _TEMPLATE.sub(lambda m: render_text(lookup(scope, m.group(1))), value)
    if isinstance(value, dict):
        return {k: (v if k in skip_keys else render(v, scope)) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, scope) for v in value]
    return value


def has_template(value: Any) -> bool:
    if isinstance(value, str):
        return "{{" in value
    if isinstance(value, dict):
        return any(has_template(v) for v in value.values())
    if isinstance(value, list):
        return any(has_template(v) for v in value)
    return False
