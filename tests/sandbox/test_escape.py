"""Hostile scripts: every attempt must fail, and must leave no trace.

Each attack is written so that, had it worked, it would have done something
observable: created a directory in a world-writable folder (``os.mkdir``
needs no file descriptor, so the worker's descriptor limit would not have
stopped it), planted a builtin or module attribute that the next node would
see, or returned a secret from the runner's environment. After each attack
the same worker (the pool has one) runs a probe node that checks its
builtins, modules and ``smartbotic`` are intact.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from runner.sandbox import SandboxPool
from tests.sandbox.support import SCRIPT_PATH, SECRET_NAME, SECRET_VALUE, FakeHost, run


@dataclass(frozen=True)
class Attack:
    name: str
    source: str
    refused_with: str
    """A fragment of the error: proof that a guard stopped it, not a typo in the attack."""


ATTACKS = [
    Attack(
        "subclass-walk",
        """
        def execute(ctx):
            for cls in ().__class__.__bases__[0].__subclasses__():
                if cls.__name__ == "catch_warnings":
                    cls()._module.__builtins__["__import__"]("os").mkdir(ctx.input["marker"])
        """,
        '"__class__" is an invalid attribute name because it starts with "_"',
    ),
    Attack(
        "subclass-walk-through-getattr",
        """
        def execute(ctx):
            base = getattr(getattr((), "__class__"), "__base__")
            for cls in getattr(base, "__subclasses__")():
                pass
        """,
        '"__class__" is an invalid attribute name because it starts with "_"',
    ),
    Attack(
        "object-from-mro",
        """
        def execute(ctx):
            root = int.mro()[-1]
            return getattr(root, "__subclasses__")()
        """,
        '"__subclasses__" is an invalid attribute name',
    ),
    Attack(
        "function-globals",
        """
        def execute(ctx):
            execute.__globals__["__builtins__"]["pwned"] = True
        """,
        '"__globals__" is an invalid attribute name',
    ),
    Attack(
        "function-globals-through-getattr",
        """
        def execute(ctx):
            getattr(execute, "__globals__")["__builtins__"]["pwned"] = True
        """,
        '"__globals__" is an invalid attribute name',
    ),
    Attack(
        "function-code",
        """
        def execute(ctx):
            return getattr(execute, "__code__").co_consts
        """,
        '"__code__" is an invalid attribute name',
    ),
    Attack(
        "generator-frame",
        """
        def execute(ctx):
            gen = (x for x in [1])
            return gen.gi_frame.f_back.f_globals
        """,
        '"gi_frame" is a restricted name',
    ),
    Attack(
        "generator-frame-through-getattr",
        """
        def execute(ctx):
            gen = (x for x in [1])
            frame = getattr(gen, "gi_frame")
            getattr(frame, "f_back")
        """,
        '"gi_frame" is a restricted name',
    ),
    Attack(
        "traceback-frame",
        """
        def execute(ctx):
            try:
                1 / 0
            except ZeroDivisionError as e:
                return e.__traceback__.tb_frame.f_back.f_globals
        """,
        '"__traceback__" is an invalid attribute name',
    ),
    Attack(
        "traceback-through-getattr",
        """
        def execute(ctx):
            try:
                1 / 0
            except ZeroDivisionError as e:
                tb = getattr(e, "__traceback__")
                return getattr(tb, "tb_frame")
        """,
        '"__traceback__" is an invalid attribute name',
    ),
    Attack(
        "str-format-attribute-walk",
        """
        def execute(ctx):
            return "{0.__class__.__mro__}".format(1)
        """,
        "format*() methods of `str` is not safe",
    ),
    Attack(
        "str-format-map",
        """
        def execute(ctx):
            return "{x.__class__}".format_map({"x": smartbotic})
        """,
        "format*() methods of `str` is not safe",
    ),
    Attack(
        "str-format-through-the-class",
        """
        def execute(ctx):
            fmt = getattr(str, "format")
            return fmt("{0.__init__.__globals__}", smartbotic)
        """,
        "format*() methods of `str` is not safe",
    ),
    Attack(
        "format-builtin-field-syntax",
        """
        def execute(ctx):
            return format(smartbotic, "{0._channel}")
        """,
        "TypeError: unsupported format string passed to Smartbotic.__format__",
    ),
    Attack(
        "import-os",
        """
        import os
        def execute(ctx):
            os.mkdir(ctx.input["marker"])
        """,
        "ImportError: import of 'os' is not allowed in node scripts",
    ),
    Attack(
        "import-submodule-of-an-allowed-one",
        """
        import json.decoder
        def execute(ctx):
            return json.decoder.scanstring
        """,
        "ImportError: import of 'json.decoder' is not allowed in node scripts",
    ),
    Attack(
        "dunder-import",
        """
        def execute(ctx):
            __import__("os").mkdir(ctx.input["marker"])
        """,
        '"__import__" is an invalid variable name',
    ),
    Attack(
        "open",
        """
        def execute(ctx):
            open(ctx.input["marker"], "w").write("x")
        """,
        "NameError: name 'open' is not defined",
    ),
    Attack(
        "type-to-build-classes",
        """
        def execute(ctx):
            return type("X", (), {"__getattr__": lambda s, n: n})
        """,
        "NameError: name 'type' is not defined",
    ),
    Attack(
        "class-statement",
        """
        class Evil:
            pass
        def execute(ctx):
            return Evil()
        """,
        "class Evil: class definitions are not supported in node scripts",
    ),
    Attack(
        "smartbotic-private-connection",
        """
        def execute(ctx):
            return getattr(smartbotic, "_conn")
        """,
        "AttributeError: Smartbotic has no attribute '_conn'",
    ),
    Attack(
        "api-private-channel",
        """
        def execute(ctx):
            channel = getattr(smartbotic.fs, "_channel")
            channel.call("process.exec", ["mkdir " + ctx.input["marker"]])
        """,
        "AttributeError: FsApi has no attribute '_channel'",
    ),
    Attack(
        "api-private-channel-in-source",
        """
        def execute(ctx):
            smartbotic.fs._channel.send(b"x")
        """,
        '"_channel" is an invalid attribute name',
    ),
    Attack(
        "api-non-public-attribute",
        """
        def execute(ctx):
            return getattr(smartbotic.db.collection("users"), "name")
        """,
        "AttributeError: Collection has no attribute 'name'",
    ),
    Attack(
        "bound-method-self",
        """
        def execute(ctx):
            api = getattr(smartbotic.fs.stat, "__self__")
            return getattr(api, "_channel")
        """,
        '"__self__" is an invalid attribute name',
    ),
    Attack(
        "ctx-private-run-code",
        """
        def execute(ctx):
            return getattr(ctx, "_run_code")
        """,
        "AttributeError: NodeContext has no attribute '_run_code'",
    ),
    Attack(
        "exception-obj-of-a-module-proxy",
        """
        import json
        def execute(ctx):
            try:
                json.nothing
            except AttributeError as e:
                return e.obj
        """,
        "the 'obj' attribute of exceptions is not available",
    ),
    Attack(
        "builtins-by-name",
        """
        def execute(ctx):
            __builtins__["len"] = lambda x: 0
        """,
        '"__builtins__" is an invalid variable name',
    ),
    Attack(
        "builtins-through-globals",
        """
        def execute(ctx):
            globals()["__builtins__"]["pwned"] = True
        """,
        "NameError: name 'globals' is not defined",
    ),
    Attack(
        "vars",
        """
        def execute(ctx):
            vars(ctx)["input"] = "changed"
        """,
        "NameError: name 'vars' is not defined",
    ),
    Attack(
        "locals",
        """
        def execute(ctx):
            return locals()
        """,
        "NameError: name 'locals' is not defined",
    ),
    Attack(
        "dir",
        """
        def execute(ctx):
            return dir(smartbotic.fs)
        """,
        "NameError: name 'dir' is not defined",
    ),
    Attack(
        "eval",
        """
        def execute(ctx):
            return eval("().__class__")
        """,
        "Line 3: Eval calls are not allowed.",
    ),
    Attack(
        "exec",
        """
        def execute(ctx):
            exec("import os")
        """,
        "Line 3: Exec calls are not allowed.",
    ),
    Attack(
        "compile",
        """
        def execute(ctx):
            return compile("1", "x", "eval")
        """,
        "NameError: name 'compile' is not defined",
    ),
    Attack(
        "setattr-on-a-module",
        """
        import json
        def execute(ctx):
            setattr(json, "dumps", lambda value: "pwned")
        """,
        "NameError: name 'setattr' is not defined",
    ),
    Attack(
        "assign-to-a-module-attribute",
        """
        import json
        def execute(ctx):
            json.dumps = lambda value: "pwned"
        """,
        "TypeError: attribute-less object (assign or del)",
    ),
    Attack(
        "replace-an-api-object",
        """
        def execute(ctx):
            smartbotic.fs = None
        """,
        "TypeError: attribute-less object (assign or del)",
    ),
    Attack(
        "modify-ctx",
        """
        def execute(ctx):
            ctx.input = {"changed": True}
        """,
        "TypeError: attribute-less object (assign or del)",
    ),
    Attack(
        "json-module-walk-to-codecs",
        """
        import json
        def execute(ctx):
            json.codecs.open(ctx.input["marker"] + "/x", "w")
        """,
        "module 'json' has no attribute 'codecs' in node scripts",
    ),
    Attack(
        "json-decoder-internals",
        """
        import json
        def execute(ctx):
            return json.decoder.scanstring
        """,
        "module 'json' has no attribute 'decoder' in node scripts",
    ),
    Attack(
        "re-module-internals",
        """
        import re
        def execute(ctx):
            return re.functools.partial
        """,
        "module 're' has no attribute 'functools' in node scripts",
    ),
    Attack(
        "re-private-compiler",
        """
        import re
        def execute(ctx):
            return getattr(re, "_compiler")
        """,
        "module 're' has no attribute '_compiler' in node scripts",
    ),
    Attack(
        "datetime-sys",
        """
        import datetime
        def execute(ctx):
            return datetime.sys.modules["os"].mkdir(ctx.input["marker"])
        """,
        "module 'datetime' has no attribute 'sys' in node scripts",
    ),
    Attack(
        "environment-through-uuid-os",
        """
        import uuid
        def execute(ctx):
            return uuid.os.environ
        """,
        "module 'uuid' has no attribute 'os' in node scripts",
    ),
    Attack(
        "random-private-os",
        """
        import random
        def execute(ctx):
            return getattr(random, "_os").environ
        """,
        "module 'random' has no attribute '_os' in node scripts",
    ),
    Attack(
        "time-clock-settime",
        """
        import time
        def execute(ctx):
            time.clock_settime(0, 0)
        """,
        "module 'time' has no attribute 'clock_settime' in node scripts",
    ),
    Attack(
        "decimal-global-context",
        """
        import decimal
        def execute(ctx):
            decimal.getcontext().prec = 2
        """,
        "module 'decimal' has no attribute 'getcontext' in node scripts",
    ),
    Attack(
        "import-sys",
        """
        import sys
        def execute(ctx):
            return sys.modules
        """,
        "ImportError: import of 'sys' is not allowed",
    ),
    Attack(
        "import-string-formatter",
        """
        from string import Formatter
        def execute(ctx):
            return Formatter().format("{0.__class__}", 1)
        """,
        "ImportError: import of 'string' is not allowed",
    ),
    Attack(
        "relative-import",
        """
        from . import worker
        def execute(ctx):
            return worker
        """,
        "ImportError: relative imports are not available in node scripts",
    ),
    Attack(
        "breakpoint",
        """
        def execute(ctx):
            breakpoint()
        """,
        '"breakpoint" is a reserved name.',
    ),
    Attack(
        "help",
        """
        def execute(ctx):
            help(smartbotic)
        """,
        "NameError: name 'help' is not defined",
    ),
    Attack(
        "print-to-an-api-object",
        """
        def execute(ctx):
            print("x", file=smartbotic.log)
        """,
        "print(file=...) is not available in node scripts",
    ),
    Attack(
        "iterate-a-module",
        """
        import json
        def execute(ctx):
            return [name for name in json]
        """,
        "TypeError: SafeModule object is not iterable",
    ),
    Attack(
        "module-proxy-own-methods",
        """
        import json
        def execute(ctx):
            return json.names()
        """,
        "module 'json' has no attribute 'names' in node scripts",
    ),
    Attack(
        "api-object-subscript",
        """
        def execute(ctx):
            return smartbotic["fs"]
        """,
        "TypeError: Smartbotic object is not subscriptable",
    ),
    Attack(
        "user-code-reaching-for-ctx",
        """
        def execute(ctx):
            return ctx.runCode(1)
        """,
        "NameError: name 'ctx' is not defined (code, line 2)",
    ),
]


@pytest.fixture
def marker_dir() -> Iterator[str]:
    """A folder the worker's user could write to, had it escaped."""
    folder = tempfile.mkdtemp(prefix="sandbox-escape-", dir="/tmp")
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


PROBE = """
    import json

    def execute(ctx):
        leaked = []
        try:
            pwned
            leaked.append("pwned")
        except NameError:
            pass
        try:
            open
            leaked.append("open")
        except NameError:
            pass
        return {
            "leaked": leaked,
            "len": len([1, 2, 3]),
            "sorted": sorted([2, 1]),
            "dumps": json.dumps({"a": 1}),
            "input": ctx.input,
            "stat": smartbotic.fs.stat("x"),
            "dunder_refused": not hasattr("", "__class__"),
        }
    """

PROBE_RESULT = {
    "leaked": [],
    "len": 3,
    "sorted": [1, 2],
    "dumps": '{"a": 1}',
    "input": {"probe": True},
    "stat": {"size": 3, "isFile": True},
    "dunder_refused": True,
}


def test_there_are_enough_distinct_attacks() -> None:
    assert len({a.name for a in ATTACKS}) == len(ATTACKS) >= 25


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
async def test_attack_fails_and_leaves_no_trace(solo_pool: SandboxPool, marker_dir: str, attack: Attack) -> None:
    marker = os.path.join(marker_dir, "escaped")
    host = FakeHost()
    user_code = "def main(input):\n    return ctx.input\n" if attack.name == "user-code-reaching-for-ctx" else None
    outcome = await run(solo_pool, attack.source, host, ctx={"input": {"marker": marker}}, user_code=user_code)

    assert not outcome.ok, f"{attack.name} was not refused: {outcome.output!r}"
    assert attack.refused_with in (outcome.error or ""), outcome.error
    assert "Traceback" not in (outcome.error or "")
    assert SECRET_VALUE not in repr(outcome)
    assert not os.path.exists(marker)
    assert host.calls == []

    probe = await run(solo_pool, PROBE, ctx={"input": {"probe": True}})
    assert probe.ok, probe.error
    assert probe.output == PROBE_RESULT


async def test_attack_errors_name_the_script_line(solo_pool: SandboxPool) -> None:
    outcome = await run(solo_pool, textwrap.dedent(ATTACKS[1].source))
    assert outcome.error is not None
    assert outcome.error.endswith(f"({SCRIPT_PATH}, line 3)")


async def test_random_state_set_by_one_node_does_not_reach_the_next(solo_pool: SandboxPool) -> None:
    draw = "[random.random() for _ in range(3)]"
    seeded_draw = f"import random\ndef execute(ctx):\n    random.seed(42)\n    return {draw}\n"
    seed_only = "import random\ndef execute(ctx):\n    random.seed(42)\n"
    draw_only = f"import random\ndef execute(ctx):\n    return {draw}\n"

    reference = await run(solo_pool, seeded_draw)
    assert reference.ok, reference.error
    assert (await run(solo_pool, seeded_draw)).output == reference.output  # seeding works within a node
    draws = []
    for _ in range(3):
        assert (await run(solo_pool, seed_only)).ok
        draws.append((await run(solo_pool, draw_only)).output)
    assert reference.output not in draws
    assert len({repr(d) for d in draws}) == 3


async def test_worker_environment_holds_no_secret_of_the_runner(solo_pool: SandboxPool) -> None:
    assert os.environ[SECRET_NAME] == SECRET_VALUE  # the runner has it ...
    (worker,) = solo_pool._workers
    with open(f"/proc/{worker.process.pid}/environ", "rb") as f:
        worker_environ = f.read()
    assert SECRET_VALUE.encode() not in worker_environ  # ... its workers never had it
    assert SECRET_NAME.encode() not in worker_environ


async def test_get_field_value_never_reads_attributes(solo_pool: SandboxPool) -> None:
    source = """
        def execute(ctx):
            get = smartbotic.utils.getFieldValue
            return [
                get(smartbotic, "fs._channel", "refused"),
                get("text", "__class__.__mro__", "refused"),
                get(ctx, "input", "refused"),
                get(execute, "__globals__.__builtins__", "refused"),
                get(ctx.input, "items.__len__", "refused"),
                get(ctx.input, "items[0].__class__", "refused"),
            ]
        """
    outcome = await run(solo_pool, source, ctx={"input": {"items": [1]}})
    assert outcome.ok, outcome.error
    assert outcome.output == ["refused"] * 6
