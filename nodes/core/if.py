"""If

@description Routes its input to the true or false output by comparing two values
"""

CONFIG = {
    "left": {"description": "the value to test, usually a {{ }} template"},
    "operation": {
        "type": "string",
        "enum": ["equals", "notEquals", "gt", "gte", "lt", "lte", "contains", "exists", "isEmpty", "matches"],
        "default": "equals",
    },
    "right": {"description": "the value to compare with (unused by exists and isEmpty)"},
}
OUTPUTS = ["true", "false"]


def test(op, left, right):
    if op == "equals":
        return left == right
    if op == "notEquals":
        return left != right
    if op in ("gt", "gte", "lt", "lte"):
        if left is None or right is None:
            return False
        if op == "gt":
            return left > right
        if op == "gte":
            return left >= right
        if op == "lt":
            return left < right
        return left <= right
    if op == "contains":
        if isinstance(left, (str, list)):
            return right in left
        if isinstance(left, dict):
            return right in left
        return False
    if op == "exists":
        return left is not None
    if op == "isEmpty":
        return left is None or left == "" or left == [] or left == {}
    if op == "matches":
        import re

        return isinstance(left, str) and re.search(str(right), left) is not None
    raise ValueError("unknown operation " + str(op))


def execute(ctx):
    op = ctx.config.get("operation", "equals")
    passed = test(op, ctx.config.get("left"), ctx.config.get("right"))
    result = {"_branch": "true" if passed else "false"}
    if isinstance(ctx.input, dict):
        for key in ctx.input:
            result[key] = ctx.input[key]
        return result
    result["value"] = ctx.input
    return result
