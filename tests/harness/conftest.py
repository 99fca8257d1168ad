"""Tests of the node fixture harness (``scripts/verify-node.py``, package ``scripts/verifynode``)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.integration.conftest import stack, stack_env  # noqa: F401  (the real-stack fixtures, for tests here)

SCRIPTS = ROOT / "scripts"
if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))  # scripts/ is not a package; the harness's modules live in scripts/verifynode

VERIFY_NODE = SCRIPTS / "verify-node.py"
FIXTURES = ROOT / "tests" / "nodes"


def run_harness(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``scripts/verify-node.py`` as a user runs it (it starts and stops its own stack)."""
    return subprocess.run(
        [sys.executable, str(VERIFY_NODE), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture
def write_fixture(tmp_path: Path) -> Callable[..., Path]:
    """Write a fixture file into a tmp dir: ``write_fixture(name, node, workflow, steps)``."""

    def write(name: str, node: str | list[str], workflow: dict[str, Any], steps: list[dict[str, Any]]) -> Path:
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps({"name": name, "node": node, "workflow": workflow, "steps": steps}, indent=1))
        return path

    return write
