"""Manual Trigger

@description Starts a workflow by hand (REST run, gRPC ExecuteWorkflow); its output is the run's input
"""

CONFIG = {}
OUTPUTS = ["main"]


def execute(ctx):
    return ctx.input
