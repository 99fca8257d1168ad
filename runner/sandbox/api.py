"""What a node script sees besides builtins: ``ctx`` and the ``smartbotic`` object.

Every ``smartbotic.*`` call except ``utils.getFieldValue`` and ``log.*`` is
sent to the runner as ``(method, [positional args])`` through a
:class:`HostChannel`; keyword arguments are mapped to their position and
trailing optional arguments that were not given are left off. A refused call
raises :class:`SmartboticError` in the script with the runner's message.

These objects hold the channel in a slot whose name starts with ``_``; the
guards let scripts read only the names registered below, so the channel (and
the pipe behind it) is out of reach.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from runner.sandbox.fieldpath import get_field_value
from runner.sandbox.guards import register_public
from runner.sandbox.logbook import LogBook
from runner.sandbox.types import JSON


class SmartboticError(Exception):
    """A ``smartbotic.*`` call was refused or failed; ``str(e)`` is the runner's message."""


class HostChannel(Protocol):
    def call(self, method: str, args: list[JSON]) -> JSON:
        """Send one call to the runner and return its result, or raise SmartboticError."""
        ...


class _HostApi:
    __slots__ = ("_channel",)

    def __init__(self, channel: HostChannel) -> None:
        self._channel = channel

    def _call(self, method: str, required: tuple[JSON, ...], optional: tuple[JSON, ...] = ()) -> JSON:
        given = list(optional)
        while given and given[-1] is None:
            given.pop()
        return self._channel.call(method, [*required, *given])


class FsApi(_HostApi):
    """``smartbotic.fs``: files under the runner's configured roots."""

    __slots__ = ()

    def readFile(self, path: str) -> JSON:
        return self._call("fs.readFile", (path,))

    def writeFile(self, path: str, data: str) -> JSON:
        return self._call("fs.writeFile", (path, data))

    def exists(self, path: str) -> JSON:
        return self._call("fs.exists", (path,))

    def mkdir(self, path: str) -> JSON:
        return self._call("fs.mkdir", (path,))

    def unlink(self, path: str) -> JSON:
        return self._call("fs.unlink", (path,))

    def stat(self, path: str) -> JSON:
        return self._call("fs.stat", (path,))

    def readdir(self, path: str) -> JSON:
        return self._call("fs.readdir", (path,))


class ProcessApi(_HostApi):
    """``smartbotic.process``."""

    __slots__ = ()

    def exec(self, command: JSON, timeout: float | None = None) -> JSON:
        return self._call("process.exec", (command,), (timeout,))


class HttpApi(_HostApi):
    """``smartbotic.http``."""

    __slots__ = ()

    def request(
        self,
        method: str,
        url: str,
        headers: JSON = None,
        body: JSON = None,
        timeout: float | None = None,
    ) -> JSON:
        return self._call("http.request", (method, url), (headers, body, timeout))


class StorageApi(_HostApi):
    """``smartbotic.storage``: state kept per workflow and node."""

    __slots__ = ()

    def get(self, key: str) -> JSON:
        return self._call("storage.get", (key,))

    def set(self, key: str, value: JSON) -> JSON:
        return self._call("storage.set", (key, value))

    def delete(self, key: str) -> JSON:
        return self._call("storage.delete", (key,))


class CursorApi(_HostApi):
    """``smartbotic.cursor``: the polling triggers' cursor (begin a poll, stage what it reached)."""

    __slots__ = ()

    def begin(self) -> JSON:
        return self._call("cursor.begin", ())

    def stage(self, value: JSON) -> JSON:
        return self._call("cursor.stage", (value,))


class Collection(_HostApi):
    """``smartbotic.db.collection(name)``; each call sends the collection name first."""

    __slots__ = ("_name",)

    def __init__(self, channel: HostChannel, name: str) -> None:
        super().__init__(channel)
        self._name = name

    def insert(self, doc: JSON) -> JSON:
        return self._call("db.insert", (self._name, doc))

    def update(self, filter: JSON, update: JSON) -> JSON:
        return self._call("db.update", (self._name, filter, update))

    def find(self, filter: JSON = None, sort: JSON = None, limit: int | None = None) -> JSON:
        return self._call("db.find", (self._name,), (filter, sort, limit))

    def findOne(self, filter: JSON = None) -> JSON:
        return self._call("db.findOne", (self._name,), (filter,))

    def delete(self, filter: JSON) -> JSON:
        return self._call("db.delete", (self._name, filter))

    def __repr__(self) -> str:
        return f"<collection {self._name!r}>"


class DbApi(_HostApi):
    """``smartbotic.db``."""

    __slots__ = ()

    def collection(self, name: str) -> Collection:
        if not isinstance(name, str) or not name:
            raise TypeError(f"db.collection(name): name must be a non-empty string, got {type(name).__name__}")
        return Collection(self._channel, name)


class UtilsApi:
    """``smartbotic.utils``: runs in the worker."""

    __slots__ = ()

    def getFieldValue(self, obj: JSON, path: JSON, default: JSON = None) -> JSON:
        return get_field_value(obj, path, default)


class LogApi:
    """``smartbotic.log``: lines stored with the node's result."""

    __slots__ = ("_book",)

    def __init__(self, book: LogBook) -> None:
        self._book = book

    def info(self, *parts: object) -> None:
        self._book.add("info", *parts)

    def warn(self, *parts: object) -> None:
        self._book.add("warn", *parts)

    def error(self, *parts: object) -> None:
        self._book.add("error", *parts)


class Smartbotic:
    """The ``smartbotic`` global."""

    __slots__ = ("cursor", "db", "fs", "http", "log", "process", "storage", "utils")

    def __init__(self, channel: HostChannel, book: LogBook) -> None:
        self.fs = FsApi(channel)
        self.process = ProcessApi(channel)
        self.http = HttpApi(channel)
        self.storage = StorageApi(channel)
        self.cursor = CursorApi(channel)
        self.db = DbApi(channel)
        self.utils = UtilsApi()
        self.log = LogApi(book)

    def __repr__(self) -> str:
        return "<smartbotic>"


class NodeContext:
    """The ``ctx`` argument of ``execute(ctx)`` / ``resume(ctx, answer)``."""

    __slots__ = ("_run_code", "config", "execution", "input", "node")

    def __init__(self, data: dict[str, JSON], run_code: Callable[[JSON], JSON] | None) -> None:
        self.input = data.get("input")
        self.config = data.get("config")
        self.node = data.get("node")
        self.execution = data.get("execution")
        self._run_code = run_code

    def runCode(self, value: JSON) -> JSON:
        """Run the node's user code: its ``main(value)``, and return what it returns."""
        if self._run_code is None:
            raise RuntimeError("ctx.runCode: this node has no user code")
        return self._run_code(value)

    def __repr__(self) -> str:
        return "<ctx>"


PUBLIC_NAMES: dict[type, tuple[str, ...]] = {
    FsApi: ("readFile", "writeFile", "exists", "mkdir", "unlink", "stat", "readdir"),
    ProcessApi: ("exec",),
    HttpApi: ("request",),
    StorageApi: ("get", "set", "delete"),
    CursorApi: ("begin", "stage"),
    DbApi: ("collection",),
    Collection: ("insert", "update", "find", "findOne", "delete"),
    UtilsApi: ("getFieldValue",),
    LogApi: ("info", "warn", "error"),
    Smartbotic: ("fs", "process", "http", "storage", "cursor", "db", "utils", "log"),
    NodeContext: ("input", "config", "node", "execution", "runCode"),
}
"""The only attributes a script can read on each sandbox object."""

for _cls, _names in PUBLIC_NAMES.items():
    register_public(_cls, _names)
