"""The runner's side of every ``smartbotic.*`` call: :class:`HostApi`.

A call arrives as ``(method, args)``; the answer is plain JSON data or a
:class:`HostApiError` whose message goes back to the script. Nothing else
leaves :meth:`HostApi.call`: an unexpected exception is logged here with its
traceback and becomes a short HostApiError.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from runner.hostapi.cursor import CursorCalls
from runner.hostapi.data import NodeDataCalls
from runner.hostapi.fs import FileSystem
from runner.hostapi.http import DEFAULT_RESPONSE_CAP, HttpClient
from runner.hostapi.process import DEFAULT_OUTPUT_CAP, ProcessRunner
from runner.hostapi.scope import CallScope
from runner.sandbox.types import JSON, HostApiError, HostCall
from runner.settings import Settings
from runner.store.cursors import CursorStore
from runner.store.nodedata import NodeDataStore

log = logging.getLogger(__name__)

ScopedHandler = Callable[[CallScope, list[JSON]], Awaitable[JSON]]


def _unscoped(handler: Callable[[list[JSON]], Awaitable[JSON]]) -> ScopedHandler:
    async def call(scope: CallScope, args: list[JSON]) -> JSON:
        return await handler(args)

    return call


class HostApi:
    """Answers ``smartbotic.*`` calls under the runner's policy (fs roots, exec switch, caps)."""

    def __init__(
        self,
        settings: Settings,
        node_data: NodeDataStore,
        *,
        exec_output_cap: int = DEFAULT_OUTPUT_CAP,
        http_response_cap: int = DEFAULT_RESPONSE_CAP,
        cursors: CursorStore | None = None,
    ) -> None:
        roots = settings.fs_roots
        first_root = next((r for r in roots if r != "*"), None)
        self._http = HttpClient(response_cap=http_response_cap)
        unscoped = {
            **FileSystem(roots, max_read_bytes=settings.max_output_bytes).handlers(),
            **ProcessRunner(allowed=settings.allow_exec, cwd=first_root, output_cap=exec_output_cap).handlers(),
            **self._http.handlers(),
        }
        self._handlers: dict[str, ScopedHandler] = {
            **{name: _unscoped(handler) for name, handler in unscoped.items()},
            **NodeDataCalls(node_data).handlers(),
            **(CursorCalls(cursors).handlers() if cursors is not None else {}),
        }

    @property
    def methods(self) -> list[str]:
        """Every call this API answers, sorted."""
        return sorted(self._handlers)

    async def call(self, scope: CallScope, method: str, args: list[JSON]) -> JSON:
        handler = self._handlers.get(method) if isinstance(method, str) else None
        if handler is None:
            raise HostApiError(f"unknown call smartbotic.{method}; known calls: {', '.join(self.methods)}")
        if not isinstance(args, list):
            raise HostApiError(f"{method}: arguments must be a list, got {type(args).__name__}")
        try:
            return await handler(scope, args)
        except HostApiError:
            raise
        except Exception as exc:
            log.exception(
                "smartbotic.%s failed unexpectedly (workflow %s, node %s, execution %s)",
                method,
                scope.workflow_id,
                scope.node_id,
                scope.execution_id,
            )
            raise HostApiError(
                f"{method} failed in the runner ({type(exc).__name__}); the runner's log has the details"
            ) from None

    async def close(self) -> None:
        """Release the shared HTTP session."""
        await self._http.close()


def host_call_for(api: HostApi, scope: CallScope) -> HostCall:
    """The :data:`HostCall` the sandbox hands one node run."""

    async def host_call(method: str, args: list[JSON]) -> JSON:
        return await api.call(scope, method, args)

    return host_call
