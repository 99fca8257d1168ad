"""``smartbotic.fs``: files, confined to ``SMARTBOTIC_FS_ROOTS`` by real path.

Confinement, checked at every call:

1. A relative path is joined to the first root (to the runner's working
   directory when the only root is ``*``).
2. ``os.path.realpath`` resolves ``..`` and every symlink, including a
   dangling one (its target may be created later) and the roots' own
   symlinks. The result must be a root or lie below one, compared by path
   components, so ``/data/files-evil`` is not inside ``/data/files``.
3. The operation then walks from the root to the target one component at a
   time with ``O_NOFOLLOW`` (``openat``), so a symlink swapped in after the
   check is refused instead of followed.

``fs.unlink`` resolves all but the last component, so it removes a symlink
itself, never its target. ``*`` among the roots lifts the confinement.

Files are UTF-8 text: ``readFile`` of other bytes is an error naming the
path, and it refuses files larger than the cap (``SMARTBOTIC_MAX_OUTPUT_BYTES``,
the node output cap) or that are not regular files (a FIFO never blocks it). ``writeFile`` truncates and writes
in place, like Node's ``fs.writeFile``. ``readdir`` is sorted by name (code
point order); a symlink entry reports its target's size and time when the
target is inside the roots, its own otherwise. All I/O runs in a thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from runner.hostapi.args import take, want_str
from runner.sandbox.types import JSON, HostApiError

T = TypeVar("T")

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 256 * 1024


@dataclass(frozen=True)
class Target:
    """A checked path: the real root it lies in and the components below it."""

    shown: str
    """The path as the script gave it, for messages."""
    root: str
    parts: tuple[str, ...]

    @property
    def real(self) -> str:
        return os.path.join(self.root, *self.parts)


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def _mtime_ms(st: os.stat_result) -> int:
    return st.st_mtime_ns // 1_000_000


class FileSystem:
    """The fs calls, under one set of roots."""

    def __init__(self, roots: tuple[str, ...], *, max_read_bytes: int) -> None:
        self._unconfined = "*" in roots
        self._roots = tuple(r for r in roots if r != "*")
        self._max_read = max_read_bytes

    # --- confinement --------------------------------------------------------------------------

    def _roots_text(self) -> str:
        return ", ".join(self._roots) or "(none configured)"

    def resolve(self, method: str, path: JSON, *, follow_last: bool = True) -> Target:
        """Check ``path`` against the roots; ``follow_last=False`` keeps a final symlink itself (unlink)."""
        shown = want_str(method, "path", path)
        if "\0" in shown:
            raise HostApiError(f"{method}: the path contains a NUL character")
        if os.path.isabs(shown):
            absolute = shown
        elif self._roots:
            absolute = os.path.join(self._roots[0], shown)
        else:
            absolute = os.path.abspath(shown)
        head, tail = os.path.split(absolute.rstrip("/"))
        if follow_last or tail in ("", ".", ".."):
            real = os.path.realpath(absolute)
        else:
            real = os.path.join(os.path.realpath(head or "/"), tail)
        if self._unconfined:
            return Target(shown, "/", tuple(p for p in real.split("/") if p))
        inside = [r for r in map(os.path.realpath, self._roots) if _inside(real, r)]
        if not inside:
            via = f" (it resolves to {real})" if os.path.normpath(absolute) != real else ""
            raise HostApiError(
                f"{method}: {shown} is outside the allowed roots{via}; allowed: {self._roots_text()} "
                "(SMARTBOTIC_FS_ROOTS sets them)"
            )
        root = max(inside, key=len)
        rel = os.path.relpath(real, root)
        return Target(shown, root, () if rel == "." else tuple(rel.split(os.sep)))

    @staticmethod
    def _open_child_dir(fd: int, name: str) -> int:
        """Open directory ``name`` under ``fd``; a symlink there (swapped in since the check) is ELOOP."""
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
        except NotADirectoryError:
            if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                raise OSError(errno.ELOOP, "symlink in path") from None
            raise

    def _open_dir(self, root: str, parts: tuple[str, ...]) -> int:
        """A descriptor of ``root/parts``, each component opened without following symlinks."""
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for part in parts:
                child = self._open_child_dir(fd, part)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _parent(self, target: Target) -> tuple[int, str]:
        """A descriptor of the target's directory and the target's name in it."""
        if not target.parts:
            return self._open_dir(target.root, ()), "."
        return self._open_dir(target.root, target.parts[:-1]), target.parts[-1]

    async def _run(self, method: str, target: Target, work: Callable[[Target], T]) -> T:
        try:
            return await asyncio.to_thread(work, target)
        except OSError as exc:
            raise self._os_error(method, target, exc) from None

    @staticmethod
    def _os_error(method: str, target: Target, exc: OSError) -> HostApiError:
        shown = target.shown
        reasons = {
            errno.ENOENT: f"no such file or directory: {shown}",
            errno.ENOTDIR: f"{shown}: not a directory",
            errno.EISDIR: f"{shown} is a directory",
            errno.EACCES: f"permission denied: {shown}",
            errno.EPERM: f"operation not permitted: {shown}",
            errno.ELOOP: f"{shown}: a symlink appeared in the path after it was checked; refused",
            errno.EEXIST: f"{shown} already exists",
        }
        return HostApiError(f"{method}: {reasons.get(exc.errno or 0, f'{shown}: {exc.strerror or exc}')}")

    # --- the calls ----------------------------------------------------------------------------

    def handlers(self) -> dict[str, Callable[[list[JSON]], Awaitable[JSON]]]:
        return {
            "fs.readFile": self.read_file,
            "fs.writeFile": self.write_file,
            "fs.exists": self.exists,
            "fs.mkdir": self.mkdir,
            "fs.unlink": self.unlink,
            "fs.stat": self.stat,
            "fs.readdir": self.readdir,
        }

    async def read_file(self, args: list[JSON]) -> JSON:
        (path,) = take("fs.readFile", args, ("path",))
        target = self.resolve("fs.readFile", path)
        data = await self._run("fs.readFile", target, self._read_bytes)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise HostApiError(
                f"fs.readFile: {target.shown} is not UTF-8 text (byte {exc.start}); binary files are not supported"
            ) from None

    def _read_bytes(self, target: Target) -> bytes:
        dfd, name = self._parent(target)
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dfd)
        finally:
            os.close(dfd)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory")
            if not stat.S_ISREG(st.st_mode):
                raise HostApiError(f"fs.readFile: {target.shown} is not a regular file")
            if st.st_size > self._max_read:
                raise self._too_big(target, st.st_size)
            chunks: list[bytes] = []
            total = 0
            while chunk := os.read(fd, _CHUNK):
                chunks.append(chunk)
                total += len(chunk)
                if total > self._max_read:  # it grew while being read
                    raise self._too_big(target, total)
            return b"".join(chunks)
        finally:
            os.close(fd)

    def _too_big(self, target: Target, size: int) -> HostApiError:
        return HostApiError(
            f"fs.readFile: {target.shown} is {size} bytes, above the {self._max_read}-byte cap "
            "(SMARTBOTIC_MAX_OUTPUT_BYTES)"
        )

    async def write_file(self, args: list[JSON]) -> JSON:
        path, data = take("fs.writeFile", args, ("path", "data"))
        if not isinstance(data, str):
            kind = type(data).__name__
            raise HostApiError(f"fs.writeFile: data must be a string, got {kind}; encode objects with json.dumps")
        target = self.resolve("fs.writeFile", path)
        try:
            payload = data.encode("utf-8")
        except UnicodeEncodeError:
            raise HostApiError("fs.writeFile: data is not valid Unicode text (lone surrogate)") from None

        def write(t: Target) -> None:
            dfd, name = self._parent(t)
            try:
                fd = os.open(name, _WRITE_FLAGS, 0o666, dir_fd=dfd)
            finally:
                os.close(dfd)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise HostApiError(f"fs.writeFile: {t.shown} is not a regular file")
                view = memoryview(payload)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)

        await self._run("fs.writeFile", target, write)
        return None

    async def exists(self, args: list[JSON]) -> JSON:
        (path,) = take("fs.exists", args, ("path",))
        target = self.resolve("fs.exists", path)

        def check(t: Target) -> bool:
            try:
                dfd, name = self._parent(t)
            except (FileNotFoundError, NotADirectoryError):
                return False
            try:
                os.stat(name, dir_fd=dfd, follow_symlinks=False)
                return True
            except FileNotFoundError:
                return False
            finally:
                os.close(dfd)

        return await self._run("fs.exists", target, check)

    async def mkdir(self, args: list[JSON]) -> JSON:
        (path,) = take("fs.mkdir", args, ("path",))
        target = self.resolve("fs.mkdir", path)

        def make(t: Target) -> None:
            os.makedirs(t.root, exist_ok=True)  # an operator-configured root; creating it is safe
            fd = self._open_dir(t.root, ())
            try:
                for part in t.parts:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, 0o777, dir_fd=fd)
                    try:
                        child = self._open_child_dir(fd, part)
                    except NotADirectoryError:
                        raise HostApiError(f"fs.mkdir: {t.shown}: {part} exists and is not a directory") from None
                    os.close(fd)
                    fd = child
            finally:
                os.close(fd)

        await self._run("fs.mkdir", target, make)
        return None

    async def unlink(self, args: list[JSON]) -> JSON:
        (path,) = take("fs.unlink", args, ("path",))
        target = self.resolve("fs.unlink", path, follow_last=False)

        def remove(t: Target) -> None:
            dfd, name = self._parent(t)
            try:
                if stat.S_ISDIR(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode):
                    raise HostApiError(f"fs.unlink: {t.shown} is a directory; fs.unlink removes files only")
                os.unlink(name, dir_fd=dfd)
            finally:
                os.close(dfd)

        await self._run("fs.unlink", target, remove)
        return None

    async def stat(self, args: list[JSON]) -> JSON:
        (path,) = take("fs.stat", args, ("path",))
        target = self.resolve("fs.stat", path)

        def lstat(t: Target) -> os.stat_result:
            dfd, name = self._parent(t)
            try:
                return os.stat(name, dir_fd=dfd, follow_symlinks=False)
            finally:
                os.close(dfd)

        st = await self._run("fs.stat", target, lstat)
        return {
            "size": st.st_size,
            "modifiedAt": _mtime_ms(st),
            "isDirectory": stat.S_ISDIR(st.st_mode),
            "isFile": stat.S_ISREG(st.st_mode),
        }

    async def readdir(self, args: list[JSON]) -> JSON:
        (path,) = take("fs.readdir", args, ("path",))
        target = self.resolve("fs.readdir", path)
        return await self._run("fs.readdir", target, self._list)

    def _list(self, target: Target) -> list[JSON]:
        fd = self._open_dir(target.root, target.parts)
        entries: list[JSON] = []
        try:
            with os.scandir(fd) as it:
                for entry in it:
                    st = self._entry_stat(target.real, entry)
                    if st is None:
                        continue
                    entries.append(
                        {
                            "name": entry.name,
                            "path": os.path.join(target.real, entry.name),
                            "size": st.st_size,
                            "modifiedAt": _mtime_ms(st),
                            "isDirectory": stat.S_ISDIR(st.st_mode),
                        }
                    )
        finally:
            os.close(fd)
        entries.sort(key=lambda e: e["name"])
        return entries

    def _entry_stat(self, directory: str, entry: os.DirEntry[str]) -> os.stat_result | None:
        """The entry's metadata, or None when it vanished meanwhile."""
        try:
            if entry.is_symlink():
                real = os.path.realpath(os.path.join(directory, entry.name))
                if self._unconfined or any(_inside(real, os.path.realpath(r)) for r in self._roots):
                    try:
                        return os.stat(real)
                    except FileNotFoundError:
                        pass  # dangling: describe the link itself
            return entry.stat(follow_symlinks=False)
        except FileNotFoundError:
            return None
