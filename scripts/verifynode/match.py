"""Compare what came back with what a fixture expects: exact JSON values, or predicate objects nested anywhere.

A plain value means exact equality: an object must have exactly the expected fields
(``{"x": {"$exists": false}}`` lets an exact object say a field is absent), a list
exactly the expected items in order, ``true`` is never ``1``. An object whose keys all
start with ``$`` is a predicate; several keys in one predicate must all hold. An
unknown ``$`` key, or ``$`` keys mixed with plain ones, is a fixture error, so a typo
can never turn an assertion into one that always passes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<missing>"})()
"""Stands for a field that is not there at all (as opposed to ``null``)."""

TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


class FixtureError(ValueError):
    """The fixture itself is malformed; the message says where and how to fix it."""


def render(value: Any, limit: int = 300) -> str:
    """A value as compact JSON for a failure message, shortened when long."""
    if value is MISSING:
        return "nothing (no such field)"
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_predicate(expected: Any) -> bool:
    if not isinstance(expected, dict) or not expected:
        return False
    dollar = [k.startswith("$") for k in expected]
    if any(dollar) and not all(dollar):
        raise FixtureError(f"{render(expected)} mixes predicate keys ($...) with field names; nest them instead")
    return all(dollar)


def mismatches(expected: Any, got: Any, path: str = "") -> list[str]:
    """Every way ``got`` differs from ``expected``, as ``"<path>: expected X, got Y"``; empty when it matches."""
    out: list[str] = []
    _match(expected, got, path, out)
    return out


def matches(expected: Any, got: Any) -> bool:
    return not mismatches(expected, got)


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``1 == 1.0`` but ``True != 1``, objects by keys, lists in order."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _fail(out: list[str], path: str, expected: str, got: Any) -> None:
    out.append(f"{path or 'value'}: expected {expected}, got {render(got)}")


def _match(expected: Any, got: Any, path: str, out: list[str]) -> None:
    if is_predicate(expected):
        for op, arg in expected.items():
            check = PREDICATES.get(op)
            if check is None:
                known = ", ".join(sorted(PREDICATES))
                raise FixtureError(f"{path or 'value'}: unknown predicate {op!r}; known: {known}")
            check(arg, got, path, out)
        return
    if got is MISSING:
        _fail(out, path, render(expected), got)
    elif isinstance(expected, dict):
        if not isinstance(got, dict):
            _fail(out, path, f"an object {render(expected)}", got)
            return
        _match_fields(expected, got, path, out)
        extra = [k for k in got if k not in expected]
        if extra:
            shown = ", ".join(f"{json.dumps(k)}: {render(got[k], 80)}" for k in extra)
            out.append(f"{path or 'value'}: expected no other fields, got {shown} (use $partial for a subset)")
    elif isinstance(expected, list):
        if not isinstance(got, list):
            _fail(out, path, f"an array {render(expected)}", got)
        elif len(got) != len(expected):
            _fail(out, path, f"{len(expected)} items {render(expected)}", got)
        else:
            for index, (want, have) in enumerate(zip(expected, got, strict=True)):
                _match(want, have, _at(path, index), out)
    elif not json_equal(expected, got):
        _fail(out, path, render(expected), got)


def _match_fields(expected: dict[str, Any], got: dict[str, Any], path: str, out: list[str]) -> None:
    for key, want in expected.items():
        _match(want, got.get(key, MISSING), _at(path, key), out)


# --- predicates: (argument, value, path, out) ------------------------------------------------------------------------


def _exists(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if not isinstance(arg, bool):
        raise FixtureError(f"{path}: $exists takes true or false, not {render(arg)}")
    if arg and got is MISSING:
        _fail(out, path, "the field to exist", got)
    elif not arg and got is not MISSING:
        _fail(out, path, "no such field", got)


def _eq(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if got is MISSING or not json_equal(arg, got):
        _fail(out, path, f"exactly {render(arg)}", got)


def _ne(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if got is MISSING or json_equal(arg, got):
        _fail(out, path, f"anything but {render(arg)}", got)


def _partial(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if not isinstance(arg, dict):
        raise FixtureError(f"{path}: $partial takes an object of the fields to check, not {render(arg)}")
    if not isinstance(got, dict):
        _fail(out, path, f"an object with {render(arg)}", got)
        return
    _match_fields(arg, got, path, out)


def _contains(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if isinstance(got, str):
        if not isinstance(arg, str):
            raise FixtureError(f"{path}: $contains on a string takes a string, not {render(arg)}")
        ok = arg in got
    elif isinstance(got, list):
        ok = any(matches(arg, item) for item in got)
    elif isinstance(got, dict):
        ok = isinstance(arg, str) and arg in got
    else:
        ok = False
    if not ok:
        _fail(out, path, f"something containing {render(arg)}", got)


def _matches(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if not isinstance(arg, str):
        raise FixtureError(f"{path}: $matches takes a regular expression string, not {render(arg)}")
    try:
        pattern = re.compile(arg)
    except re.error as exc:
        raise FixtureError(f"{path}: $matches {arg!r} is not a valid regular expression: {exc}") from None
    if not isinstance(got, str) or pattern.search(got) is None:
        _fail(out, path, f"a string matching /{arg}/", got)


def _length(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if not isinstance(got, str | list | dict):
        _fail(out, path, f"a string, array or object of length {render(arg)}", got)
        return
    inner: list[str] = []
    _match(arg, len(got), f"{path or 'value'} length", inner)
    if inner:
        _fail(out, path, f"length {render(arg)}", got)


def _comparison(op: str, test: Callable[[Any, Any], bool]) -> Callable[[Any, Any, str, list[str]], None]:
    def compare(arg: Any, got: Any, path: str, out: list[str]) -> None:
        if isinstance(arg, bool) or not isinstance(arg, int | float | str):
            raise FixtureError(f"{path}: {op} takes a number or a string, not {render(arg)}")
        comparable = (isinstance(arg, str) and isinstance(got, str)) or (
            not isinstance(arg, str) and isinstance(got, int | float) and not isinstance(got, bool)
        )
        if not comparable or not test(got, arg):
            _fail(out, path, f"a value {op[1:]} {render(arg)}", got)

    return compare


def _type(arg: Any, got: Any, path: str, out: list[str]) -> None:
    names = arg if isinstance(arg, list) else [arg]
    unknown = [n for n in names if n not in TYPES]
    if unknown or not names:
        raise FixtureError(f"{path}: $type takes one of {', '.join(TYPES)} (or a list of them), not {render(arg)}")
    if got is MISSING or not any(TYPES[n](got) for n in names):
        _fail(out, path, f"a value of type {' or '.join(names)}", got)


def _not(arg: Any, got: Any, path: str, out: list[str]) -> None:
    if matches(arg, got):
        _fail(out, path, f"something not matching {render(arg)}", got)


PREDICATES: dict[str, Callable[[Any, Any, str, list[str]], None]] = {
    "$exists": _exists,
    "$eq": _eq,
    "$ne": _ne,
    "$partial": _partial,
    "$contains": _contains,
    "$matches": _matches,
    "$length": _length,
    "$gt": _comparison("$gt", lambda a, b: a > b),
    "$gte": _comparison("$gte", lambda a, b: a >= b),
    "$lt": _comparison("$lt", lambda a, b: a < b),
    "$lte": _comparison("$lte", lambda a, b: a <= b),
    "$type": _type,
    "$not": _not,
}


def check_expected(expected: Any, path: str = "") -> None:
    """Raise FixtureError for malformed predicates anywhere in ``expected`` before anything runs."""
    if is_predicate(expected):
        for op, arg in expected.items():
            if op not in PREDICATES:
                known = ", ".join(sorted(PREDICATES))
                raise FixtureError(f"{path or 'value'}: unknown predicate {op!r}; known: {known}")
            if op == "$partial" and isinstance(arg, dict):
                for key, sub in arg.items():
                    check_expected(sub, _at(path, key))
            elif op in ("$contains", "$length", "$not"):
                check_expected(arg, path)
        # Arguments' own shape errors surface on first use; probing with MISSING reaches most of them now.
        mismatches(expected, MISSING, path)
    elif isinstance(expected, dict):
        for key, sub in expected.items():
            check_expected(sub, _at(path, key))
    elif isinstance(expected, list):
        for index, sub in enumerate(expected):
            check_expected(sub, _at(path, index))
