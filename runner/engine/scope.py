"""What templates see: ``steps.<nodeId>`` through loop iterations, and ISO times."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import UTC, datetime

from .model import JSON, NodeResult


class StepsView(Mapping[str, JSON]):
    """``steps.<nodeId>`` for templating: the current loop iteration first, then outer scopes."""

    def __init__(self, results: Mapping[str, NodeResult], prefixes: list[str], loops: Mapping[str, JSON]) -> None:
        self._results = results
        self._prefixes = prefixes
        self._loops = loops

    def __getitem__(self, node_id: str) -> JSON:
        if node_id in self._loops:
            return self._loops[node_id]
        for prefix in self._prefixes:
            res = self._results.get(prefix + node_id)
            if res is not None and res.status in ("completed", "failed"):
                return res.output
        raise KeyError(node_id)

    def __iter__(self) -> Iterator[str]:
        return iter({k.rsplit("/", 1)[-1] for k in self._results})

    def __len__(self) -> int:
        return len(self._results)


def iso_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
