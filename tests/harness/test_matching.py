"""The harness's comparison of expected and actual values: exact by default, predicates where asked."""

from __future__ import annotations

from typing import Any

import pytest
from verifynode.match import FixtureError, check_expected, mismatches

PASSING: list[tuple[Any, Any]] = [
    ({"a": 1, "b": [1, 2]}, {"a": 1, "b": [1, 2]}),
    (5, 5.0),
    ({"$partial": {"a": 1}}, {"a": 1, "b": 2}),
    ({"a": {"$exists": False}, "b": 1}, {"b": 1}),
    ({"a": {"$exists": True}}, {"a": None}),
    ({"$contains": "boom"}, "ValueError: boom"),
    ({"$contains": {"$partial": {"id": 2}}}, [{"id": 1}, {"id": 2, "x": 0}]),
    ({"$contains": "key"}, {"key": 1}),
    ({"$matches": "^[0-9a-f]{4}$"}, "beef"),
    ({"$length": 3}, [1, 2, 3]),
    ({"$length": {"$gte": 2}}, "abc"),
    ({"$gt": 1}, 2),
    ({"$lte": "2026-01-02"}, "2026-01-01"),
    ({"$type": "integer"}, 3),
    ({"$type": ["string", "null"]}, None),
    ({"$ne": "failed"}, "completed"),
    ({"$not": {"$contains": "Traceback"}}, "ValueError: x"),
    ({"$eq": {"$partial": 1}}, {"$partial": 1}),
    ({"x": [{"$type": "string", "$matches": "^a"}]}, {"x": ["abc"]}),
]

FAILING: list[tuple[Any, Any, str]] = [
    ({"a": 1}, {"a": 1, "b": 2}, 'value: expected no other fields, got "b": 2 (use $partial for a subset)'),
    ({"a": {"b": 1}}, {"a": {"b": 2}}, "a.b: expected 1, got 2"),
    ([1, 2], [1, 2, 3], "value: expected 2 items [1,2], got [1,2,3]"),
    ({"x": [1, {"y": True}]}, {"x": [1, {"y": 1}]}, "x[1].y: expected true, got 1"),
    (1, True, "value: expected 1, got true"),
    ({"a": 1}, {}, "a: expected 1, got nothing (no such field)"),
    ({"a": {"$exists": False}}, {"a": None}, "a: expected no such field, got null"),
    ({"$partial": {"a": 1}}, {"a": 2, "b": 3}, "a: expected 1, got 2"),
    ({"$contains": "boom"}, "bang", 'value: expected something containing "boom", got "bang"'),
    ({"$matches": "^a$"}, 1, "value: expected a string matching /^a$/, got 1"),
    ({"$length": 2}, [1], "value: expected length 2, got [1]"),
    ({"$gt": 1}, "2", 'value: expected a value gt 1, got "2"'),
    ({"$type": "integer"}, 1.5, "value: expected a value of type integer, got 1.5"),
    ({"$type": "number"}, False, "value: expected a value of type number, got false"),
    ({"$ne": 1}, 1.0, "value: expected anything but 1, got 1.0"),
    ({"$not": {"$exists": True}}, 1, 'value: expected something not matching {"$exists":true}, got 1'),
]


@pytest.mark.parametrize(("expected", "got"), PASSING)
def test_matching_values_pass(expected: Any, got: Any) -> None:
    assert mismatches(expected, got) == []


@pytest.mark.parametrize(("expected", "got", "message"), FAILING)
def test_differences_are_named_with_path_expected_and_got(expected: Any, got: Any, message: str) -> None:
    assert mismatches(expected, got) == [message]


def test_every_difference_is_reported_not_just_the_first() -> None:
    found = mismatches({"status": "completed", "output": {"n": 1}}, {"status": "failed", "output": {"n": 2}})
    assert found == ['status: expected "completed", got "failed"', "output.n: expected 1, got 2"]


@pytest.mark.parametrize(
    "expected",
    [
        {"$contain": "typo"},
        {"$exists": "yes"},
        {"$matches": "("},
        {"$type": "text"},
        {"$gt": [1]},
        {"$partial": [1]},
        {"$length": {"$bogus": 1}},
        {"a": 1, "$partial": {}},
        {"nested": [{"$nope": 1}]},
    ],
)
def test_malformed_expectations_are_fixture_errors_before_anything_runs(expected: Any) -> None:
    with pytest.raises(FixtureError):
        check_expected(expected)
