"""``smartbotic.cursor``: the polling triggers' cursor, scoped to workflow id + node id.

| call | args |
| --- | --- |
| ``cursor.begin`` | ``[]`` → ``{acquired, initialized, cursor, heldBy}`` |
| ``cursor.stage`` | ``[value]`` → true; committed when the execution completes or waits |

See :mod:`runner.store.cursors` for the rules.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from runner.hostapi.args import take
from runner.hostapi.scope import CallScope
from runner.sandbox.types import JSON, HostApiError
from runner.store.cursors import CursorStore

ScopedHandler = Callable[[CallScope, list[JSON]], Awaitable[JSON]]


class CursorCalls:
    def __init__(self, store: CursorStore) -> None:
        self._store = store

    def handlers(self) -> dict[str, ScopedHandler]:
        return {"cursor.begin": self.begin, "cursor.stage": self.stage}

    async def begin(self, scope: CallScope, args: list[JSON]) -> JSON:
        take("cursor.begin", args, ())
        return await self._store.begin(scope.workflow_id, scope.node_id, scope.execution_id, int(time.time() * 1000))

    async def stage(self, scope: CallScope, args: list[JSON]) -> JSON:
        (value,) = take("cursor.stage", args, ("value",))
        if not await self._store.stage(scope.workflow_id, scope.node_id, scope.execution_id, value):
            raise HostApiError("cursor.stage: call cursor.begin() first; this poll does not hold the cursor")
        return True
