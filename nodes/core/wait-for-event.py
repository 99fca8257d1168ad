"""Wait for Event

@description Pauses until POST /api/v1/events brings an event of this type and correlation key, or the timeout passes
"""

CONFIG = {
    "eventType": {"type": "string", "minLength": 1, "required": True},
    "key": {
        "type": "string",
        "minLength": 1,
        "required": True,
        "description": "correlation key, e.g. {{input.body.orderId}}",
    },
    "timeout": {"type": "string", "default": "1d", "description": "e.g. 30m, 12h, 7d; at most 30d"},
    "onTimeout": {"type": "string", "enum": ["fail", "continue", "route"], "default": "fail"},
}
OUTPUTS = ["main", "timeout"]

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def seconds_of(text):
    text = str(text).strip()
    unit = text[-1:]
    number = text[:-1]
    if unit not in UNITS or not number.isdigit():
        raise ValueError("timeout " + repr(text) + " must look like 30m, 12h or 7d")
    return int(number) * UNITS[unit]


def execute(ctx):
    seconds = seconds_of(ctx.config.get("timeout", "1d"))
    if seconds > 30 * 86400:
        raise ValueError("timeout " + ctx.config.get("timeout") + " exceeds the 30-day cap (30d)")
    return {
        "_pause": {
            "kind": "event",
            "reason": "waiting for event " + ctx.config["eventType"] + " with key " + str(ctx.config["key"]),
            "eventType": ctx.config["eventType"],
            "eventKey": str(ctx.config["key"]),
            "expiresInSeconds": seconds,
            "onTimeout": ctx.config.get("onTimeout", "fail"),
        }
    }


def resume(ctx, answer):
    if answer["timeout"]:
        policy = ctx.config.get("onTimeout", "fail")
        if policy == "fail":
            event_type = ctx.config["eventType"]
            raise RuntimeError("event " + event_type + " did not arrive; timed out at " + str(answer["expiresAtIso"]))
        if policy == "route":
            return {"_branch": "timeout", "timedOut": True}
        return {"timedOut": True, "event": None}
    return {"timedOut": False, "event": answer["payload"]}
