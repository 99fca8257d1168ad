"""The modules a node script may import, as read-only proxies over chosen names.

A real module is never handed to a script: ``json.codecs.open``, ``uuid.os``,
``datetime.sys`` or ``re.functools`` would each lead out of the sandbox. Each
:class:`SafeModule` exposes an explicit list of functions, classes and
constants (never a module), and nothing else: not ``__dict__``, not the module
it wraps. Modules with process-wide state (``random``'s generator, ``decimal``'s
context) are reset the first time a task imports them, so one node cannot
leave state behind for the next.

Importing them here also matters for a different reason: a worker imports
everything it needs before it drops privileges (it may then no longer be able
to read the standard library), so lazily-imported helpers are imported too.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import encodings.ascii
import encodings.cp1252
import encodings.idna
import encodings.latin_1
import encodings.raw_unicode_escape
import encodings.unicode_escape
import encodings.utf_8
import encodings.utf_8_sig
import encodings.utf_16
import encodings.utf_32  # noqa: F401  (str.encode looks codecs up lazily)
import hashlib
import hmac
import importlib
import json
import math
import random
import re
import time
import unicodedata  # noqa: F401  (re imports it lazily for \N{...})
import uuid
from collections.abc import Callable, Iterable, Mapping
from types import ModuleType
from typing import Any

importlib.import_module("_strptime")  # datetime.strptime / time.strptime import it lazily


class SafeModule:
    """A module as a script sees it: a fixed set of names, read-only."""

    __slots__ = ("_members", "_name")

    _members: Mapping[str, object]
    _name: str

    def __init__(self, name: str, members: Mapping[str, object]) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_members", dict(members))

    def member(self, attr: str) -> object:
        try:
            return self._members[attr]
        except KeyError:
            raise AttributeError(f"module {self._name!r} has no attribute {attr!r} in node scripts") from None

    def __getattr__(self, attr: str) -> object:
        # Only reached by `from json import loads`; script attribute access goes through guards.
        return self.member(attr)

    def __setattr__(self, attr: str, value: object) -> None:
        raise AttributeError(f"module {self._name!r} is read-only")

    def __delattr__(self, attr: str) -> None:
        raise AttributeError(f"module {self._name!r} is read-only")

    def __repr__(self) -> str:
        return f"<module {self._name!r} (sandboxed)>"

    def names(self) -> list[str]:
        return sorted(self._members)


def _pick(module: ModuleType, names: Iterable[str]) -> dict[str, object]:
    picked: dict[str, object] = {}
    for name in names:
        value = getattr(module, name)
        if isinstance(value, ModuleType):  # pragma: no cover - a mistake in the lists below
            raise TypeError(f"{module.__name__}.{name} is a module")
        picked[name] = value
    return picked


_ALLOWED: dict[str, tuple[ModuleType, list[str]]] = {
    "json": (json, ["dumps", "loads", "JSONDecodeError"]),
    "math": (math, [n for n in dir(math) if not n.startswith("_")]),
    "re": (
        re,
        [
            "compile", "escape", "findall", "finditer", "fullmatch", "match", "search", "split", "sub", "subn",
            "error", "Pattern", "Match", "NOFLAG", "A", "ASCII", "I", "IGNORECASE", "M", "MULTILINE",
            "S", "DOTALL", "U", "UNICODE", "X", "VERBOSE",
        ],
    ),
    "datetime": (datetime, ["date", "datetime", "time", "timedelta", "timezone", "tzinfo", "MINYEAR", "MAXYEAR"]),
    "time": (
        time,
        [
            "time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "process_time",
            "sleep", "gmtime", "localtime", "mktime", "strftime", "strptime", "asctime", "ctime", "struct_time",
            "timezone", "altzone", "daylight", "tzname",
        ],
    ),
    "random": (
        random,
        [
            "random", "randint", "randrange", "choice", "choices", "shuffle", "sample", "uniform", "gauss",
            "getrandbits", "randbytes", "seed", "triangular", "betavariate", "expovariate", "Random",
        ],
    ),
    "hashlib": (
        hashlib,
        [
            "md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_224", "sha3_256", "sha3_384", "sha3_512",
            "blake2b", "blake2s", "shake_128", "shake_256", "new", "pbkdf2_hmac", "algorithms_available",
        ],
    ),
    "hmac": (hmac, ["new", "digest", "compare_digest"]),
    "base64": (
        base64,
        [
            "b64encode", "b64decode", "standard_b64encode", "standard_b64decode", "urlsafe_b64encode",
            "urlsafe_b64decode", "b32encode", "b32decode", "b16encode", "b16decode", "b85encode", "b85decode",
        ],
    ),
    "uuid": (
        uuid,
        ["UUID", "uuid3", "uuid4", "uuid5", "NAMESPACE_DNS", "NAMESPACE_URL", "NAMESPACE_OID", "NAMESPACE_X500"],
    ),
    "decimal": (
        decimal,
        [
            "Decimal", "Context", "localcontext", "DecimalException", "InvalidOperation", "DivisionByZero",
            "Inexact", "Rounded", "Overflow", "Underflow", "ROUND_UP", "ROUND_DOWN", "ROUND_CEILING",
            "ROUND_FLOOR", "ROUND_HALF_UP", "ROUND_HALF_DOWN", "ROUND_HALF_EVEN", "ROUND_05UP",
        ],
    ),
}  # fmt: skip
"""Module name → (module, the names a script may use). No entry may be a module."""

SAFE_MODULES: dict[str, SafeModule] = {
    name: SafeModule(name, _pick(module, names)) for name, (module, names) in _ALLOWED.items()
}
"""Everything ``import`` can return in a node script, by name."""


def _reset_decimal() -> None:
    decimal.setcontext(decimal.Context())


_RESETS: dict[str, Callable[[], None]] = {"random": random.seed, "decimal": _reset_decimal}


_C_LEVEL_IMPORTS: frozenset[str] = frozenset({"_strptime"})
"""Modules that C code (``datetime.strptime``, ``time.strptime``) imports while a script runs.

``PyImport_Import`` calls the ``__import__`` of the *current frame's*
builtins, which here is the script's, and then takes the real module from
``sys.modules``, ignoring what ``__import__`` returned. So these names must
not be refused, and the script-facing answer can stay empty. A script cannot
ask for them itself: RestrictedPython refuses names that start with ``_``.
"""

_EMPTY = SafeModule("<internal>", {})


class ModuleImporter:
    """The ``__import__`` of one task: the allowlist above, with per-task resets."""

    __slots__ = ("_imported",)

    def __init__(self) -> None:
        self._imported: set[str] = set()

    def __call__(
        self,
        name: str,
        globals: Mapping[str, Any] | None = None,
        locals: Mapping[str, Any] | None = None,
        fromlist: Iterable[str] | None = (),
        level: int = 0,
    ) -> SafeModule:
        if level != 0:
            raise ImportError("relative imports are not available in node scripts")
        module = SAFE_MODULES.get(name) if type(name) is str else None
        if module is None and name in _C_LEVEL_IMPORTS:
            return _EMPTY
        if module is None:
            allowed = ", ".join(sorted(SAFE_MODULES))
            raise ImportError(f"import of {name!r} is not allowed in node scripts; allowed: {allowed}")
        if name not in self._imported:
            self._imported.add(name)
            reset = _RESETS.get(name)
            if reset is not None:
                reset()
        return module
