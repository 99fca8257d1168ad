"""Wait for Approval

@description Pauses until a person approves or rejects over REST, or the pause expires
"""

CONFIG = {
    "reason": {"type": "string", "default": "Approval needed"},
    "fields": {"description": "what the approver should see or fill in (any JSON)"},
    "expiresIn": {"type": "string", "default": "7d", "description": "e.g. 30m, 12h, 2d; at most 30d"},
    "onTimeout": {"type": "string", "enum": ["fail", "approve", "reject", "route"], "default": "fail"},
    "notifyUrl": {"type": "string", "description": "POSTed {executionId, token, resumeUrl, reason, fields, expiresAt}"},
}
OUTPUTS = ["approved", "rejected", "timeout"]

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
CAP_SECONDS = 30 * 86400


def seconds_of(text):
    text = str(text).strip()
    if text.isdigit():
        return int(text)
    unit = text[-1:]
    number = text[:-1]
    if unit not in UNITS or not number.isdigit():
        raise ValueError("expiresIn " + repr(text) + " must look like 30m, 12h or 2d")
    return int(number) * UNITS[unit]


def execute(ctx):
    expires_in = ctx.config.get("expiresIn", "7d")
    seconds = seconds_of(expires_in)
    if seconds > CAP_SECONDS:
        raise ValueError("expiresIn " + str(expires_in) + " exceeds the 30-day cap (30d)")
    if seconds <= 0:
        raise ValueError("expiresIn must be positive")
    pause = {
        "kind": "approval",
        "reason": ctx.config.get("reason", "Approval needed"),
        "fields": ctx.config.get("fields"),
        "expiresInSeconds": seconds,
        "onTimeout": ctx.config.get("onTimeout", "fail"),
    }
    if ctx.config.get("notifyUrl"):
        pause["notifyUrl"] = ctx.config["notifyUrl"]
    return {"_pause": pause}


def resume(ctx, answer):
    if answer["timeout"]:
        policy = ctx.config.get("onTimeout", "fail")
        if policy == "fail":
            raise RuntimeError("approval timed out at " + str(answer["expiresAtIso"]))
        if policy == "route":
            return {"_branch": "timeout", "timedOut": True, "expiredAt": answer["expiresAtIso"]}
        approved = policy == "approve"
        return {
            "_branch": "approved" if approved else "rejected",
            "approved": approved,
            "by": "timeout",
            "at": answer["at"],
            "timedOut": True,
        }
    payload = answer["payload"] or {}
    approved = payload.get("approved") is True
    return {
        "_branch": "approved" if approved else "rejected",
        "approved": approved,
        "data": payload.get("data"),
        "by": answer["by"],
        "at": answer["at"],
    }
