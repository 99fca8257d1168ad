"""Loop

@description Runs the nodes on its body output once per item, then emits {items, results} on done
"""

CONFIG = {
    "items": {"description": "the list to loop over (a {{ }} template); default: the input when it is a list"},
    "maxItems": {"type": "integer", "minimum": 1, "maximum": 100000, "default": 10000},
}
OUTPUTS = ["body", "done"]


def execute(ctx):
    items = ctx.config.get("items")
    if items is None:
        items = ctx.input
    if not isinstance(items, list):
        raise ValueError("loop items must be a list, got " + str(items)[:80])
    limit = ctx.config.get("maxItems", 10000)
    if len(items) > limit:
        raise ValueError("loop has " + str(len(items)) + " items, over maxItems " + str(limit))
    return {"_loop": items}
