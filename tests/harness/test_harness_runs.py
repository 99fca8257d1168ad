"""``scripts/verify-node.py`` end to end, on a stack it starts: wrong fixtures FAIL with a message naming the
fixture, the step, the node and what was expected and found, with a non-zero exit; a good one passes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.integration.conftest import Stack

from .conftest import FIXTURES, run_harness

RESPOND = {
    "nodes": [
        {"id": "hook", "type": "triggers/webhook", "config": {"path": "created"}},
        {"id": "reply", "type": "core/respond-to-webhook", "config": {"status": 201, "body": {"ok": True}}},
    ],
    "connections": [{"from": "hook", "to": "reply"}],
}
APPROVAL = {
    "nodes": [
        {"id": "start", "type": "triggers/manual"},
        {"id": "ask", "type": "core/wait-for-approval", "config": {"reason": "ok?"}},
        {"id": "ok", "type": "core/set", "config": {"values": {"refunded": True}, "keepInput": False}},
    ],
    "connections": [{"from": "start", "to": "ask"}, {"from": "ask", "output": "approved", "to": "ok"}],
}


def lines_of(stdout: str) -> dict[str, str]:
    """Fixture name → its PASS/FAIL line."""
    out = {}
    for line in stdout.splitlines():
        verdict, _, rest = line.partition(" ")
        if verdict in ("PASS", "FAIL"):
            out[rest.split(":", 1)[0]] = line
    return out


def test_wrong_fixtures_fail_naming_fixture_step_node_expected_and_got(write_fixture: Callable[..., Path]) -> None:
    wrong_status = write_fixture(
        "respond-status",
        ["triggers/webhook", "core/respond-to-webhook"],
        RESPOND,
        [{"step": "http", "path": "created", "json": {}, "expect": {"status": 200, "body": {"ok": True}}}],
    )
    never_resumed = write_fixture(
        "approval-never-answered",
        "core/wait-for-approval",
        APPROVAL,
        [
            {"step": "execute", "input": {}},
            {"step": "wait", "for": "status", "status": "completed", "timeout": 1.5},
        ],
    )
    wrong_node = write_fixture(
        "approval-wrong-node",
        "core/wait-for-approval",
        APPROVAL,
        [
            {"step": "execute", "input": {}},
            {"step": "resume", "approved": True},
            {"step": "expect", "status": "completed", "nodes": {"ok": {"output": {"refunded": False}}}},
        ],
    )
    result = run_harness(str(wrong_status), str(never_resumed), str(wrong_node))
    assert result.returncode != 0, result.stdout + result.stderr
    lines = lines_of(result.stdout)
    assert lines["respond-status"] == "FAIL respond-status: step 1 (http): status: expected 200, got 201"
    assert lines["approval-never-answered"] == (
        'FAIL approval-never-answered: step 2 (wait): status: expected "completed" within 1.5 s, got "waiting"'
    )
    assert lines["approval-wrong-node"] == (
        "FAIL approval-wrong-node: step 3 (expect): node ok: output.refunded: expected false, got true"
    )
    assert result.stdout.splitlines()[-1] == "0 passed, 3 failed"


def test_a_good_fixture_passes_and_the_tally_says_so(write_fixture: Callable[..., Path]) -> None:
    good = write_fixture(
        "respond-created",
        ["triggers/webhook", "core/respond-to-webhook"],
        RESPOND,
        [
            {"step": "http", "path": "created", "json": {}, "expect": {"status": 201, "body": {"ok": True}}},
            {"step": "latest"},
            {"step": "expect", "status": "completed", "nodes": {"reply": {"status": "completed"}}},
        ],
    )
    result = run_harness(str(good))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["PASS respond-created", "1 passed, 0 failed"]


def test_a_malformed_fixture_fails_without_hiding_the_others(tmp_path: Path) -> None:
    (tmp_path / "typo.json").write_text('{"name": "typo", "node": "core/noop", "workflow": {"nodes": []}, "steps": []}')
    result = run_harness(str(tmp_path / "typo.json"))
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("FAIL typo: fixture error in ")
    assert result.stdout.splitlines()[-1] == "0 passed, 1 failed"


def test_an_unknown_fixture_name_is_a_usage_error() -> None:
    result = run_harness("no-such-fixture")
    assert result.returncode == 2
    assert "no fixture file or fixture named 'no-such-fixture'" in result.stderr


def test_every_fixture_in_tests_nodes_passes() -> None:
    result = run_harness(str(FIXTURES), timeout=170)
    failures = [line for line in result.stdout.splitlines() if line.startswith("FAIL")]
    assert result.returncode == 0 and not failures, "\n".join(failures) + result.stderr[-3000:]
    assert result.stdout.splitlines()[-1].endswith(" passed, 0 failed")


def test_runs_against_a_given_stack_with_db_and_fs_steps(stack: Stack, write_fixture: Callable[..., Path]) -> None:
    code = (
        "def main(input):\n"
        "    row = smartbotic.db.collection('{{collection:prices}}').findOne({'sku': 'A1'})\n"
        "    smartbotic.fs.writeFile('{{fixtureDir}}/out.txt', str(row['price'] * 2))\n"
        "    return {'double': row['price'] * 2}"
    )
    good = write_fixture(
        "given-stack",
        "core/code",
        {
            "nodes": [
                {"id": "start", "type": "triggers/manual"},
                {"id": "c", "type": "core/code", "config": {"code": code}},
            ],
            "connections": [{"from": "start", "to": "c"}],
        },
        [
            {"step": "db", "op": "insert", "collection": "prices", "document": {"sku": "A1", "price": 4}},
            {"step": "execute", "input": {}},
            {"step": "expect", "status": "completed", "output": {"double": 8}},
            {"step": "fs", "op": "check", "path": "out.txt", "content": "8"},
        ],
    )
    files = stack.tmp / "data" / "files"
    result = run_harness(
        "--url", stack.http_url, "--grpc", stack.grpc_target, "--mongodb-uri", stack.mongo_uri,
        "--database", stack.db_name, "--fs-root", str(files), str(good),
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["PASS given-stack", "1 passed, 0 failed"]
    assert "started a stack" not in result.stderr
