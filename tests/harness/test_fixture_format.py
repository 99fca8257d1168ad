"""Fixture files are checked before anything runs, so a typo cannot make a fixture assert nothing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from verifynode.fixture import fill, load
from verifynode.match import FixtureError

MANUAL = {"nodes": [{"id": "start", "type": "triggers/manual"}], "connections": []}


@pytest.mark.parametrize(
    ("node", "steps", "problem"),
    [
        ("triggers/manual", [], "'steps' must be a non-empty list"),
        ("core/noop", [{"step": "execute"}], "'node' names core/noop but the workflow has no node of that type"),
        ("triggers/manual", [{"step": "exec"}], "step 1: 'step' must be one of"),
        ("triggers/manual", [{"step": "execute"}, {"step": "expect"}], "step 2 (expect): says nothing to check"),
        ("triggers/manual", [{"step": "expect", "stauts": "completed"}], "step 1 (expect): unknown field(s) stauts"),
        ("triggers/manual", [{"step": "http", "path": "x", "expect": {"body": 1}}], "needs the HTTP 'status'"),
        ("triggers/manual", [{"step": "expect", "output": {"$contain": 1}}], "unknown predicate '$contain'"),
        ("triggers/manual", [{"step": "wait", "for": "status"}], "step 1 (wait): wait takes"),
        ("triggers/manual", [{"step": "fs", "op": "create", "path": "../x", "content": ""}], "without '..'"),
        ("triggers/manual", [{"step": "db", "op": "insert", "collection": "c"}], "insert takes 'document'"),
    ],
)
def test_malformed_fixtures_are_refused_with_the_step_and_problem(
    write_fixture: Callable[..., Path], node: str, steps: list[dict[str, Any]], problem: str
) -> None:
    path = write_fixture("broken", node, MANUAL, steps)
    with pytest.raises(FixtureError) as err:
        load(path)
    assert problem in str(err.value)


def test_placeholders_are_filled_in_every_string_and_others_left_alone() -> None:
    values = {"fixture": "f-1", "fixtureDir": "/data/files/verify-node/f-1", "collection:orders": "f_1_orders"}
    filled = fill(
        {"a": "{{fixtureDir}}/in.txt", "b": ["{{ fixture }}", "{{collection:orders}}"], "c": "{{input.x}}", "d": 1},
        values.get,
    )
    assert filled == {"a": "/data/files/verify-node/f-1/in.txt", "b": ["f-1", "f_1_orders"], "c": "{{input.x}}", "d": 1}
