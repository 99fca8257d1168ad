"""The node sandbox: node scripts run under RestrictedPython in confined worker processes.

The runner creates one :class:`SandboxPool`, calls :meth:`SandboxPool.start`
before it creates gRPC or pymongo objects, and awaits :meth:`SandboxPool.run`
for every node. See ``README.md`` in this folder for what scripts may use.
"""

from runner.sandbox.pool import SandboxPool
from runner.sandbox.types import JSON, HostApiError, HostCall, NodeOutcome, NodeTask, SandboxLimits

__all__ = ["JSON", "HostApiError", "HostCall", "NodeOutcome", "NodeTask", "SandboxLimits", "SandboxPool"]
