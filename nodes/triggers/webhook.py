"""Webhook Trigger

@description Starts a workflow from an HTTP request to /webhook/<path>; outputs {method, path, headers, query, body}
"""

CONFIG = {
    "path": {"type": "string", "minLength": 1, "pattern": "^[A-Za-z0-9_./-]+$", "required": True},
    "method": {"type": "string", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE"], "default": "POST"},
    "responseMode": {"type": "string", "enum": ["lastNode", "onReceived", "responseNode"], "default": "lastNode"},
}
OUTPUTS = ["main"]


def execute(ctx):
    return ctx.input
