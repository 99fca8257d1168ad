"""File Watch

@description Lists a directory and reports files new, changed (modification time or size) or deleted since its cursor
"""

import re

CONFIG = {
    "path": {"type": "string", "minLength": 1, "required": True},
    "pattern": {"type": "string", "description": "glob for file names, e.g. *.csv"},
    "firstRun": {"type": "string", "enum": ["recordOnly", "reportAll", "fail"], "default": "recordOnly"},
    "watch": {"type": "boolean", "default": False, "description": "poll at once when the directory changes"},
}
OUTPUTS = ["changed", "nothing"]


def glob_regex(pattern):
    out = ""
    for ch in pattern:
        if ch == "*":
            out = out + ".*"
        elif ch == "?":
            out = out + "."
        else:
            out = out + re.escape(ch)
    return re.compile("^" + out + "$")


def nothing(reason):
    return {"_branch": "nothing", "added": [], "changed": [], "deleted": [], "count": 0, "reason": reason}


def execute(ctx):
    slot = smartbotic.cursor.begin()
    if not slot["acquired"]:
        return nothing("a previous poll (execution " + str(slot["heldBy"]) + ") is still in flight")
    matcher = glob_regex(ctx.config["pattern"]) if ctx.config.get("pattern") else None
    entries = {}
    for entry in smartbotic.fs.readdir(ctx.config["path"]):
        if entry["isDirectory"]:
            continue
        if matcher is not None and not matcher.match(entry["name"]):
            continue
        entries[entry["name"]] = entry
    state = {}
    for name in entries:
        state[name] = [entries[name]["modifiedAt"], entries[name]["size"]]
    if not slot["initialized"]:
        policy = ctx.config.get("firstRun", "recordOnly")
        if policy == "fail":
            raise RuntimeError("no cursor yet for this node and firstRun is fail")
        if policy == "recordOnly":
            smartbotic.cursor.stage({"files": state})
            return nothing("first run: recorded the current state")
    seen = (slot["cursor"] or {}).get("files") or {}
    added = [entries[n] for n in sorted(state) if n not in seen]
    changed = [entries[n] for n in sorted(state) if n in seen and seen[n] != state[n]]
    deleted = [{"name": n} for n in sorted(seen) if n not in state]
    if not added and not changed and not deleted:
        return nothing("no new, changed or deleted files")
    smartbotic.cursor.stage({"files": state})
    return {
        "_branch": "changed",
        "added": added,
        "changed": changed,
        "deleted": deleted,
        "count": len(added) + len(changed) + len(deleted),
    }
