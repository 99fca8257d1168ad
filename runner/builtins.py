"""Built-in example workflows (``examples/*.json``), seeded by slug at start-up when missing.

A built-in's id is its slug and never changes; ``reset-builtin`` publishes the
shipped definition again as a new version.
"""

from __future__ import annotations

import json
import logging
from functools import cache
from pathlib import Path
from typing import Any

from .engine.model import JSON
from .store.workflows import VersionConflict, WorkflowStore, definition_of

log = logging.getLogger(__name__)
EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@cache
def builtins() -> dict[str, dict[str, JSON]]:
    found: dict[str, dict[str, JSON]] = {}
    for path in sorted(EXAMPLES.glob("*.json")):
        body = json.loads(path.read_text())
        found[body["id"]] = body
    return found


def builtin_definition(slug: str) -> dict[str, JSON] | None:
    body = builtins().get(slug)
    return definition_of(body) if body else None


async def seed_builtins(store: WorkflowStore, validate: Any, now_ms: int) -> list[str]:
    """Store every shipped example that is missing. Safe when several runners start at once."""
    seeded = []
    for slug, body in builtins().items():
        if await store.get(slug) is not None:
            continue
        definition = definition_of(body)
        try:
            validate(definition)
            await store.publish(
                slug,
                definition,
                previous_version=0,
                active=bool(body.get("active", True)),
                change_note="built-in example",
                saved_by="runner",
                now_ms=now_ms,
                builtin_slug=slug,
            )
            seeded.append(slug)
        except VersionConflict:
            continue  # another runner seeded it first
        except Exception as exc:
            log.error("built-in workflow %s was not seeded: %s", slug, exc)
    return seeded
