"""Process-level limits a worker puts on itself before it runs any node.

Order matters: limits that need privileges are set while still root, files
are closed before the file limit, and privileges are dropped last but one
(``RLIMIT_NPROC`` is lowered after ``setuid`` so that ``setuid`` itself is
never refused for it). Everything the worker will need must already be
imported: after the drop it may not be able to read the Python installation.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import signal
import warnings
from multiprocessing.connection import Connection

from runner.sandbox.types import SandboxLimits

NOBODY = 65534
"""uid and gid of ``nobody``/``nogroup``."""

PIPE_FD = 3
"""The worker's end of the pipe is moved here; 0-2 are /dev/null."""

OPEN_FILES = PIPE_FD + 1
"""RLIMIT_NOFILE: stdin/out/err (on /dev/null) and the pipe, nothing else."""


def _set_limit(kind: int, value: int) -> None:
    """Soft and hard limit both, so the process cannot raise it again."""
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value))


def _isolate_files(conn: Connection) -> Connection:
    """stdin/stdout/stderr on /dev/null, the pipe on fd 3, every other descriptor closed."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        if null != fd:
            os.dup2(null, fd)
    fd = conn.fileno()
    if fd != PIPE_FD:
        os.dup2(fd, PIPE_FD, inheritable=False)
        conn.close()
        conn = Connection(PIPE_FD)
    if null > 2 and null != PIPE_FD:
        os.close(null)
    os.closerange(PIPE_FD + 1, 1 << 16)
    return conn


def _drop_privileges() -> str | None:
    """Become nobody when running as root; return a note when that is not possible."""
    if os.geteuid() != 0:
        return None
    try:
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    except OSError as exc:
        return f"sandbox workers run as root: could not switch to uid {NOBODY} ({exc.strerror})"
    return None


def confine(conn: Connection, limits: SandboxLimits) -> tuple[Connection, list[str]]:
    """Apply every limit; return the pipe (now on fd 3) and notes for the runner's log."""
    notes: list[str] = []
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the runner's terminal is the runner's business
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)  # past the CPU budget the kernel ends the process, even in C code
    warnings.simplefilter("ignore")  # a script's SyntaxWarning must not try to import or print anything
    os.chdir("/")
    os.environ.clear()
    conn = _isolate_files(conn)
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_FSIZE, 0)
    _set_limit(resource.RLIMIT_NOFILE, OPEN_FILES)
    _set_limit(resource.RLIMIT_AS, limits.memory_bytes)
    note = _drop_privileges()
    if note:
        notes.append(note)
    with contextlib.suppress(ValueError, OSError):
        _set_limit(resource.RLIMIT_NPROC, 0)  # no fork, no threads (ignored for root)
    return conn, notes


def set_cpu_budget(seconds: int) -> None:
    """RLIMIT_CPU counts the process's whole life: allow what it used so far plus this task's budget."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    target = math.ceil(usage.ru_utime + usage.ru_stime + seconds)  # whole seconds: the budget gains < 1 s
    if hard != resource.RLIM_INFINITY:
        target = min(target, hard)
    if target != soft:
        resource.setrlimit(resource.RLIMIT_CPU, (target, hard))
