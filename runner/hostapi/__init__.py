"""The runner's answers to ``smartbotic.*`` calls from node scripts (DESIGN §8).

``HostApi(settings, node_data).call(scope, method, args)`` applies the policy
and returns plain JSON data or raises :class:`HostApiError`;
``host_call_for(api, scope)`` gives the sandbox its :data:`HostCall`.
"""

from runner.hostapi.dispatch import HostApi, host_call_for
from runner.hostapi.scope import CallScope
from runner.sandbox.types import HostApiError

__all__ = ["CallScope", "HostApi", "HostApiError", "host_call_for"]
