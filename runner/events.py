"""Events (DESIGN §7): ``SendEvent {type, key, data}`` continues every execution waiting
for that type and correlation key.

Decision: one event wakes **every** matching waiter (as Inngest does), each
exactly once — each is claimed with its own conditional update. An event
that arrives while nobody waits is not stored; the reply lists the
executions it resumed, so a sender can tell.
"""

from __future__ import annotations

from .engine.model import JSON, ResumeAnswer
from .resume import spent_record
from .runtime import Runtime, now_ms


async def send_event(runtime: Runtime, event_type: str, key: str, data: JSON) -> list[str]:
    store = runtime.store.executions
    query = {"status": "waiting", "pause.kind": "event", "pause.eventType": event_type, "pause.eventKey": key}
    resumed = []
    for doc in await store.find_ids(query, sort=[("waitingSince", 1)], limit=1000):
        pause = doc.get("pause") or {}
        now = now_ms()
        expected = {"status": "waiting", "pause.key": pause.get("key"), "pause.eventType": event_type}
        claimed = await store.claim(
            doc["_id"],
            expected,
            owner=runtime.runner_id,
            lease_until=runtime.lease()["until"],
            now_ms=now,
            spent=spent_record(pause, now=now, by=f"event {event_type}"),
        )
        if not claimed:
            continue
        full = await store.get(doc["_id"])
        if full is None:
            continue
        answer = ResumeAnswer(
            key=pause["key"], payload={"type": event_type, "key": key, "data": data}, by=f"event {event_type}", at=now
        )
        await runtime.continue_stored(full, answer)
        resumed.append(doc["_id"])
    return resumed
