"""``smartbotic.process.exec(command, timeout=None)``: off unless ``SMARTBOTIC_ALLOW_EXEC=1``.

- ``command`` is a string, run by ``/bin/sh -c``, or a list of strings, run
  as argv with no shell.
- ``timeout`` is in seconds: default 30, at most 300. Past it the command's
  whole process group is killed and the call fails naming the timeout.
- The command runs in its own session and process group, with stdin from
  /dev/null, in the first fs root (the runner's working directory when there
  is none), and with an environment of ``PATH`` only: the runner's variables
  (``MONGODB_URI``, API keys) never reach it. Processes it leaves behind in its
  group are killed when it exits, so nothing outlives the call.
- Returns ``{exitCode, stdout, stderr}``. ``exitCode`` is negative (``-N``)
  when a signal ``N`` ended the command. Output is decoded as UTF-8 with
  invalid bytes replaced; each stream keeps its first ``output_cap`` bytes and,
  past that, ends with a line ``[stdout cut: first N of M bytes shown]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Awaitable, Callable

from runner.hostapi.args import take, want_seconds
from runner.sandbox.types import JSON, HostApiError

DEFAULT_TIMEOUT_SECONDS = 30.0
MAX_TIMEOUT_SECONDS = 300.0
DEFAULT_OUTPUT_CAP = 1024 * 1024
MINIMAL_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
_READ_CHUNK = 64 * 1024
_DRAIN_GRACE_SECONDS = 2.0
"""How long to wait for the pipes to close once the command's group is dead."""


def _argv(command: JSON) -> list[str]:
    if isinstance(command, str) and command.strip():
        return ["/bin/sh", "-c", command]
    if isinstance(command, list) and command and all(isinstance(a, str) for a in command) and command[0]:
        return list(command)
    raise HostApiError(
        "process.exec: command must be a non-empty string (run by /bin/sh -c) or a non-empty list of strings (argv)"
    )


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


class _Capture:
    """One output stream: its first ``cap`` bytes and how many there were in all."""

    def __init__(self, name: str, cap: int) -> None:
        self.name = name
        self.cap = cap
        self.kept = bytearray()
        self.total = 0
        self.closed = False

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        while stream is not None and (chunk := await stream.read(_READ_CHUNK)):
            self.total += len(chunk)
            if len(self.kept) < self.cap:
                self.kept += chunk[: self.cap - len(self.kept)]
        self.closed = True

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        if self.total > len(self.kept):
            text += f"\n[{self.name} cut: first {len(self.kept)} of {self.total} bytes shown]"
        if not self.closed:
            text += f"\n[{self.name} cut: a process outside the command's group still held it open]"
        return text


class _ExitAwareProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Stream protocol that also tells when the process itself exited, pipes open or not."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2**16, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


class ProcessRunner:
    """Runs ``process.exec`` when the operator allowed it."""

    def __init__(self, *, allowed: bool, cwd: str | None, output_cap: int = DEFAULT_OUTPUT_CAP) -> None:
        self._allowed = allowed
        self._cwd = cwd
        self._cap = output_cap

    def handlers(self) -> dict[str, Callable[[list[JSON]], Awaitable[JSON]]]:
        return {"process.exec": self.exec}

    async def exec(self, args: list[JSON]) -> JSON:
        command, timeout_arg = take("process.exec", args, ("command", "timeout"), 1)
        if not self._allowed:
            raise HostApiError(
                "process.exec is disabled on this runner; an operator enables it by starting the runner "
                "with SMARTBOTIC_ALLOW_EXEC=1"
            )
        argv = _argv(command)
        timeout = want_seconds(
            "process.exec", "timeout", timeout_arg, default=DEFAULT_TIMEOUT_SECONDS, maximum=MAX_TIMEOUT_SECONDS
        )
        cwd = self._cwd if self._cwd and os.path.isdir(self._cwd) else None
        loop = asyncio.get_running_loop()
        try:
            transport, protocol = await loop.subprocess_exec(
                lambda: _ExitAwareProtocol(loop),
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=dict(MINIMAL_ENV),
                cwd=cwd,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise HostApiError(f"process.exec: command not found: {argv[0]}") from None
        except PermissionError:
            raise HostApiError(f"process.exec: permission denied running {argv[0]}") from None
        return await self._collect(asyncio.subprocess.Process(transport, protocol, loop), protocol.exited, timeout)

    async def _collect(self, proc: asyncio.subprocess.Process, exited: asyncio.Future[None], timeout: float) -> JSON:
        out, err = _Capture("stdout", self._cap), _Capture("stderr", self._cap)
        readers = [asyncio.ensure_future(out.drain(proc.stdout)), asyncio.ensure_future(err.drain(proc.stderr))]
        try:
            # not proc.wait(): it also waits for the pipes, which a left-behind child may hold open
            async with asyncio.timeout(timeout):
                await asyncio.shield(exited)
        except TimeoutError:
            _kill_group(proc.pid)
            await exited
            raise HostApiError(
                f"process.exec: the command did not finish within {timeout:g} s and was killed"
            ) from None
        finally:
            _kill_group(proc.pid)  # children it left behind, or all of it when the call is cancelled
            _, pending = await asyncio.wait(readers, timeout=_DRAIN_GRACE_SECONDS)
            for reader in pending:
                reader.cancel()
        exit_code = proc.returncode
        return {"exitCode": exit_code, "stdout": out.text(), "stderr": err.text()}
