"""Wait

@description Pauses durably for a duration (15m, 2h, 1d), until an ISO time, or until the next HH:MM UTC
"""

CONFIG = {
    "duration": {"type": "string", "description": "e.g. 30s, 15m, 2h, 1d"},
    "until": {"type": "string", "description": "an ISO-8601 time, e.g. 2026-12-01T09:00:00Z"},
    "dailyTimeUtc": {"type": "string", "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$", "description": "HH:MM"},
}
OUTPUTS = ["main"]

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
DAY_MS = 86400000


def seconds_of(text):
    text = str(text).strip()
    unit = text[-1:]
    number = text[:-1]
    if unit not in UNITS or not number.replace(".", "", 1).isdigit():
        raise ValueError("duration " + repr(text) + " must look like 30s, 15m, 2h or 1d")
    return float(number) * UNITS[unit]


def execute(ctx):
    given = [k for k in ("duration", "until", "dailyTimeUtc") if ctx.config.get(k)]
    if len(given) != 1:
        raise ValueError("set exactly one of duration, until or dailyTimeUtc")
    pause = {"kind": "timer"}
    if given[0] == "duration":
        pause["expiresInSeconds"] = seconds_of(ctx.config["duration"])
        pause["reason"] = "wait " + ctx.config["duration"]
    elif given[0] == "until":
        pause["expiresAtIso"] = ctx.config["until"]
        pause["reason"] = "wait until " + ctx.config["until"]
    else:
        hours, minutes = ctx.config["dailyTimeUtc"].split(":")
        now = ctx.execution["now"]
        target = int(hours) * 3600000 + int(minutes) * 60000
        delta = target - now % DAY_MS
        if delta <= 0:
            delta = delta + DAY_MS
        pause["expiresAt"] = now + delta
        pause["reason"] = "wait until " + ctx.config["dailyTimeUtc"] + " UTC"
    return {"_pause": pause}


def resume(ctx, answer):
    result = {"wokeAt": answer["at"]}
    if isinstance(ctx.input, dict):
        for key in ctx.input:
            result[key] = ctx.input[key]
    return result
