"""Collection names and index definitions: the one place that lists them."""

from __future__ import annotations

from pymongo import ASCENDING, DESCENDING, IndexModel

WORKFLOWS = "workflows"
WORKFLOW_VERSIONS = "workflow_versions"
EXECUTIONS = "executions"
SCHEDULE_FIRES = "schedule_fires"
CURSORS = "trigger_cursors"

INDEXES: dict[str, list[IndexModel]] = {
    WORKFLOWS: [
        IndexModel([("webhooks.key", ASCENDING)], name="webhook_key"),
        IndexModel([("builtinSlug", ASCENDING)], name="builtin_slug", unique=True, sparse=True),
    ],
    WORKFLOW_VERSIONS: [
        IndexModel([("workflowId", ASCENDING), ("version", ASCENDING)], name="workflow_version", unique=True),
    ],
    EXECUTIONS: [
        # Finished executions: deleted expireAt (ended + TTL days); waiting: pause expiry + grace.
        IndexModel([("expireAt", ASCENDING)], name="ttl", expireAfterSeconds=0),
        IndexModel([("status", ASCENDING), ("waitingSince", DESCENDING), ("_id", DESCENDING)], name="status_waiting"),
        IndexModel([("status", ASCENDING), ("wakeAt", ASCENDING)], name="status_wake"),
        IndexModel([("status", ASCENDING), ("createdAt", ASCENDING)], name="status_created"),
        IndexModel([("status", ASCENDING), ("lease.until", ASCENDING)], name="status_lease"),
        IndexModel([("workflowId", ASCENDING), ("createdAt", DESCENDING)], name="workflow_created"),
        IndexModel([("createdAt", DESCENDING), ("_id", DESCENDING)], name="created"),
        IndexModel([("pause.eventType", ASCENDING), ("pause.eventKey", ASCENDING)], name="event_wait", sparse=True),
    ],
    SCHEDULE_FIRES: [
        IndexModel(
            [("workflowId", ASCENDING), ("nodeId", ASCENDING), ("minute", ASCENDING)],
            name="once_per_minute",
            unique=True,
        ),
        IndexModel([("expireAt", ASCENDING)], name="ttl", expireAfterSeconds=0),
    ],
}
