"""No Operation

@description Passes its input through unchanged
"""

CONFIG = {}
OUTPUTS = ["main"]


def execute(ctx):
    return ctx.input
