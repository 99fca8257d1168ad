"""Code

@description Runs your Python: define main(input) and return the node's output
"""

CONFIG = {
    "code": {
        "type": "string",
        "minLength": 1,
        "required": True,
        "x-noTemplate": True,
        "description": "Python defining main(input); smartbotic is available as a global",
    },
}
OUTPUTS = ["main"]


def execute(ctx):
    return ctx.runCode(ctx.input)
