"""Every node type in nodes/ has at least one fixture in tests/nodes/, and every fixture file is well-formed."""

from __future__ import annotations

from collections import Counter

from verifynode.fixture import discover, load

from .conftest import FIXTURES, ROOT


def node_types() -> set[str]:
    nodes = ROOT / "nodes"
    scripts = [p for p in nodes.rglob("*.py") if not any(part.startswith("_") for part in p.relative_to(nodes).parts)]
    return {p.relative_to(nodes).with_suffix("").as_posix() for p in scripts}


def test_every_node_type_has_a_fixture() -> None:
    covered = {t for path in discover(FIXTURES) for t in load(path).nodes}
    missing = sorted(node_types() - covered)
    assert not missing, f"node types without a fixture in tests/nodes/: {', '.join(missing)}"


def test_fixtures_load_and_have_unique_names() -> None:
    fixtures = [load(path) for path in discover(FIXTURES)]  # load() raises FixtureError naming the problem
    assert fixtures
    twice = [name for name, n in Counter(f.name for f in fixtures).items() if n > 1]
    assert not twice, f"fixture names used more than once: {twice}"


def test_fixture_names_match_their_file_names() -> None:
    wrong = [(p.name, load(p).name) for p in discover(FIXTURES) if load(p).name != p.stem]
    assert not wrong, f"name a fixture after its file (for `verify-node.py <name>`): {wrong}"
