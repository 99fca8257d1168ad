"""Tell an approver that an execution waits: POST to the approval node's ``notifyUrl``.

The POST carries the token in its body; it is the one place besides the
starter's reply where the plaintext token leaves the runner.
"""

from __future__ import annotations

import logging

import aiohttp

from .engine.model import ExecutionState

log = logging.getLogger(__name__)


class ApprovalNotifier:
    def __init__(self, public_url: str, *, timeout_s: float = 10.0) -> None:
        self.public_url = public_url
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)

    async def __call__(self, state: ExecutionState, token: str | None) -> None:
        pause = state.pause
        if state.status != "waiting" or pause is None or pause.kind != "approval" or not pause.notifyUrl or not token:
            return
        body = {
            "executionId": state.id,
            "token": token,
            "resumeUrl": f"{self.public_url}/api/v1/executions/{state.id}/resume",
            "reason": pause.reason,
            "fields": pause.fields,
            "expiresAt": pause.expiresAt,
        }
        try:
            async with aiohttp.ClientSession(timeout=self.timeout) as session:
                async with session.post(pause.notifyUrl, json=body) as resp:
                    if resp.status >= 300:
                        log.warning("notifyUrl %s answered %s for execution %s", pause.notifyUrl, resp.status, state.id)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("could not notify %s for execution %s: %s", pause.notifyUrl, state.id, exc)
