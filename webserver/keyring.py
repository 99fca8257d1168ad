"""API keys, kept only as SHA-256 hashes and compared in constant time."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


class KeyRing:
    """The configured API keys: ``{key: name}`` in, hashes kept, plaintext dropped."""

    __slots__ = ("_entries",)

    def __init__(self, keys: Mapping[str, str]) -> None:
        self._entries: tuple[tuple[bytes, str], ...] = tuple((_digest(key), name) for key, name in keys.items())

    @property
    def enabled(self) -> bool:
        return bool(self._entries)

    @property
    def hashes(self) -> tuple[bytes, ...]:
        return tuple(digest for digest, _ in self._entries)

    def name_for(self, presented: str) -> str | None:
        """The name of the key ``presented``, or None.

        Every stored hash is compared, match or not, so the time taken does
        not tell which key (or how much of one) matched.
        """
        digest = _digest(presented)
        found: str | None = None
        for stored, name in self._entries:
            if hmac.compare_digest(stored, digest):
                found = name
        return found
