"""Checking the ``args`` list of one ``smartbotic.*`` call.

Every helper raises :class:`HostApiError` with a message that names the call
and the argument, so a script's author sees e.g. ``fs.readFile(path): path
must be a non-empty string, got int``.
"""

from __future__ import annotations

from runner.sandbox.types import JSON, HostApiError


def _type_name(value: JSON) -> str:
    return "null" if value is None else type(value).__name__


def signature(method: str, names: tuple[str, ...], required: int) -> str:
    shown = [n if i < required else f"{n}=None" for i, n in enumerate(names)]
    return f"{method}({', '.join(shown)})"


def take(method: str, args: list[JSON], names: tuple[str, ...], required: int | None = None) -> list[JSON]:
    """Check the argument count; missing optional arguments come back as None."""
    need = len(names) if required is None else required
    if not isinstance(args, list):
        raise HostApiError(f"{signature(method, names, need)}: arguments must be a list, got {_type_name(args)}")
    if not need <= len(args) <= len(names):
        expected = str(need) if need == len(names) else f"{need} to {len(names)}"
        noun = "argument" if expected == "1" else "arguments"
        raise HostApiError(f"{signature(method, names, need)} takes {expected} {noun}, got {len(args)}")
    return [*args, *([None] * (len(names) - len(args)))]


def want_str(method: str, name: str, value: JSON) -> str:
    if not isinstance(value, str) or not value:
        raise HostApiError(f"{method}: {name} must be a non-empty string, got {_type_name(value)}")
    return value


def want_seconds(method: str, name: str, value: JSON, *, default: float, maximum: float) -> float:
    """An optional number of seconds in (0, maximum]."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise HostApiError(f"{method}: {name} must be a number of seconds, got {_type_name(value)}")
    if not 0 < value <= maximum:
        raise HostApiError(f"{method}: {name} must be more than 0 and at most {maximum:g} seconds, got {value!r}")
    return float(value)
