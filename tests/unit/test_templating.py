"""``{{ }}`` templating exactly as DESIGN §3 specifies."""

from __future__ import annotations

from typing import Any

import pytest

from runner.engine.templating import TemplateError, parse_path, render

SCOPE: dict[str, Any] = {
    "input": {"body": {"amount": 12.5, "items": [{"n": "a"}, {"n": "b"}], "flag": False, "none": None}},
    "steps": {"my-node": {"list": [1, 2, 3], "obj": {"k": "v"}}},
    "variables": {"region": "eu"},
    "execution": {"id": "e1", "workflowId": "w", "startedAt": 5},
    "workflow": {"id": "w", "name": "W"},
    "now": "2026-01-01T00:00:00.000Z",
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{{input.body.amount}}", 12.5),  # whole value keeps its JSON type
        ("{{ input.body.flag }}", False),
        ("{{steps.my-node.list}}", [1, 2, 3]),
        ("{{steps.my-node.obj}}", {"k": "v"}),
        ("{{input.body.items[1].n}}", "b"),
        ("{{input.body.items[-1].n}}", "b"),
        ("{{input.body.items[9].n}}", None),  # missing path → null
        ("{{input.body.none.deeper}}", None),
        ("{{ variables.region }}", "eu"),
        ("{{execution.id}}", "e1"),
        ("{{now}}", "2026-01-01T00:00:00.000Z"),
        ("Refund {{input.body.amount}} EUR", "Refund 12.5 EUR"),  # parts render into a string
        ("[{{input.body.missing}}]", "[]"),
        ("{{steps.my-node.list}}!", "[1,2,3]!"),
        ("{{input.body.flag}}/{{input.body.none}}", "false/"),
        ("no template", "no template"),
    ],
)
def test_render(template: str, expected: Any) -> None:
    assert render(template, SCOPE) == expected


def test_render_walks_nested_config_but_not_keys_and_skips_marked_fields() -> None:
    config = {"{{input}}": ["{{execution.id}}", {"x": "{{workflow.name}}"}], "code": "print('{{ raw }}')"}
    out = render(config, SCOPE, skip_keys=frozenset({"code"}))
    assert out == {"{{input}}": ["e1", {"x": "W"}], "code": "print('{{ raw }}')"}


@pytest.mark.parametrize("expr", ["secrets.key", "env.HOME", "__class__"])
def test_unknown_root_is_an_error_naming_it(expr: str) -> None:
    with pytest.raises(TemplateError, match="unknown root"):
        render("{{" + expr + "}}", SCOPE)


def test_paths_are_parsed_into_keys_and_indexes() -> None:
    assert parse_path("steps.a-b.items[0][2].name") == ["steps", "a-b", "items", 0, 2, "name"]
    with pytest.raises(TemplateError):
        parse_path("input..x")
