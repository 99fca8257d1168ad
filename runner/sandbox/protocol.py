"""The wire between the runner and a worker: JSON objects in length-prefixed frames.

Frames are what ``multiprocessing.Connection.send_bytes`` writes (a 4-byte
big-endian signed length, then the bytes), so the worker side uses
``send_bytes``/``recv_bytes(maxlength)``; nothing is ever pickled.

Messages, worker → runner::

    {"ready": {"uid": int, "notes": [str]}}        once, after start-up
    {"call": "fs.stat", "args": [...]}              a smartbotic.* call
    {"done": output, "logs": [...]}                 the node finished
    {"fail": "message", "logs": [...], "retire": bool}

runner → worker::

    {"task": {...NodeTask fields...}}
    {"ok": result} | {"error": "message"}           the answer to a call

Both sides import this module, so it must stay free of runner imports.
"""

from __future__ import annotations

import json
import math
from typing import Any

from runner.sandbox.types import SandboxLimits

HEADER_BYTES = 4
"""Frame header: ``struct.pack("!i", length)``, as ``Connection.send_bytes`` writes it."""

CALLS: frozenset[str] = frozenset(
    {
        "fs.readFile",
        "fs.writeFile",
        "fs.exists",
        "fs.mkdir",
        "fs.unlink",
        "fs.stat",
        "fs.readdir",
        "process.exec",
        "http.request",
        "storage.get",
        "storage.set",
        "storage.delete",
        "cursor.begin",
        "cursor.stage",
        "db.insert",
        "db.update",
        "db.find",
        "db.findOne",
        "db.delete",
    }
)
"""Every ``{"call": ...}`` name a worker may send."""

_LOG_ENTRY_OVERHEAD = 256
_FRAME_SLACK = 64 * 1024


class ProtocolError(Exception):
    """A frame or message that does not follow this protocol."""


def encode_value(value: Any) -> bytes:
    """Compact UTF-8 JSON; raises ``TypeError``/``ValueError`` for anything that is not plain JSON."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8")


def encode(message: dict[str, Any]) -> bytes:
    """One message as a frame's bytes."""
    return encode_value(message)


def decode(frame: bytes) -> dict[str, Any]:
    """Parse one frame; anything but a JSON object is a :class:`ProtocolError`."""
    try:
        message = json.loads(frame)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"a frame is not JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError(f"a message must be a JSON object, got {type(message).__name__}")
    return message


def max_worker_frame(limits: SandboxLimits) -> int:
    """Largest frame a worker may send: an output or call arguments plus the capped logs."""
    per_line = limits.max_log_line_bytes * 6 + _LOG_ENTRY_OVERHEAD  # a control character is escaped as \u0000
    return limits.max_output_bytes + (limits.max_log_lines + 1) * per_line + _FRAME_SLACK


def max_host_frame(limits: SandboxLimits) -> int:
    """Largest frame the runner sends a worker (a task or a call's result): 1/8 of its memory."""
    return max(limits.memory_bytes // 8, 1024 * 1024)


def seconds_text(seconds: float) -> str:
    """``1.0``, ``0.25``, ``30.0``: at least one decimal, as in "its 1.0 s time limit"."""
    return f"{seconds:.1f}" if seconds == round(seconds, 1) else f"{seconds:g}"


def cpu_budget(limits: SandboxLimits) -> int:
    """RLIMIT_CPU counts whole seconds; the budget rounds up and is at least one."""
    return max(1, math.ceil(limits.cpu_seconds))


def mib_text(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"
