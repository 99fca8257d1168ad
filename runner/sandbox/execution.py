"""One node run inside a worker: compile, execute, check the output, describe failures.

Everything here runs in the worker process and returns the frame to send
back; nothing raises out of :func:`run_task`. Failures are worded for the
workflow's author: the exception type and message with the script line, never
a traceback of the sandbox itself.
"""

from __future__ import annotations

import hashlib
import resource
from collections import OrderedDict
from types import CodeType, TracebackType
from typing import Any

from RestrictedPython import compile_restricted_exec

from runner.sandbox import jsondata, protocol
from runner.sandbox.api import HostChannel, NodeContext, Smartbotic, SmartboticError
from runner.sandbox.guards import make_globals
from runner.sandbox.logbook import LogBook, LogPrinter
from runner.sandbox.modules import ModuleImporter
from runner.sandbox.types import JSON, SandboxLimits

USER_CODE_FILE = "code"
"""How user code is named in errors (``code, line 3``)."""

ENTRIES = {"execute": 1, "resume": 2}
"""Entry function → number of arguments (``execute(ctx)``, ``resume(ctx, answer)``)."""

_MAX_MESSAGE_CHARS = 2000


class NodeFailure(Exception):
    """A failure of the node that needs no line number: its message is shown as is."""


class CompileError(Exception):
    """A script or user code that does not compile; raised inside ``ctx.runCode`` too."""


class CodeCache:
    """Compiled code objects by a hash of (file name, source); least recently used dropped first."""

    def __init__(self, size: int = 256) -> None:
        self._size = size
        self._codes: OrderedDict[bytes, CodeType | str] = OrderedDict()

    def get(self, source: str, filename: str) -> CodeType:
        key = hashlib.sha256(f"{filename}\0{source}".encode("utf-8", "surrogatepass")).digest()
        found = self._codes.get(key)
        if found is None:
            found = self._compile(source, filename)
            self._codes[key] = found
            if len(self._codes) > self._size:
                self._codes.popitem(last=False)
        else:
            self._codes.move_to_end(key)
        if isinstance(found, str):
            raise CompileError(found)
        return found

    @staticmethod
    def _compile(source: str, filename: str) -> CodeType | str:
        try:
            result = compile_restricted_exec(source, filename=filename)
        except (SyntaxError, ValueError, RecursionError) as exc:  # e.g. null bytes, absurd nesting
            return f"{filename}: {type(exc).__name__}: {exc}"
        if result.errors or result.code is None:
            return f"{filename}: " + "; ".join(result.errors or ["does not compile"])
        code: CodeType = result.code
        return code


def _short(text: str) -> str:
    return text if len(text) <= _MAX_MESSAGE_CHARS else text[:_MAX_MESSAGE_CHARS] + "…"


def _where(tb: TracebackType | None, files: tuple[str, ...]) -> str:
    """``" (nodes/x.py, line 12)"`` for the innermost frame of the script or the user code."""
    found = ""
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename in files:
            found = f" ({filename}, line {tb.tb_lineno})"
        tb = tb.tb_next
    return found


def describe(exc: BaseException, files: tuple[str, ...]) -> str:
    """``"KeyError: 'x' (code, line 3)"``; the words a person reads when a node fails."""
    if isinstance(exc, NodeFailure | CompileError):
        return _short(str(exc))
    where = _where(exc.__traceback__, files)
    if isinstance(exc, RecursionError):
        return f"node recursed too deeply (RecursionError: {exc}){where}"
    try:
        text = str(exc)
    except Exception:
        text = ""
    name = type(exc).__name__
    return f"{name}: {_short(text)}{where}" if text else f"{name}{where}"


class TaskRun:
    """The state of one node run: its logs, its imports, its ``smartbotic`` object."""

    def __init__(self, task: dict[str, Any], channel: HostChannel, limits: SandboxLimits, codes: CodeCache) -> None:
        self.task = task
        self.limits = limits
        self.codes = codes
        self.book = LogBook(limits)
        self.importer = ModuleImporter()
        self.smartbotic = Smartbotic(channel, self.book)
        self.script_path = str(task.get("script_path") or "<script>")
        self.files = (self.script_path, USER_CODE_FILE)

    def _print_factory(self, getattr_: Any = None) -> LogPrinter:
        return LogPrinter(self.book, getattr_)

    def _globals(self) -> dict[str, Any]:
        return make_globals(
            importer=self.importer,
            print_factory=self._print_factory,
            names={"smartbotic": self.smartbotic, "SmartboticError": SmartboticError},
        )

    def _run_user_code(self, value: JSON) -> JSON:
        code = self.codes.get(str(self.task["user_code"]), USER_CODE_FILE)
        scope = self._globals()
        exec(code, scope)
        main = scope.get("main")
        if not callable(main):
            raise NodeFailure("code must define a function main(input) that returns the node's output")
        return main(value)

    def execute(self) -> JSON:
        entry = self.task.get("entry", "execute")
        if entry not in ENTRIES:
            raise NodeFailure(f"unknown entry {entry!r}; expected execute or resume")
        source = self.task.get("source")
        ctx_data = self.task.get("ctx")
        if not isinstance(source, str) or not isinstance(ctx_data, dict):
            raise NodeFailure("the task has no script source or no ctx")
        code = self.codes.get(source, self.script_path)
        scope = self._globals()
        exec(code, scope)
        function = scope.get(entry)
        if not callable(function):
            signature = "execute(ctx)" if entry == "execute" else "resume(ctx, answer)"
            raise NodeFailure(f"{self.script_path} defines no function {signature}")
        run_code = self._run_user_code if isinstance(self.task.get("user_code"), str) else None
        ctx = NodeContext(ctx_data, run_code)
        if entry == "resume":
            return function(ctx, self.task.get("answer"))
        return function(ctx)

    def output_frame(self, output: JSON) -> bytes:
        try:
            data = jsondata.encode(output, "output")
        except jsondata.NotJsonError as exc:
            raise NodeFailure(f"node output is not JSON: {exc}") from None
        if len(data) > self.limits.max_output_bytes:
            raise NodeFailure(
                f"node output is {len(data)} bytes of JSON, above the {self.limits.max_output_bytes}-byte limit"
            )
        return b'{"done":' + data + b',"logs":' + protocol.encode_value(self.book.entries()) + b"}"

    def fail_frame(self, message: str, *, retire: bool) -> bytes:
        return protocol.encode({"fail": message, "logs": self.book.entries(), "retire": retire})


def memory_message(limits: SandboxLimits) -> str:
    return f"node used more than {protocol.mib_text(limits.memory_bytes)} of memory"


def _grew_too_much(limits: SandboxLimits) -> bool:
    """A worker whose peak RSS passed half its limit is replaced rather than trusted with the next node."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 > limits.memory_bytes // 2


def run_task(task: dict[str, Any], channel: HostChannel, limits: SandboxLimits, codes: CodeCache) -> tuple[bytes, bool]:
    """Run one node; return the frame for the runner and whether this worker should retire."""
    run = TaskRun(task, channel, limits, codes)
    message = ""
    try:
        try:
            output = run.execute()
            return run.output_frame(output), _grew_too_much(limits)
        except MemoryError:
            raise
        except BaseException as exc:  # the script may raise anything, SystemExit included
            message = describe(exc, run.files)
    except MemoryError:
        pass  # leaving the handlers frees the traceback, and with it what the script allocated
    if not message:
        return run.fail_frame(memory_message(limits), retire=True), True
    return run.fail_frame(message, retire=False), _grew_too_much(limits)
