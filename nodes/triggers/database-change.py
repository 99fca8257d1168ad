"""Database Change

@description Polls a smartbotic.db collection for documents new or changed since its cursor (timestamp, _id)
"""

CONFIG = {
    "collection": {"type": "string", "minLength": 1, "required": True},
    "timestampField": {"type": "string", "default": "_updatedAt"},
    "filter": {"type": "object", "default": {}, "description": "extra conditions documents must meet"},
    "firstRun": {"type": "string", "enum": ["recordOnly", "reportAll", "fail"], "default": "recordOnly"},
    "batchSize": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100},
}
OUTPUTS = ["changed", "nothing"]


def nothing(reason):
    return {"_branch": "nothing", "documents": [], "count": 0, "reason": reason}


def execute(ctx):
    field = ctx.config.get("timestampField", "_updatedAt")
    coll = smartbotic.db.collection(ctx.config["collection"])
    base = ctx.config.get("filter") or {}
    slot = smartbotic.cursor.begin()
    if not slot["acquired"]:
        return nothing("a previous poll (execution " + str(slot["heldBy"]) + ") is still in flight")
    cursor = slot["cursor"]
    if not slot["initialized"]:
        policy = ctx.config.get("firstRun", "recordOnly")
        if policy == "fail":
            raise RuntimeError("no cursor yet for this node and firstRun is fail")
        if policy == "recordOnly":
            latest = coll.find(base, [[field, -1], ["_id", -1]], 1)
            if latest:
                smartbotic.cursor.stage({"ts": latest[0].get(field), "id": latest[0]["_id"]})
            else:
                smartbotic.cursor.stage(None)
            return nothing("first run: recorded the current state")
    query = base
    if cursor is not None:
        after = {"$or": [{field: {"$gt": cursor["ts"]}}, {field: cursor["ts"], "_id": {"$gt": cursor["id"]}}]}
        query = {"$and": [base, after]} if base else after
    docs = coll.find(query, [[field, 1], ["_id", 1]], ctx.config.get("batchSize", 100))
    if not docs:
        return nothing("no new or changed documents")
    last = docs[-1]
    smartbotic.cursor.stage({"ts": last.get(field), "id": last["_id"]})
    return {"_branch": "changed", "documents": docs, "count": len(docs)}
