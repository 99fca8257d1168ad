"""The walk: run a graph's nodes in order over one ExecutionState.

Checkpoint by (execution, key): before a node runs, its stored result is
looked up and, when settled, replayed instead of run. Resume, crash recovery
and "completed nodes never run again" all follow from that one rule.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .calls import EngineLimits, NodeCall, NodeOutcomeLike, RunNode, WalkHooks
from .graph import Graph, config_errors
from .markers import MarkerError, Markers, output_size, split_markers
from .model import JSON, ExecutionState, NodeResult, NodeType, Pause, ResumeAnswer, RetryPolicy
from .scope import StepsView, iso_ms
from .templating import TemplateError, render
from .tokens import hash_token, new_token

log = logging.getLogger(__name__)

__all__ = ["EngineLimits", "NodeCall", "RunNode", "WalkHooks", "Walker", "hash_token", "new_token"]


@dataclass
class _Answered:
    ok: bool
    output: JSON
    error: str | None = None
    logs: list[dict[str, JSON]] = field(default_factory=list)


class _Stop(Exception):
    pass


class _Paused(_Stop):
    pass


class _Failed(_Stop):
    def __init__(self, node_id: str, message: str) -> None:
        super().__init__(message)
        self.node_id = node_id
        self.message = message


@dataclass
class _Attempt:
    result: NodeResult
    markers: Markers | None = None


@dataclass
class Walker:
    graph: Graph
    types: Mapping[str, NodeType]
    run_node: RunNode
    hooks: WalkHooks
    limits: EngineLimits = field(default_factory=EngineLimits)
    issued_token: str | None = None
    """The plaintext token of a pause made in this walk; handed to the starter once, never stored."""

    async def run(self, state: ExecutionState, resume: ResumeAnswer | None = None) -> ExecutionState:
        self._state = state
        self._resume = resume
        self._started_ms = self.hooks.now_ms()
        self._loop_vars: dict[str, JSON] = {}
        state.status = "running"
        state.pause = None
        try:
            await self._walk_scope(None, "", None, [""])
        except _Paused:
            state.status = "waiting"
        except _Failed as failure:
            state.status = "failed"
            state.error = failure.message
            state.errorNodeId = failure.node_id
        else:
            state.status = "completed"
            state.output = state.results[state.lastKey].output if state.lastKey else None
        state.variables["activeMs"] = self._active_ms()
        return state

    def _active_ms(self) -> int:
        return int(self._state.variables.get("activeMs", 0)) + self.hooks.now_ms() - self._started_ms

    # -- scopes ---------------------------------------------------------------------------------

    async def _walk_scope(self, loop_id: str | None, prefix: str, item: JSON, prefixes: list[str]) -> str | None:
        """Walk one scope (the top level or one loop iteration); returns the key of its last node run."""
        last: str | None = None
        for node_id in self.graph.scope_order(loop_id):
            key = prefix + node_id
            node_input, active = self._input_of(node_id, loop_id, prefix, item)
            if not active:
                await self._settle(key, NodeResult("skipped", nodeId=node_id, type=self.graph.node_type(node_id)))
                continue
            result = await self._visit(node_id, key, node_input, prefixes)
            if result.status in ("completed", "failed"):
                last = key
                self._state.lastKey = key
        return last

    def _input_of(self, node_id: str, loop_id: str | None, prefix: str, item: JSON) -> tuple[JSON, bool]:
        incoming = self.graph.incoming.get(node_id, [])
        if not incoming:
            node = self.graph.nodes[node_id]
            if self.types[str(node["type"])].is_trigger and node_id != self._trigger_id():
                return None, False
            return self._state.input, True
        active: dict[str, JSON] = {}
        for conn in incoming:
            if conn.source == loop_id and conn.output == "body":
                active[conn.source] = item
                continue
            src = self._state.results.get(prefix + conn.source)
            if src is None or src.status not in ("completed", "failed", "skipped"):
                continue
            if src.status == "skipped" and not src.disabled:
                continue
            if (src.branch or "main") == conn.output:
                active[conn.source] = src.output
        if not active:
            return None, False
        if len(active) == 1:
            return next(iter(active.values())), True
        return active, True

    def _trigger_id(self) -> str | None:
        if self._state.triggerNodeId is None:
            for node_id in self.graph.order:
                if self.types[self.graph.node_type(node_id)].is_trigger:
                    self._state.triggerNodeId = node_id
                    break
        return self._state.triggerNodeId

    # -- one node ---------------------------------------------------------------------------------

    async def _visit(self, node_id: str, key: str, node_input: JSON, prefixes: list[str]) -> NodeResult:
        stored = self._state.results.get(key)
        node = self.graph.nodes[node_id]
        nt = self.types[str(node["type"])]
        if stored is not None and stored.status in ("completed", "skipped"):
            return stored
        if stored is not None and stored.status == "failed" and (stored.continued or stored.branch == "error"):
            return stored
        if node.get("disabled"):
            result = NodeResult("skipped", output=node_input, nodeId=node_id, type=nt.type, disabled=True)
            await self._settle(key, result)
            return result
        if stored is not None and stored.status == "running" and stored.items is not None:
            return await self._run_loop(node_id, key, stored.items, stored, prefixes)
        entry, answer, attempts = "execute", None, 0
        if stored is not None and stored.status == "waiting":
            if self._resume is None or self._resume.key != key:
                raise _Paused()  # still waiting for something else; keep the stored pause
            if stored.wakeAt is not None:  # a parked retry: try again
                attempts = stored.attempts
            else:
                entry, answer = "resume", self._answer_for(nt)
        attempt = await self._run_with_retry(node_id, key, nt, node_input, prefixes, entry, answer, attempts)
        if attempt.markers is not None and attempt.markers.loop_items is not None and nt.type == "core/loop":
            return await self._run_loop(node_id, key, attempt.markers.loop_items, attempt.result, prefixes)
        return attempt.result

    def _answer_for(self, nt: NodeType) -> JSON:
        resume = self._resume
        assert resume is not None
        if nt.has_resume:
            return {
                "payload": resume.payload,
                "by": resume.by,
                "at": resume.at,
                "timeout": resume.timeout,
                "expiresAt": resume.expiresAt,
                "expiresAtIso": iso_ms(resume.expiresAt) if resume.expiresAt else None,
            }
        return resume.payload

    async def _run_with_retry(
        self,
        node_id: str,
        key: str,
        nt: NodeType,
        node_input: JSON,
        prefixes: list[str],
        entry: str,
        answer: JSON,
        attempts: int,
    ) -> _Attempt:
        node = self.graph.nodes[node_id]
        policy = RetryPolicy.from_doc(node.get("retry") or nt.default_retry)
        started = self.hooks.now_ms()
        while True:
            self._guard(node_id)
            attempts += 1
            self._state.steps += 1
            attempt = await self._attempt(node_id, key, nt, node_input, prefixes, entry, answer)
            attempt.result.attempts = attempts
            attempt.result.startedAt = started
            if attempt.result.status != "failed":
                break
            if entry == "resume" or attempts > policy.limit or attempt.result.error == "config":
                break
            wait = policy.delay_before(attempts)
            if wait > self.limits.park_retry_after_seconds:
                await self._park_retry(node_id, key, attempt.result, wait)
            log.info("node %s failed (attempt %d), retrying in %.1fs: %s", key, attempts, wait, attempt.result.error)
            await self.hooks.sleep(wait)
        return await self._finish(node_id, key, nt, attempt)

    async def _park_retry(self, node_id: str, key: str, failed: NodeResult, wait: float) -> None:
        wake = self.hooks.now_ms() + int(wait * 1000)
        failed.status = "waiting"
        failed.wakeAt = wake
        self._state.pause = Pause(
            nodeId=node_id,
            key=key,
            kind="retry",
            reason=f"retry {failed.attempts + 1} after: {failed.error}",
            expiresAt=wake,
            waitingSince=self.hooks.now_ms(),
        )
        await self._settle(key, failed)
        raise _Paused()

    async def _attempt(
        self, node_id: str, key: str, nt: NodeType, node_input: JSON, prefixes: list[str], entry: str, answer: JSON
    ) -> _Attempt:
        node = self.graph.nodes[node_id]
        base = NodeResult("failed", nodeId=node_id, type=nt.type)
        config = node.get("config") or {}
        if self.graph.checked.get(node_id) != nt.source:  # templated, or its script changed since
            try:
                config = render(config, self._scope(prefixes), skip_keys=nt.no_template_keys)
            except TemplateError as exc:
                base.error = f"node {node_id!r}: {exc}"
                return _Attempt(base)
            problems = config_errors(nt, config, allow_templates=False)
        else:
            problems = []
        if problems:
            base.error = f"node {node_id!r} config is invalid: {'; '.join(problems)}"
            return _Attempt(base)
        call = NodeCall(
            execution_id=self._state.id,
            workflow_id=self._state.workflow_id,
            node_id=node_id,
            key=key,
            node_type=nt,
            config=config,
            input=node_input,
            execution=self._execution_view(),
            entry=entry,
            answer=answer,
            timeout_seconds=node.get("timeoutSeconds"),
        )
        if entry == "resume" and not nt.has_resume:  # no resume(ctx, answer): the answer is the output
            outcome: NodeOutcomeLike = _Answered(True, answer)
        else:
            outcome = await self.run_node(call)
        base.logs = list(outcome.logs)
        base.finishedAt = self.hooks.now_ms()
        if not outcome.ok:
            base.error = outcome.error or "node failed without a message"
            return _Attempt(base)
        try:
            markers = split_markers(outcome.output, nt.outputs)
        except MarkerError as exc:
            base.error = f"node {node_id!r}: {exc}"
            return _Attempt(base)
        size = output_size(markers.output)
        if size > self.limits.max_output_bytes:
            base.error = (
                f"node {node_id!r} output is {size} bytes, over the limit of {self.limits.max_output_bytes} "
                f"bytes (SMARTBOTIC_MAX_OUTPUT_BYTES)"
            )
            return _Attempt(base)
        base.status = "completed"
        base.output = markers.output
        base.branch = markers.branch
        return _Attempt(base, markers)

    async def _finish(self, node_id: str, key: str, nt: NodeType, attempt: _Attempt) -> _Attempt:
        result, markers = attempt.result, attempt.markers
        if result.status == "failed":
            on_error = self.graph.nodes[node_id].get("onError", "fail")
            if on_error == "fail":
                await self._settle(key, result)
                raise _Failed(node_id, result.error or "node failed")
            result.output = {"error": result.error}
            if on_error == "route":
                result.branch = "error"
            else:
                result.continued = True
            await self._settle(key, result)
            return attempt
        assert markers is not None
        if markers.webhook_response is not None:
            previous = self._state.webhookResponseNode
            if previous is not None and previous != key:
                warning = f"nodes {previous!r} and {key!r} both set the webhook response; {key!r} (the last) wins"
                log.warning("execution %s: %s", self._state.id, warning)
                self._state.warnings.append(warning)
            self._state.webhookResponse = markers.webhook_response
            self._state.webhookResponseNode = key
        if markers.pause is not None:
            await self._pause(node_id, key, nt, result, markers.pause)
        if markers.loop_items is not None and nt.type == "core/loop":
            return attempt  # the loop settles itself once its iterations are done
        await self._settle(key, result)
        if markers.webhook_response is not None:
            await self.hooks.webhook_response(self._state)
        return attempt

    async def _pause(self, node_id: str, key: str, nt: NodeType, result: NodeResult, spec: dict[str, JSON]) -> None:
        kind = spec.get("kind", "approval")
        if kind not in ("approval", "timer", "event"):
            raise _Failed(node_id, f"node {node_id!r}: _pause.kind must be approval, timer or event")
        expires = spec.get("expiresAt")
        relative = spec.get("expiresInSeconds")
        if relative is not None:
            if not isinstance(relative, int | float) or isinstance(relative, bool) or relative < 0:
                raise _Failed(node_id, f"node {node_id!r}: _pause.expiresInSeconds must be a number >= 0")
            expires = self.hooks.now_ms() + int(relative * 1000)
        iso_text = spec.get("expiresAtIso")
        if iso_text is not None:
            expires = _parse_iso_ms(node_id, iso_text)
        if expires is not None and (not isinstance(expires, int) or isinstance(expires, bool)):
            raise _Failed(node_id, f"node {node_id!r}: _pause.expiresAt must be ms since the epoch")
        pause = Pause(
            nodeId=node_id,
            key=key,
            kind=kind,
            reason=str(spec.get("reason", "")),
            fields=spec.get("fields"),
            expiresAt=expires,
            onTimeout=str(spec.get("onTimeout", "fail")),
            eventType=spec.get("eventType"),
            eventKey=spec.get("eventKey"),
            waitingSince=self.hooks.now_ms(),
            notifyUrl=spec.get("notifyUrl"),
        )
        if kind == "approval":
            token = spec.get("token")
            if token is not None and (not isinstance(token, str) or len(token) < 22):
                raise _Failed(node_id, f"node {node_id!r}: a _pause.token must be a string of at least 22 characters")
            if token is None:
                token, pause.tokenHash = new_token()
            else:
                pause.tokenHash = hash_token(token)
            self.issued_token = token
        result.status = "waiting"
        self._state.pause = pause
        await self._settle(key, result)
        raise _Paused()

    # -- loops --------------------------------------------------------------------------------------

    async def _run_loop(
        self, node_id: str, key: str, items: list[JSON], result: NodeResult, prefixes: list[str]
    ) -> NodeResult:
        if result.status != "running":
            result.status = "running"
            result.items = items
            await self._settle(key, result)
        outputs: list[JSON] = []
        for index, item in enumerate(items):
            prefix = f"{key}/{index}/"
            self._loop_vars[node_id] = {"item": item, "index": index}
            last = await self._walk_scope(node_id, prefix, item, [prefix, *prefixes])
            del self._loop_vars[node_id]
            outputs.append(self._state.results[last].output if last else None)
        result.status = "completed"
        result.output = {"items": items, "results": outputs}
        result.branch = "done"
        result.items = None
        result.finishedAt = self.hooks.now_ms()
        await self._settle(key, result)
        return result

    # -- helpers ----------------------------------------------------------------------------------

    def _guard(self, node_id: str) -> None:
        settings = self._state.workflow.get("settings") or {}
        max_steps = int(settings.get("maxSteps") or self.limits.max_steps)
        if self._state.steps >= max_steps:
            raise _Failed(
                node_id,
                f"maxSteps guard: the execution reached {max_steps} node runs (settings.maxSteps); "
                f"raise it or check the workflow for a runaway loop",
            )
        max_seconds = float(settings.get("maxDurationSeconds") or self.limits.max_duration_seconds)
        active_s = self._active_ms() / 1000
        if active_s > max_seconds:
            raise _Failed(
                node_id,
                f"maxDurationSeconds guard: the execution has been running for {active_s:.0f} s, over "
                f"{max_seconds:g} s (settings.maxDurationSeconds)",
            )

    def _execution_view(self) -> dict[str, JSON]:
        return {
            "id": self._state.id,
            "workflowId": self._state.workflow_id,
            "startedAt": self._state.startedAt,
            "now": self.hooks.now_ms(),
        }

    def _scope(self, prefixes: list[str]) -> dict[str, Any]:
        """Template roots (DESIGN §3): ``input`` is the trigger's output; in a loop body
        ``steps.<loopId>`` is ``{item, index}`` of the current iteration."""
        wf = self._state.workflow
        trigger = self._state.results.get(self._state.triggerNodeId or "")
        return {
            "input": trigger.output if trigger is not None and trigger.status == "completed" else self._state.input,
            "steps": StepsView(self._state.results, prefixes, self._loop_vars),
            "variables": (wf.get("settings") or {}).get("variables") or {},
            "execution": self._execution_view(),
            "workflow": {"id": wf.get("id"), "name": wf.get("name"), "version": self._state.workflowVersion},
            "now": iso_ms(self.hooks.now_ms()),
        }

    async def _settle(self, key: str, result: NodeResult) -> None:
        if not result.finishedAt:
            result.finishedAt = self.hooks.now_ms()
        if not result.startedAt:
            result.startedAt = result.finishedAt
        self._state.results[key] = result
        await self.hooks.node_settled(self._state, key, result)


def _parse_iso_ms(node_id: str, text: JSON) -> int:
    from datetime import UTC, datetime

    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        raise _Failed(node_id, f"node {node_id!r}: {text!r} is not an ISO-8601 time") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)
