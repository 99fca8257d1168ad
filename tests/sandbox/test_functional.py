"""What a node script can do, run in real worker processes."""

from __future__ import annotations

import asyncio
import hmac
import os
import uuid

import pytest

from runner.sandbox import NodeOutcome, NodeTask, SandboxLimits, SandboxPool
from tests.sandbox.support import SCRIPT_PATH, FakeHost, assert_healthy, node, run

# --- entry points and ctx ---------------------------------------------------------------------


async def test_execute_sees_every_ctx_field(pool: SandboxPool) -> None:
    ctx = {"input": {"a": [1, 2]}, "config": {"status": 201}, "node": {"id": "n1"}, "execution": {"id": "e1"}}
    outcome = await run(
        pool,
        """
        def execute(ctx):
            return {"input": ctx.input, "config": ctx.config["status"], "node": ctx.node, "execution": ctx.execution}
        """,
        ctx=ctx,
    )
    assert outcome.ok, outcome.error
    assert outcome.output == {"input": {"a": [1, 2]}, "config": 201, "node": {"id": "n1"}, "execution": {"id": "e1"}}
    assert outcome.duration_ms > 0


async def test_resume_gets_the_answer(pool: SandboxPool) -> None:
    source = """
        def execute(ctx):
            return "not this one"

        def resume(ctx, answer):
            return {"answer": answer, "input": ctx.input}
        """
    outcome = await run(pool, source, ctx={"input": 7}, entry="resume", answer={"approved": True})
    assert outcome.ok, outcome.error
    assert outcome.output == {"answer": {"approved": True}, "input": 7}


async def test_script_without_the_entry_function_fails_naming_it(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    return 1\n", entry="resume")
    assert not outcome.ok
    assert outcome.error == f"{SCRIPT_PATH} defines no function resume(ctx, answer)"


async def test_unknown_entry_is_refused(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    return 1\n", entry="setup")
    assert not outcome.ok
    assert "unknown entry 'setup'" in (outcome.error or "")


async def test_module_level_state_does_not_survive_between_runs(pool: SandboxPool) -> None:
    source = """
        counter = [0]
        def execute(ctx):
            counter[0] = counter[0] + 1
            return counter[0]
        """
    results = [(await run(pool, source)).output for _ in range(4)]
    assert results == [1, 1, 1, 1]


# --- user code ------------------------------------------------------------------------------------

CODE_NODE = """
    def execute(ctx):
        return ctx.runCode(ctx.input)
    """


async def test_run_code_calls_main_with_the_value_and_returns_its_result(pool: SandboxPool, host: FakeHost) -> None:
    user_code = """
        import json
        def main(input):
            size = smartbotic.fs.stat("/data/a.txt")["size"]
            return {"doubled": [x * 2 for x in input["xs"]], "size": size, "json": json.dumps(input)}
        """
    outcome = await run(pool, CODE_NODE, host, ctx={"input": {"xs": [1, 2]}}, user_code=user_code)
    assert outcome.ok, outcome.error
    assert outcome.output == {"doubled": [2, 4], "size": 3, "json": '{"xs": [1, 2]}'}
    assert host.calls == [("fs.stat", ["/data/a.txt"])]


async def test_user_code_error_names_code_and_its_line(pool: SandboxPool) -> None:
    user_code = """
        def main(input):
            x = 1
            return input["missing"]
        """
    outcome = await run(pool, CODE_NODE, ctx={"input": {}}, user_code=user_code)
    assert not outcome.ok
    assert outcome.error == "KeyError: 'missing' (code, line 4)"


async def test_user_code_syntax_error_names_code_and_line(pool: SandboxPool) -> None:
    outcome = await run(pool, CODE_NODE, ctx={"input": {}}, user_code="def main(input):\n    return (\n")
    assert not outcome.ok
    assert (outcome.error or "").startswith("code: Line 2: SyntaxError")


async def test_user_code_without_main_fails_clearly(pool: SandboxPool) -> None:
    outcome = await run(pool, CODE_NODE, ctx={"input": {}}, user_code="def handler(input):\n    return 1\n")
    assert not outcome.ok
    assert outcome.error == "code must define a function main(input) that returns the node's output"


async def test_user_code_does_not_see_the_script_globals(pool: SandboxPool) -> None:
    source = """
        secret = "script-only"
        def execute(ctx):
            return ctx.runCode(1)
        """
    outcome = await run(pool, source, user_code="def main(input):\n    return secret\n")
    assert not outcome.ok
    assert outcome.error == "NameError: name 'secret' is not defined (code, line 2)"


async def test_run_code_without_user_code_fails(pool: SandboxPool) -> None:
    outcome = await run(pool, CODE_NODE)
    assert not outcome.ok
    assert "ctx.runCode: this node has no user code" in (outcome.error or "")


# --- builtins and modules ---------------------------------------------------------------------------


async def test_builtins_node_authors_need_work(pool: SandboxPool) -> None:
    source = """
        import json
        def execute(ctx):
            items = ctx.input
            by_name = {item["name"]: i for i, item in enumerate(items)}
            names = sorted(by_name, key=lambda n: by_name[n], reverse=True)
            pairs = list(zip(names, range(10)))
            total = sum(item["n"] for item in items)
            return {
                "by_name": by_name,
                "names": names,
                "pairs": pairs,
                "total": total,
                "min": min(item["n"] for item in items),
                "max": max(3, 9, 4),
                "any": any(item["n"] > 2 for item in items),
                "all": all(isinstance(item, dict) for item in items),
                "mapped": list(map(str, [1, 2])),
                "filtered": list(filter(None, [0, 1, 2])),
                "reversed": list(reversed([1, 2, 3])),
                "unique": sorted(set(["b", "a", "b"])),
                "tuple": tuple([1, 2]),
                "json": json.loads(json.dumps({"k": [1, 2.5, None]})),
                "fstring": f"{total:>5}|{3.14159:.2f}",
                "percent": "%s-%d" % ("a", 3),
                "types": [isinstance(items, list), isinstance(by_name, dict), callable(len)],
                "getattr": getattr("abc", "upper")(),
                "hasattr": [hasattr("abc", "upper"), hasattr("abc", "nope"), hasattr("abc", "__class__")],
                "abs_round": [abs(-2), round(2.567, 1), int("12"), float("1.5"), bool(0), str(5), len("abc")],
                "format": format(1234.5, ",.1f"),
                "next": next(iter([9])),
            }
        """
    items = [{"name": "x", "n": 1}, {"name": "y", "n": 3}]
    outcome = await run(pool, source, ctx={"input": items})
    assert outcome.ok, outcome.error
    assert outcome.output == {
        "by_name": {"x": 0, "y": 1},
        "names": ["y", "x"],
        "pairs": [["y", 0], ["x", 1]],
        "total": 4,
        "min": 1,
        "max": 9,
        "any": True,
        "all": True,
        "mapped": ["1", "2"],
        "filtered": [1, 2],
        "reversed": [3, 2, 1],
        "unique": ["a", "b"],
        "tuple": [1, 2],
        "json": {"k": [1, 2.5, None]},
        "fstring": "    4|3.14",
        "percent": "a-3",
        "types": [True, True, True],
        "getattr": "ABC",
        "hasattr": [True, False, False],
        "abs_round": [2, 2.6, 12, 1.5, False, "5", 3],
        "format": "1,234.5",
        "next": 9,
    }


async def test_allowed_modules_work_in_a_confined_worker(pool: SandboxPool) -> None:
    # The worker may no longer read the Python installation: everything these need was imported in advance.
    source = """
        import base64, datetime, decimal, hashlib, hmac, math, random, re, time, uuid
        from json import dumps

        def execute(ctx):
            when = datetime.datetime.strptime("2024-03-01 10:00", "%Y-%m-%d %H:%M")
            return {
                "date": when.isoformat(),
                "later": (when + datetime.timedelta(days=1)).strftime("%Y-%m-%d"),
                "utc": datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc).isoformat(),
                "year": time.strptime("2024", "%Y").tm_year,
                "money": str(decimal.Decimal("1.005").quantize(decimal.Decimal(".01"), decimal.ROUND_HALF_UP)),
                "sha": hashlib.sha256("x".encode()).hexdigest()[:8],
                "hmac": hmac.new(b"key", b"msg", "sha256").hexdigest()[:8],
                "b64": base64.b64encode("hi".encode()).decode(),
                "sqrt": math.sqrt(16),
                "re": re.sub(r"[0-9]", "#", "a1b2"),
                "uuid": len(str(uuid.uuid4())),
                "uuid5": str(uuid.uuid5(uuid.NAMESPACE_DNS, "example.org")),
                "random": 1 <= random.randint(1, 3) <= 3,
                "dumps": dumps([1]),
                "latin": "é".encode("latin-1").decode("latin-1"),
                "now": time.time() > 0,
            }
        """
    outcome = await run(pool, source)
    assert outcome.ok, outcome.error
    assert outcome.output == {
        "date": "2024-03-01T10:00:00",
        "later": "2024-03-02",
        "utc": "2024-01-01T00:00:00+00:00",
        "year": 2024,
        "money": "1.01",
        "sha": "2d711642",
        "hmac": hmac.new(b"key", b"msg", "sha256").hexdigest()[:8],
        "b64": "aGk=",
        "sqrt": 4.0,
        "re": "a#b#",
        "uuid": 36,
        "uuid5": str(uuid.uuid5(uuid.NAMESPACE_DNS, "example.org")),
        "random": True,
        "dumps": "[1]",
        "latin": "é",
        "now": True,
    }


# --- getFieldValue ---------------------------------------------------------------------------------

DOC = {"a": {"b": [{"c": 1}, {"c": 2, "d.e": "dotted"}]}, "list": [[10, 11]], "3": "three"}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.b[0].c", 1),
        ("a.b[1].c", 2),
        ("a.b.1.c", 2),
        ("a.b[-1].c", 2),
        ('a.b[1]["d.e"]', "dotted"),
        ("list[0][1]", 11),
        ("[3]", "three"),
        (["a", "b", 0, "c"], 1),
        ("a.b[5].c", "default"),
        ("a.x.y", "default"),
        ("a.b.c", "default"),
        ("list[0][1].x", "default"),
        ("__class__", "default"),
        ("a.__class__.__mro__", "default"),
        ("a.keys", "default"),
    ],
)
async def test_get_field_value_walks_keys_and_indexes_only(pool: SandboxPool, path: object, expected: object) -> None:
    source = """
        def execute(ctx):
            return smartbotic.utils.getFieldValue(ctx.input["doc"], ctx.input["path"], "default")
        """
    outcome = await run(pool, source, ctx={"input": {"doc": DOC, "path": path}})
    assert outcome.ok, outcome.error
    assert outcome.output == expected


async def test_get_field_value_default_defaults_to_none(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    return [smartbotic.utils.getFieldValue({}, 'x')]\n")
    assert outcome.output == [None]


# --- logs -----------------------------------------------------------------------------------------


async def test_logs_keep_levels_and_print_lines(pool: SandboxPool) -> None:
    source = """
        def execute(ctx):
            smartbotic.log.info("starting", 3)
            smartbotic.log.warn("careful")
            print("from print", 1)
            smartbotic.log.error("bad")
            return None
        """
    outcome = await run(pool, source)
    assert outcome.ok, outcome.error
    assert [(e["level"], e["message"]) for e in outcome.logs] == [
        ("info", "starting 3"),
        ("warn", "careful"),
        ("info", "from print 1"),
        ("error", "bad"),
    ]
    assert all(isinstance(e["at"], int) and e["at"] > 1_600_000_000_000 for e in outcome.logs)


async def test_logs_are_capped_and_say_so(pool: SandboxPool) -> None:
    # FUNCTIONAL_LIMITS: 5 lines of 100 bytes.
    source = """
        def execute(ctx):
            smartbotic.log.info("x" * 250)
            for i in range(9):
                smartbotic.log.info("line", i)
            return 1
        """
    outcome = await run(pool, source)
    assert outcome.ok, outcome.error
    messages = [e["message"] for e in outcome.logs]
    assert len(messages) == 6
    assert messages[0] == "x" * 100 + "… [line cut: 250 bytes, limit 100]"
    assert messages[1:5] == ["line 0", "line 1", "line 2", "line 3"]
    assert messages[5] == "5 more log lines dropped (limit 5 per node run)"
    assert outcome.logs[5]["level"] == "warn"


async def test_logs_come_back_with_a_failure_too(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    smartbotic.log.info('before')\n    raise ValueError('no')\n")
    assert not outcome.ok
    assert outcome.error == f"ValueError: no ({SCRIPT_PATH}, line 3)"
    assert [e["message"] for e in outcome.logs] == ["before"]


# --- host calls ---------------------------------------------------------------------------------------


async def test_host_call_result_and_refusal_both_reach_the_script(pool: SandboxPool, host: FakeHost) -> None:
    source = """
        def execute(ctx):
            stat = smartbotic.fs.stat("/data/a.txt")
            try:
                smartbotic.fs.readFile("/etc/passwd")
                refused = None
            except Exception as e:
                refused = [str(e), isinstance(e, SmartboticError)]
            return {"stat": stat, "refused": refused}
        """
    outcome = await run(pool, source, host)
    assert outcome.ok, outcome.error
    assert outcome.output == {
        "stat": {"size": 3, "isFile": True},
        "refused": ["fs.readFile: /etc/passwd is outside the allowed roots", True],
    }
    assert host.calls == [("fs.stat", ["/data/a.txt"]), ("fs.readFile", ["/etc/passwd"])]


async def test_every_api_call_is_sent_with_positional_arguments(pool: SandboxPool, host: FakeHost) -> None:
    source = """
        def execute(ctx):
            fs, db = smartbotic.fs, smartbotic.db
            fs.writeFile("a.txt", "hello")
            fs.exists("a.txt"); fs.mkdir("d"); fs.unlink("a.txt"); fs.readdir(".")
            smartbotic.http.request("GET", "https://example.org", timeout=5)
            smartbotic.http.request("POST", "https://example.org", {"x": "1"}, body="b")
            smartbotic.storage.set("k", {"v": 1})
            got = smartbotic.storage.get("k")
            smartbotic.storage.delete("k")
            smartbotic.cursor.begin()
            smartbotic.cursor.stage({"id": 3})
            users = db.collection("users")
            users.insert({"name": "a"})
            users.update({"name": "a"}, {"$set": {"n": 1}})
            users.find()
            users.find({"n": 1}, limit=5)
            users.findOne({"name": "a"})
            users.delete({"name": "a"})
            return got
        """
    outcome = await run(pool, source, host)
    assert outcome.ok, outcome.error
    assert outcome.output == {"v": 1}
    assert host.calls == [
        ("fs.writeFile", ["a.txt", "hello"]),
        ("fs.exists", ["a.txt"]),
        ("fs.mkdir", ["d"]),
        ("fs.unlink", ["a.txt"]),
        ("fs.readdir", ["."]),
        ("http.request", ["GET", "https://example.org", None, None, 5]),
        ("http.request", ["POST", "https://example.org", {"x": "1"}, "b"]),
        ("storage.set", ["k", {"v": 1}]),
        ("storage.get", ["k"]),
        ("storage.delete", ["k"]),
        ("cursor.begin", []),
        ("cursor.stage", [{"id": 3}]),
        ("db.insert", ["users", {"name": "a"}]),
        ("db.update", ["users", {"name": "a"}, {"$set": {"n": 1}}]),
        ("db.find", ["users"]),
        ("db.find", ["users", {"n": 1}, None, 5]),
        ("db.findOne", ["users", {"name": "a"}]),
        ("db.delete", ["users", {"name": "a"}]),
    ]


async def test_a_runner_defect_in_a_host_call_is_an_error_in_the_script(pool: SandboxPool, host: FakeHost) -> None:
    outcome = await run(pool, "def execute(ctx):\n    return smartbotic.process.exec('ls')\n", host)
    assert not outcome.ok
    assert outcome.error == (
        f"SmartboticError: smartbotic.process.exec failed in the runner (RuntimeError) ({SCRIPT_PATH}, line 2)"
    )


async def test_non_json_call_arguments_are_refused_before_sending(pool: SandboxPool, host: FakeHost) -> None:
    source = """
        def execute(ctx):
            smartbotic.storage.set("k", {"tags": {1, 2}})
        """
    outcome = await run(pool, source, host)
    assert not outcome.ok
    assert outcome.error == (
        "TypeError: smartbotic.storage.set: arguments[1]['tags'] is of type set; "
        f"use dict, list, str, int, float, bool or None ({SCRIPT_PATH}, line 3)"
    )
    assert host.calls == []


async def test_collection_name_must_be_a_string(pool: SandboxPool, host: FakeHost) -> None:
    outcome = await run(pool, "def execute(ctx):\n    smartbotic.db.collection(3)\n", host)
    assert outcome.error == (
        f"TypeError: db.collection(name): name must be a non-empty string, got int ({SCRIPT_PATH}, line 2)"
    )


# --- errors -------------------------------------------------------------------------------------------


async def test_compile_error_names_the_file_and_line(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    x = 1\n    return x +\n")
    assert not outcome.ok
    assert (outcome.error or "").startswith(f"{SCRIPT_PATH}: Line 3: SyntaxError: invalid syntax")


async def test_restricted_construct_is_a_compile_error_with_its_line(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    return ctx._run_code\n")
    assert outcome.error == (
        f'{SCRIPT_PATH}: Line 2: "_run_code" is an invalid attribute name because it starts with "_".'
    )


async def test_script_exception_gives_type_message_and_line(pool: SandboxPool) -> None:
    source = """
        def helper(n):
            return 10 // n

        def execute(ctx):
            return helper(0)
        """
    outcome = await run(pool, source)
    assert outcome.error == f"ZeroDivisionError: integer division or modulo by zero ({SCRIPT_PATH}, line 3)"


async def test_system_exit_from_a_script_is_only_that_node_failing(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    raise SystemExit(3)\n")
    assert outcome.error == f"SystemExit: 3 ({SCRIPT_PATH}, line 2)"
    await assert_healthy(pool)


USE_JSON = "use dict, list, str, int, float, bool or None"


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ("{'tags': {1, 2}}", f"output['tags'] is of type set; {USE_JSON}"),
        ("[1, b'raw']", f"output[1] is of type bytes; {USE_JSON}"),
        ("{'f': execute}", f"output['f'] is of type function; {USE_JSON}"),
        ("{'x': [float('nan')]}", "output['x'][0] is nan, which JSON cannot represent"),
        ("float('inf')", "output is inf, which JSON cannot represent"),
        ("{(1, 2): 'tuple key'}", "output has a key of type tuple; keys must be strings"),
        ("10 ** 5000", "output is an integer with more than 4300 digits"),
    ],
)
async def test_output_that_is_not_json_fails_naming_what_and_where(
    pool: SandboxPool, expression: str, error: str
) -> None:
    outcome = await run(pool, f"def execute(ctx):\n    return {expression}\n")
    assert not outcome.ok
    assert outcome.error == f"node output is not JSON: {error}"


async def test_oversized_output_fails_with_both_sizes(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    return 'x' * 70000\n")
    assert not outcome.ok
    assert outcome.error == "node output is 70002 bytes of JSON, above the 65536-byte limit"


async def test_output_at_the_limit_passes(pool: SandboxPool) -> None:
    outcome = await run(pool, "def execute(ctx):\n    return 'x' * 65534\n")
    assert outcome.ok, outcome.error
    assert outcome.output == "x" * 65534


async def test_input_that_is_not_json_fails_without_using_a_worker(pool: SandboxPool) -> None:
    outcome = await pool.run(node(TRIVIAL_WITH_INPUT, {"input": {1, 2}}), FakeHost())
    assert not outcome.ok
    assert (outcome.error or "").startswith("the node's input is not JSON data:")


TRIVIAL_WITH_INPUT = "def execute(ctx):\n    return ctx.input\n"


# --- the pool itself ------------------------------------------------------------------------------------


async def test_pool_that_was_not_started_answers_with_an_error() -> None:
    outcome = await SandboxPool(SandboxLimits(), size=1).run(node(TRIVIAL_WITH_INPUT), FakeHost())
    assert outcome == NodeOutcome(ok=False, error="the sandbox pool is not started")


async def test_closed_pool_answers_with_an_error_and_its_workers_are_gone() -> None:
    sandbox = SandboxPool(SandboxLimits(), size=1)
    sandbox.start()
    pids = [w.process.pid for w in sandbox._workers]
    assert (await sandbox.run(node(TRIVIAL_WITH_INPUT, {"input": 5}), FakeHost())).output == 5
    await sandbox.close()
    outcome = await sandbox.run(NodeTask("x.py", TRIVIAL_WITH_INPUT, {}), FakeHost())
    assert outcome.error == "the sandbox pool is closed"
    for _ in range(100):
        if not any(os.path.exists(f"/proc/{pid}") for pid in pids):
            break
        await asyncio.sleep(0.02)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in pids)
