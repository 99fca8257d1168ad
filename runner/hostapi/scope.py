"""Who is calling: the workflow, node and execution a ``smartbotic.*`` call comes from."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallScope:
    """The node run a call belongs to; storage is keyed by workflow id + node id."""

    workflow_id: str
    node_id: str
    execution_id: str
