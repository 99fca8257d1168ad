"""The log lines of one node run: ``smartbotic.log.*`` and ``print``, with caps."""

from __future__ import annotations

import time
from typing import Any

from runner.sandbox.types import JSON, SandboxLimits

LEVELS = ("info", "warn", "error")


def _text(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception as exc:  # e.g. str() of an int beyond the digit limit
        return f"<{type(value).__name__} that cannot be shown: {exc}>"


class LogBook:
    """Keeps at most ``max_log_lines`` lines of at most ``max_log_line_bytes`` each, and says when it drops or cuts."""

    def __init__(self, limits: SandboxLimits) -> None:
        self._max_lines = limits.max_log_lines
        self._max_bytes = limits.max_log_line_bytes
        self._entries: list[dict[str, JSON]] = []
        self._dropped = 0
        self._pending_print: list[str] = []

    def add(self, level: str, *parts: object) -> None:
        if len(self._entries) >= self._max_lines:
            self._dropped += 1
            return
        message = " ".join(_text(p) for p in parts)
        try:
            data = message.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate becomes "?"
            data = message.encode("utf-8", "replace")
            message = data.decode("utf-8")
        if len(data) > self._max_bytes:
            kept = data[: self._max_bytes].decode("utf-8", "ignore")
            message = f"{kept}… [line cut: {len(data)} bytes, limit {self._max_bytes}]"
        self._entries.append({"level": level, "message": message, "at": int(time.time() * 1000)})

    def write_printed(self, text: str) -> None:
        """``print`` output: each complete line becomes an info line."""
        if "\n" not in text:
            self._pending_print.append(text)
            return
        head, _, tail = text.rpartition("\n")
        lines = ("".join(self._pending_print) + head).split("\n")
        self._pending_print = [tail] if tail else []
        for line in lines:
            self.add("info", line)

    def entries(self) -> list[dict[str, JSON]]:
        """The lines, with the unfinished ``print`` line and a notice of dropped lines at the end."""
        if self._pending_print:
            self.add("info", "".join(self._pending_print))
            self._pending_print = []
        if not self._dropped:
            return self._entries
        notice = f"{self._dropped} more log lines dropped (limit {self._max_lines} per node run)"
        return [*self._entries, {"level": "warn", "message": notice, "at": int(time.time() * 1000)}]


class LogPrinter:
    """``_print_``: RestrictedPython makes one per function that uses ``print``."""

    __slots__ = ("_book", "_text")

    def __init__(self, book: LogBook, getattr_: Any = None) -> None:
        self._book = book
        self._text: list[str] = []

    def write(self, text: str) -> None:
        self._text.append(text)
        self._book.write_printed(text)

    def __call__(self) -> str:
        """The ``printed`` name: what this function printed so far."""
        return "".join(self._text)

    def _call_print(self, *objects: object, **kwargs: Any) -> None:
        if kwargs.get("file") is not None:
            raise TypeError("print(file=...) is not available in node scripts; print goes to the node's log")
        kwargs["file"] = self
        print(*objects, **kwargs)
