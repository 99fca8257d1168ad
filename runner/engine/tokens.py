"""Resume tokens: random, shown once, stored only as a SHA-256."""

from __future__ import annotations

import hashlib
import secrets


def new_token() -> tuple[str, str]:
    """A resume token (192 random bits) and its SHA-256, the only form that is stored."""
    token = secrets.token_urlsafe(24)
    return token, hash_token(token)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
