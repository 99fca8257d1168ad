"""Starting worker processes through a forkserver, never by forking the runner.

* The forkserver is a fresh interpreter (exec, not fork) with
  ``runner.sandbox.worker`` preloaded, so a worker starts in milliseconds and
  inherits none of the runner's memory, threads (gRPC, pymongo) or secrets.
  It is started with a scrubbed environment: ``/proc/<worker>/environ``
  shows the environment the forkserver was exec'd with, and the workers
  clear ``os.environ`` as well.
* multiprocessing normally re-imports the parent's ``__main__`` in every
  child. For the runner (``python -m runner``) that would be skipped anyway,
  but under any other entry point it would import gRPC, pymongo and the
  whole service into each worker. The main module is hidden while a worker
  is launched, so a worker only ever imports the sandbox.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys
import types
from collections.abc import Iterator
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess

from runner.sandbox.types import SandboxLimits
from runner.sandbox.worker import worker_main

WORKER_MODULE = "runner.sandbox.worker"

FORKSERVER_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "LD_LIBRARY_PATH", "PYTHONHOME")
"""The only variables the forkserver (and so, briefly, each worker) is started with."""


def _context() -> ForkServerContext:
    context = multiprocessing.get_context("forkserver")
    assert isinstance(context, ForkServerContext)
    return context


def _c_environ() -> list[tuple[bytes, bytes]]:
    """The process environment as the C library holds it.

    ``os.environ`` is a copy made at start-up: variables set later from C
    (readline sets ``LINES`` and ``COLUMNS``, for one) are missing from it,
    yet a child started with ``exec`` inherits them.
    """
    import ctypes  # only here: the forkserver and workers import this module too

    try:
        table = ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError):
        return [(name, value) for name, value in os.environb.items()]
    entries = []
    index = 0
    while (entry := table[index]) is not None:
        name, _, value = entry.partition(b"=")
        entries.append((name, value))
        index += 1
    return entries


@contextlib.contextmanager
def _scrubbed_environ() -> Iterator[None]:
    keep = {name.encode() for name in FORKSERVER_ENV}
    removed = [(name, value) for name, value in _c_environ() if name not in keep]
    for name, _ in removed:
        os.unsetenv(name)  # C level only: os.environ is left as it is
    try:
        yield
    finally:
        for name, value in removed:
            os.putenv(name, value)


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")  # no __file__, no __spec__: nothing to re-import
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def start_forkserver() -> None:
    """Start the forkserver now, before the runner creates threads or holds secrets in memory.

    Call it while the process has no other threads: the environment is
    swapped for the duration of the call.
    """
    context = _context()
    context.set_forkserver_preload([WORKER_MODULE])
    with _scrubbed_environ():
        forkserver.ensure_running()


def spawn_worker(limits: SandboxLimits) -> tuple[BaseProcess, Connection]:
    """Launch one worker; returns its process handle and the runner's end of its pipe."""
    context = _context()
    runner_end, worker_end = context.Pipe(duplex=True)
    try:
        process = context.Process(target=worker_main, args=(worker_end, limits), name="smartbotic-sandbox", daemon=True)
        with _main_module_hidden():
            process.start()
    except BaseException:
        runner_end.close()
        raise
    finally:
        worker_end.close()
    return process, runner_end
