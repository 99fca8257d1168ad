"""``smartbotic.utils.getFieldValue``: a value at a path such as ``a.b[0].c``.

It walks dict keys and list indexes only. It never calls ``getattr``: a path
is data the script controls, and an attribute walk driven by it (``__class__.
__mro__``) would step around every guard.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_SEGMENT = re.compile(r"""\[\s*(-?\d+)\s*\]|\[\s*(["'])(.*?)\2\s*\]|([^.\[\]]+)|(\.)|(.)""", re.DOTALL)


class FieldPathError(ValueError):
    """A path that cannot be parsed."""


@lru_cache(maxsize=512)
def parse_path(path: str) -> tuple[str | int, ...]:
    """``'a.b[0]["x.y"]'`` → ``("a", "b", 0, "x.y")``."""
    segments: list[str | int] = []
    for match in _SEGMENT.finditer(path):
        index, _quote, quoted, name, _dot, other = match.groups()
        if index is not None:
            segments.append(int(index))
        elif quoted is not None:
            segments.append(quoted)
        elif name is not None:
            segments.append(name)
        elif other is not None:
            raise FieldPathError(f"getFieldValue: cannot parse path {path!r} at {other!r}")
    return tuple(segments)


def _step(current: Any, segment: str | int, missing: object) -> Any:
    if isinstance(current, dict):
        if isinstance(segment, int):
            segment = str(segment)
        return dict.get(current, segment, missing)
    if isinstance(current, list | tuple):
        if isinstance(segment, str):
            if not segment.isdigit():
                return missing
            segment = int(segment)
        if -len(current) <= segment < len(current):
            return current[segment]
    return missing


def get_field_value(obj: Any, path: Any, default: Any = None) -> Any:
    """The value at ``path`` (a string, or a list of keys and indexes) in ``obj``; ``default`` when missing."""
    if isinstance(path, str):
        segments: tuple[str | int, ...] = parse_path(path)
    elif isinstance(path, list | tuple) and all(type(s) in (str, int) for s in path):
        segments = tuple(path)
    else:
        raise TypeError(f"getFieldValue: path must be a string or a list of keys, got {type(path).__name__}")
    missing = object()
    current = obj
    for segment in segments:
        current = _step(current, segment, missing)
        if current is missing:
            return default
    return current
