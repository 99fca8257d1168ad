"""Respond to Webhook

@description Sets status, headers and body for the HTTP response; passes its input on
"""

CONFIG = {
    "status": {"type": "integer", "default": 200},
    "headers": {"type": "object", "default": {}},
    "body": {"description": "an object or array goes out as JSON, anything else as text"},
}
OUTPUTS = ["main"]


def execute(ctx):
    response = {
        "status": ctx.config.get("status", 200),
        "headers": ctx.config.get("headers") or {},
        "body": ctx.config.get("body"),
    }
    result = {"_webhookResponse": response}
    if isinstance(ctx.input, dict):
        for key in ctx.input:
            if key not in result:
                result[key] = ctx.input[key]
        return result
    result["input"] = ctx.input
    return result
