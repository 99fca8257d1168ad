"""Checking that a value is plain JSON data, and saying where it is not.

The fast path is ``json.dumps`` itself; only when it fails does
:func:`find_non_json` walk the value to name the offending part, e.g.
``output['items'][2] is a set``.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

_SCALARS = (str, int, float, bool, type(None))
_KEY_TYPES = (str, int, float, bool, type(None))
_MAX_DEPTH = 500
_INT_DIGITS = sys.get_int_max_str_digits()
"""json.dumps refuses ints with more digits than this (0: no limit)."""
_INT_LIMIT = 10**_INT_DIGITS if _INT_DIGITS else None


class NotJsonError(ValueError):
    """A value that JSON cannot carry; the message says where and what."""


def _child_path(path: str, key: object) -> str:
    return f"{path}[{key!r}]"


def _scalar_problem(item: Any, where: str) -> str | None:
    if isinstance(item, float):
        if not math.isfinite(item):
            return f"{where} is {item!r}, which JSON cannot represent"
    elif isinstance(item, int) and not isinstance(item, bool):
        if _INT_LIMIT is not None and abs(item) >= _INT_LIMIT:
            return f"{where} is an integer with more than {_INT_DIGITS} digits"
    elif isinstance(item, str):
        try:
            item.encode("utf-8")
        except UnicodeEncodeError:
            return f"{where} is a string that is not valid Unicode (lone surrogate)"
    return None


def find_non_json(value: Any, path: str) -> str | None:
    """Describe the first part of ``value`` that is not JSON data, or None if it all is."""
    stack: list[tuple[Any, str, int]] = [(value, path, 0)]
    seen: set[int] = set()
    while stack:
        item, where, depth = stack.pop()
        if depth > _MAX_DEPTH:
            return f"{path} is nested more than {_MAX_DEPTH} levels deep"
        if isinstance(item, _SCALARS):
            problem = _scalar_problem(item, where)
            if problem:
                return problem
        elif isinstance(item, dict | list | tuple):
            if id(item) in seen:  # a shared part, or a cycle (json.dumps names that one)
                continue
            seen.add(id(item))
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, _KEY_TYPES):
                        return f"{where} has a key of type {type(key).__name__}; keys must be strings"
                    stack.append((child, _child_path(where, key), depth + 1))
            else:
                stack.extend((child, _child_path(where, i), depth + 1) for i, child in enumerate(item))
        else:
            return f"{where} is of type {type(item).__name__}; use dict, list, str, int, float, bool or None"
    return None


def encode(value: Any, what: str) -> bytes:
    """UTF-8 JSON of ``value``; raises :class:`NotJsonError` naming the offending part."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except (TypeError, ValueError, RecursionError) as exc:  # UnicodeEncodeError is a ValueError
        problem = find_non_json(value, what) or f"{what} is not JSON data: {exc}"
        raise NotJsonError(problem) from None
