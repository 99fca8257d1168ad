"""Set

@description Sets fields: merges config.values into the input (or replaces it with keepInput false)
"""

CONFIG = {
    "values": {"type": "object", "required": True},
    "keepInput": {"type": "boolean", "default": True},
}
OUTPUTS = ["main"]

RESERVED = ["_branch", "_pause", "_webhookResponse", "_loop"]


def execute(ctx):
    values = ctx.config["values"]
    for key in values:
        if key in RESERVED:
            raise ValueError("set cannot write the reserved key " + key)
    keep = ctx.config.get("keepInput", True)
    result = {}
    if keep and isinstance(ctx.input, dict):
        for key in ctx.input:
            result[key] = ctx.input[key]
    for key in values:
        result[key] = values[key]
    return result
