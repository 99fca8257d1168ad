"""Switch

@description Routes its input to the output of the first case equal to a value (outputs 0-9), else to default
"""

CONFIG = {
    "value": {"description": "the value to match, usually a {{ }} template"},
    "cases": {"type": "array", "maxItems": 10, "required": True, "description": "values for outputs 0, 1, 2, ..."},
}
OUTPUTS = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "default"]


def execute(ctx):
    value = ctx.config.get("value")
    branch = "default"
    for index, case in enumerate(ctx.config["cases"]):
        if case == value:
            branch = str(index)
            break
    result = {"_branch": branch}
    if isinstance(ctx.input, dict):
        for key in ctx.input:
            result[key] = ctx.input[key]
        return result
    result["value"] = ctx.input
    return result
