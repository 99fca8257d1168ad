"""The restricted globals a node script runs in: builtins and RestrictedPython's guards.

RestrictedPython rewrites every attribute access, subscript, iteration,
augmented assignment and unpacking into a call to a guard (``_getattr_``,
``_getitem_``, ...); this module supplies them. The rules:

* Attribute access goes through :func:`guarded_getattr`: sandbox objects
  (the ``smartbotic`` API, ``ctx``, imported modules) answer only the public
  names registered for their class; everything else follows
  ``safer_getattr`` (no ``_`` names, no ``str.format``, no frame or code
  attributes) plus no ``obj`` on exceptions. Errors are fresh
  ``AttributeError``\\ s that carry no object.
* Builtins are a fresh copy per task of :data:`BASE_BUILTINS`; see
  ``README.md`` for the list. Functions that iterate their argument in C
  (``sorted``, ``zip``, ``min``, ...) are wrapped so the iteration goes
  through ``_getiter_``.
* ``class`` statements are refused, so scripts never define ``__getattr__``
  or ``__str__`` that host code could trip over.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Iterable, Iterator
from types import ModuleType
from typing import Any

from RestrictedPython.Guards import (
    full_write_guard,
    guarded_iter_unpack_sequence,
    guarded_unpack_sequence,
    raise_,
    safe_builtins,
    safer_getattr,
)

from runner.sandbox.modules import SafeModule

_PUBLIC: dict[type, frozenset[str]] = {}
_SENTINEL: Any = raise_


def register_public(cls: type, names: Iterable[str]) -> None:
    """Declare the only attribute names scripts may read on instances of ``cls``."""
    _PUBLIC[cls] = frozenset(names)


def _lookup(obj: object, name: str) -> Any:
    if type(name) is not str:
        raise TypeError(f"attribute name must be a string, not {type(name).__name__}")
    if isinstance(obj, SafeModule):
        return obj.member(name)
    kind = type(obj)
    public = _PUBLIC.get(kind)
    if public is not None:
        if name in public:
            return getattr(obj, name)
        raise AttributeError(f"{kind.__name__} has no attribute {name!r}")
    if name == "obj" and isinstance(obj, BaseException):
        raise AttributeError("the 'obj' attribute of exceptions is not available in node scripts")
    if isinstance(obj, ModuleType):  # never handed out; refused again in case one leaks
        raise AttributeError("modules are not available in node scripts")
    try:
        value = safer_getattr(obj, name, raise_)
    except AttributeError as exc:
        raise AttributeError(str(exc)) from None
    if isinstance(value, ModuleType):
        raise AttributeError(f"{name!r} is a module; modules are not available in node scripts")
    return value


def guarded_getattr(obj: object, name: str, default: Any = _SENTINEL) -> Any:
    """``_getattr_`` and the ``getattr`` builtin of node scripts."""
    if default is _SENTINEL:
        return _lookup(obj, name)
    try:
        return _lookup(obj, name)
    except AttributeError:
        return default


def guarded_hasattr(obj: object, name: str) -> bool:
    try:
        _lookup(obj, name)
    except (AttributeError, NotImplementedError):
        return False
    return True


def guarded_iter(obj: Any) -> Iterator[Any]:
    """``_getiter_``: sandbox objects are not iterable; everything else is plain ``iter``."""
    if type(obj) is SafeModule or type(obj) in _PUBLIC:
        raise TypeError(f"{type(obj).__name__} object is not iterable")
    return iter(obj)


def guarded_getitem(obj: Any, key: Any) -> Any:
    if type(obj) is SafeModule or type(obj) in _PUBLIC:
        raise TypeError(f"{type(obj).__name__} object is not subscriptable")
    return obj[key]


_INPLACE: dict[str, Callable[[Any, Any], Any]] = {
    "+=": operator.iadd,
    "-=": operator.isub,
    "*=": operator.imul,
    "/=": operator.itruediv,
    "%=": operator.imod,
    "**=": operator.ipow,
    "<<=": operator.ilshift,
    ">>=": operator.irshift,
    "|=": operator.ior,
    "^=": operator.ixor,
    "&=": operator.iand,
    "//=": operator.ifloordiv,
    "@=": operator.imatmul,
}


def guarded_inplacevar(op: str, target: Any, value: Any) -> Any:
    """``_inplacevar_``: ``x += y`` on a plain name."""
    return _INPLACE[op](target, value)


def guarded_apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``_apply_``: calls with ``*args``/``**kwargs``; the arguments were already guarded."""
    return func(*args, **kwargs)


def refuse_class(name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> type:
    """``__metaclass__``: the class statement is not part of the node language."""
    raise TypeError(f"class {name}: class definitions are not supported in node scripts; use dicts and functions")


# --- builtins that iterate, routed through _getiter_ -------------------------------------------


def _sorted(iterable: Iterable[Any], /, *, key: Callable[[Any], Any] | None = None, reverse: bool = False) -> list[Any]:
    return sorted(guarded_iter(iterable), key=key, reverse=reverse)


def _enumerate(iterable: Iterable[Any], start: int = 0) -> Iterator[tuple[int, Any]]:
    return enumerate(guarded_iter(iterable), start)


def _zip(*iterables: Iterable[Any], strict: bool = False) -> Iterator[tuple[Any, ...]]:
    return zip(*(guarded_iter(it) for it in iterables), strict=strict)


def _map(func: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
    return map(func, *(guarded_iter(it) for it in iterables))


def _filter(func: Callable[[Any], Any] | None, iterable: Iterable[Any]) -> Iterator[Any]:
    return filter(func, guarded_iter(iterable))


def _reversed(sequence: Iterable[Any]) -> Iterator[Any]:
    items: list[Any] = list(guarded_iter(sequence))
    return iter(items[::-1])


def _extreme(pick: Callable[..., Any]) -> Callable[..., Any]:
    def choose(*args: Any, **kwargs: Any) -> Any:
        if len(args) == 1:
            return pick(guarded_iter(args[0]), **kwargs)
        return pick(*args, **kwargs)

    choose.__name__ = pick.__name__
    return choose


def _sum(iterable: Iterable[Any], /, start: Any = 0) -> Any:
    return sum(guarded_iter(iterable), start)


def _any(iterable: Iterable[Any]) -> bool:
    return any(guarded_iter(iterable))


def _all(iterable: Iterable[Any]) -> bool:
    return all(guarded_iter(iterable))


def _build_base_builtins() -> dict[str, Any]:
    chosen = dict(safe_builtins)
    for name in ("_getattr_", "setattr", "delattr", "id"):
        # id() leaks addresses; setattr/delattr only ever refuse (nothing here has guarded writes).
        chosen.pop(name, None)
    chosen.update(
        {
            "dict": dict,
            "list": list,
            "tuple": tuple,
            "set": set,
            "frozenset": frozenset,
            "bin": bin,
            "format": format,  # a format spec only (what f-strings do), not str.format's field lookups
            "next": next,
            "iter": guarded_iter,
            "sorted": _sorted,
            "enumerate": _enumerate,
            "zip": _zip,
            "map": _map,
            "filter": _filter,
            "reversed": _reversed,
            "min": _extreme(min),
            "max": _extreme(max),
            "sum": _sum,
            "any": _any,
            "all": _all,
            "getattr": guarded_getattr,
            "hasattr": guarded_hasattr,
        }
    )
    assert all(value is not builtins.__import__ for value in chosen.values())
    return chosen


BASE_BUILTINS: dict[str, Any] = _build_base_builtins()
"""The builtins every task starts from (``__import__`` is added per task)."""


def make_globals(
    *,
    importer: Callable[..., Any],
    print_factory: Callable[..., Any],
    names: dict[str, Any],
) -> dict[str, Any]:
    """Fresh globals for one script or one run of user code."""
    task_builtins = dict(BASE_BUILTINS)
    task_builtins["__import__"] = importer
    scope: dict[str, Any] = {
        "__builtins__": task_builtins,
        "__metaclass__": refuse_class,
        "__name__": "node",
        "_getattr_": guarded_getattr,
        "_getitem_": guarded_getitem,
        "_getiter_": guarded_iter,
        "_write_": full_write_guard,
        "_inplacevar_": guarded_inplacevar,
        "_unpack_sequence_": guarded_unpack_sequence,
        "_iter_unpack_sequence_": guarded_iter_unpack_sequence,
        "_print_": print_factory,
        "_apply_": guarded_apply,
    }
    scope.update(names)
    return scope
