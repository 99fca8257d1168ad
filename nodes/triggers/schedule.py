"""Schedule Trigger

@description Starts a workflow on a cron schedule (5 fields, in a time zone); outputs {scheduledFor, firedAt}
"""

CONFIG = {
    "cron": {
        "type": "string",
        "required": True,
        "minLength": 9,
        "description": "minute hour day-of-month month day-of-week, e.g. '*/15 * * * *' or '0 9 * * MON-FRI'",
    },
    "timezone": {
        "type": "string",
        "default": "UTC",
        "description": "IANA time zone the cron fields are read in, e.g. 'Europe/Berlin'",
    },
}
OUTPUTS = ["main"]


def execute(ctx):
    return ctx.input
