"""The pure engine: order, branching, input, markers, retries, guards, loops, pauses."""

from __future__ import annotations

from typing import Any

import pytest

from runner.engine.graph import build_graph
from runner.engine.model import ResumeAnswer, WorkflowInvalid
from runner.engine.walk import EngineLimits, NodeCall, hash_token

from .enginekit import Kit, wf


def manual() -> dict[str, Any]:
    return {"id": "start", "type": "triggers/manual"}


def n(node_id: str, type_: str = "core/noop", **kw: Any) -> dict[str, Any]:
    return {"id": node_id, "type": type_, **kw}


def c(src: str, dst: str, output: str | None = None) -> dict[str, Any]:
    return {"from": src, "to": dst, **({"output": output} if output else {})}


@pytest.fixture
def kit() -> Kit:
    k = Kit()
    k.add(
        "test/tag",
        lambda call: {**(call.input or {}), "tag": call.config.get("tag")},
        config={"tag": {"type": "string"}},
    )
    k.add(
        "test/branch",
        lambda call: {"_branch": call.config["to"], "v": 1},
        outputs=("a", "b"),
        config={"to": {"type": "string"}},
    )
    k.add(
        "test/respond",
        lambda call: {"_webhookResponse": {"status": call.config["status"], "body": "x"}, "kept": 1},
        config={"status": {}},
    )
    k.add("test/fail", lambda call: 1 / 0)
    k.add("test/echo-config", lambda call: call.config, config={"value": {}})
    return k


async def test_ties_are_broken_by_position_in_nodes(kit: Kit) -> None:
    w = wf([manual(), n("z"), n("a"), n("m")], [c("start", "z"), c("start", "a"), c("start", "m")])
    await kit.run(w, {})
    assert kit.ran == ["start", "z", "a", "m"]


async def test_a_node_waits_for_all_parents(kit: Kit) -> None:
    w = wf(
        [manual(), n("join"), n("left"), n("right")],
        [c("start", "left"), c("start", "right"), c("left", "join"), c("right", "join")],
    )
    state, _ = await kit.run(w, {"x": 1})
    assert kit.ran == ["start", "left", "right", "join"]
    assert state.results["join"].output == {"left": {"x": 1}, "right": {"x": 1}}


async def test_branch_activates_only_its_output_and_skips_the_rest(kit: Kit) -> None:
    w = wf(
        [manual(), n("pick", "test/branch", config={"to": "b"}), n("on_a"), n("on_b"), n("after_a")],
        [c("start", "pick"), c("pick", "on_a", "a"), c("pick", "on_b", "b"), c("on_a", "after_a")],
    )
    state, _ = await kit.run(w, {})
    assert state.status == "completed"
    assert state.results["on_a"].status == "skipped"
    assert state.results["after_a"].status == "skipped"
    assert state.results["on_b"].output == {"v": 1}
    assert "_branch" not in state.results["pick"].output
    assert state.output == {"v": 1}


async def test_one_active_parent_of_two_gives_its_output_directly(kit: Kit) -> None:
    w = wf(
        [manual(), n("pick", "test/branch", config={"to": "a"}), n("x"), n("y"), n("join")],
        [c("start", "pick"), c("pick", "x", "a"), c("pick", "y", "b"), c("x", "join"), c("y", "join")],
    )
    state, _ = await kit.run(w, {})
    assert state.results["join"].output == {"v": 1}


async def test_templates_see_trigger_steps_and_execution(kit: Kit) -> None:
    w = wf(
        [
            manual(),
            n("t", "test/tag", config={"tag": "first"}),
            n(
                "e",
                "test/echo-config",
                config={
                    "value": {
                        "amount": "{{input.body.amount}}",
                        "text": "tag={{ steps.t.tag }} id={{execution.id}}",
                        "missing": "{{steps.t.nope}}",
                        "glued": "[{{steps.t.nope}}]",
                    }
                },
            ),
        ],
        [c("start", "t"), c("t", "e")],
    )
    state, _ = await kit.run(w, {"body": {"amount": 12.5}})
    assert state.results["e"].output == {
        "value": {"amount": 12.5, "text": "tag=first id=e1", "missing": None, "glued": "[]"}
    }


async def test_unknown_template_root_fails_the_node(kit: Kit) -> None:
    w = wf([manual(), n("e", "test/echo-config", config={"value": "{{ secrets.key }}"})], [c("start", "e")])
    with pytest.raises(WorkflowInvalid, match="unknown root 'secrets'"):
        await kit.run(w, {})


async def test_last_webhook_response_wins_with_a_warning_naming_both(kit: Kit) -> None:
    w = wf(
        [
            manual(),
            n("r1", "test/respond", config={"status": 201}),
            n("r2", "test/respond", config={"status": 202}),
            n("log"),
        ],
        [c("start", "r1"), c("r1", "r2"), c("r2", "log")],
    )
    state, _ = await kit.run(w, {})
    assert state.webhookResponse["status"] == 202
    assert state.webhookResponseNode == "r2"
    assert any("'r1'" in w and "'r2'" in w for w in state.warnings)
    assert state.results["r1"].output == {"kept": 1}
    assert kit.responses == 2


async def test_webhook_status_outside_range_is_the_nodes_error(kit: Kit) -> None:
    w = wf([manual(), n("r", "test/respond", config={"status": 700})], [c("start", "r")])
    state, _ = await kit.run(w, {})
    assert state.status == "failed"
    assert state.errorNodeId == "r"
    assert "outside 100-599" in (state.error or "")
    assert state.webhookResponse is None


@pytest.mark.parametrize(
    ("backoff", "delays"), [("constant", [2, 2, 2]), ("linear", [2, 4, 6]), ("exponential", [2, 4, 8])]
)
async def test_retry_waits_per_backoff_then_fails(kit: Kit, backoff: str, delays: list[float]) -> None:
    w = wf([manual(), n("f", "test/fail", retry={"limit": 3, "delay": 2, "backoff": backoff})], [c("start", "f")])
    state, _ = await kit.run(w, {}, limits=EngineLimits(park_retry_after_seconds=60))
    assert kit.slept == delays
    assert state.results["f"].attempts == 4
    assert state.status == "failed" and "ZeroDivisionError" in (state.error or "")


async def test_retry_succeeds_on_a_later_attempt(kit: Kit) -> None:
    calls = {"n": 0}

    def flaky(call: NodeCall) -> Any:
        calls["n"] += 1
        if calls["n"] < 3:
            raise RuntimeError("not yet")
        return {"ok": True}

    kit.add("test/flaky", flaky)
    w = wf([manual(), n("f", "test/flaky", retry={"limit": 5, "delay": 0.1})], [c("start", "f")])
    state, _ = await kit.run(w, {})
    assert state.status == "completed" and state.results["f"].attempts == 3


async def test_a_long_retry_wait_parks_the_execution(kit: Kit) -> None:
    w = wf([manual(), n("f", "test/fail", retry={"limit": 1, "delay": 600})], [c("start", "f")])
    state, _ = await kit.run(w, {})
    assert state.status == "waiting"
    assert state.pause is not None and state.pause.kind == "retry"
    assert state.results["f"].wakeAt == state.pause.expiresAt
    assert kit.slept == []
    # when due, any runner walks again and the node gets its second attempt
    state2, _ = await kit.run(w, state=state, resume=ResumeAnswer(key="f"))
    assert state2.status == "failed" and state2.results["f"].attempts == 2


async def test_on_error_continue_and_route(kit: Kit) -> None:
    w = wf([manual(), n("f", "test/fail", onError="continue"), n("next")], [c("start", "f"), c("f", "next")])
    state, _ = await kit.run(w, {})
    assert state.status == "completed"
    assert "ZeroDivisionError" in state.results["next"].output["error"]
    kit2 = Kit()
    kit2.types, kit2.fns = kit.types, kit.fns
    w2 = wf(
        [manual(), n("f", "test/fail", onError="route"), n("ok"), n("handler")],
        [c("start", "f"), c("f", "ok"), c("f", "handler", "error")],
    )
    state2, _ = await kit2.run(w2, {})
    assert state2.results["ok"].status == "skipped"
    assert state2.results["handler"].status == "completed"


async def test_max_steps_guard_names_the_guard(kit: Kit) -> None:
    w = wf([manual(), n("a"), n("b"), n("c")], [c("start", "a"), c("a", "b"), c("b", "c")], settings={"maxSteps": 2})
    state, _ = await kit.run(w, {})
    assert state.status == "failed" and "maxSteps" in (state.error or "")
    assert "c" not in state.results


async def test_oversized_output_fails_the_node_with_size_and_limit(kit: Kit) -> None:
    kit.add("test/big", lambda call: {"blob": "x" * 5000})
    w = wf([manual(), n("big", "test/big")], [c("start", "big")])
    state, _ = await kit.run(w, {}, limits=EngineLimits(max_output_bytes=1000))
    assert state.status == "failed"
    assert "1000" in (state.error or "") and "bytes" in (state.error or "")


async def test_loop_runs_body_per_item_with_keyed_results(kit: Kit) -> None:
    kit.add("core/loop", lambda call: {"_loop": call.input["items"]}, outputs=("body", "done"))
    kit.add("test/double", lambda call: {"v": call.input * 2})
    w = wf(
        [manual(), n("loop", "core/loop"), n("dbl", "test/double"), n("after")],
        [c("start", "loop"), c("loop", "dbl", "body"), c("loop", "after", "done")],
    )
    state, _ = await kit.run(w, {"items": [1, 2, 3]})
    assert state.status == "completed"
    assert [state.results[f"loop/{i}/dbl"].output for i in range(3)] == [{"v": 2}, {"v": 4}, {"v": 6}]
    assert state.results["after"].output == {"items": [1, 2, 3], "results": [{"v": 2}, {"v": 4}, {"v": 6}]}
    assert "dbl" not in state.results


async def test_pause_stores_only_a_hash_and_resume_continues(kit: Kit) -> None:
    kit.add("test/ask", lambda call: {"_pause": {"reason": "ok?", "expiresAt": 2_000_000_000_000}})
    w = wf([manual(), n("ask", "test/ask"), n("after")], [c("start", "ask"), c("ask", "after")])
    state, walker = await kit.run(w, {})
    assert state.status == "waiting"
    assert walker.issued_token and len(walker.issued_token) >= 22
    assert state.pause is not None and state.pause.tokenHash == hash_token(walker.issued_token)
    assert "after" not in state.results
    ran_before = list(kit.ran)
    state2, _ = await kit.run(w, state=state, resume=ResumeAnswer(key="ask", payload={"approved": True}))
    assert state2.status == "completed"
    assert state2.results["ask"].output == {"approved": True}
    assert kit.ran[len(ran_before) :] == ["after"]  # start and ask did not run again


async def test_pause_inside_a_loop_resumes_at_the_paused_iteration(kit: Kit) -> None:
    kit.add("core/loop", lambda call: {"_loop": call.input["items"]}, outputs=("body", "done"))
    kit.add(
        "test/ask-odd",
        lambda call: {"_pause": {"reason": f"item {call.input}"}} if call.input % 2 else {"v": call.input},
    )
    w = wf(
        [manual(), n("loop", "core/loop"), n("ask", "test/ask-odd"), n("after")],
        [c("start", "loop"), c("loop", "ask", "body"), c("loop", "after", "done")],
    )
    state, _ = await kit.run(w, {"items": [2, 3, 4]})
    assert state.status == "waiting" and state.pause is not None and state.pause.key == "loop/1/ask"
    state, _ = await kit.run(w, state=state, resume=ResumeAnswer(key="loop/1/ask", payload={"answer": 3}))
    assert state.status == "completed"
    assert state.results["after"].output["results"] == [{"v": 2}, {"answer": 3}, {"v": 4}]
    assert kit.ran.count("loop/0/ask") == 1 and kit.ran.count("loop") == 1


def test_validation_names_every_problem_at_once(kit: Kit) -> None:
    w = wf(
        [manual(), n("a", "nope/missing"), n("a"), n("b", "test/tag", config={"tag": 5})],
        [c("start", "ghost"), c("b", "start"), c("start", "b"), c("b", "b2")],
    )
    with pytest.raises(WorkflowInvalid) as info:
        build_graph(w, kit.types)
    text = " | ".join(info.value.problems)
    for expected in (
        "unknown node type 'nope/missing'",
        "duplicate node id 'a'",
        "missing node 'ghost'",
        "missing node 'b2'",
        "cycle",
        "tag: 5 is not of type 'string'",
    ):
        assert expected in text


async def test_disabled_node_passes_its_input_through(kit: Kit) -> None:
    w = wf(
        [manual(), n("t", "test/tag", config={"tag": "x"}, disabled=True), n("after")],
        [c("start", "t"), c("t", "after")],
    )
    state, _ = await kit.run(w, {"a": 1})
    assert state.results["t"].status == "skipped"
    assert state.results["after"].output == {"a": 1}
    assert "t" not in kit.ran


async def test_max_duration_guard_counts_running_time_and_names_the_guard(kit: Kit) -> None:
    w = wf(
        [manual(), n("a"), n("b"), n("c"), n("d")],
        [c("start", "a"), c("a", "b"), c("b", "c"), c("c", "d")],
        settings={"maxDurationSeconds": 0.05},
    )
    state, _ = await kit.run(w, {})
    assert state.status == "failed"
    assert "maxDurationSeconds" in (state.error or "")
    assert "d" not in state.results


async def test_config_is_checked_again_when_the_node_script_changed_after_the_graph_was_built(kit: Kit) -> None:
    from dataclasses import replace

    from runner.engine.graph import build_graph
    from runner.engine.model import ExecutionState
    from runner.engine.walk import Walker

    w = wf([manual(), n("t", "test/tag", config={"tag": "x"})], [c("start", "t")])
    graph = build_graph(w, kit.types)  # "x" is a valid tag now
    kit.types["test/tag"] = replace(
        kit.types["test/tag"], source="# edited", config_schema={"tag": {"type": "integer"}}
    )
    state = ExecutionState(id="e2", workflow=w, workflowVersion=1, input={}, startedAt=kit.now_ms())
    await Walker(graph, kit.types, kit.run_node, kit).run(state)
    assert state.status == "failed" and "tag" in (state.error or "") and "integer" in (state.error or "")
