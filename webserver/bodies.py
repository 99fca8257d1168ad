"""Request bodies and query parameters: size limit, JSON parsing, typed query values."""

from __future__ import annotations

import codecs
import contextlib
import json
import math
from typing import Any

from aiohttp import HttpVersion11, web

from webserver.context import settings_of
from webserver.errors import ApiError

CHUNK = 64 * 1024
INT32_MAX = 2**31 - 1


def too_large(size: int, limit: int, *, at_least: bool = False) -> ApiError:
    of = f"at least {size}" if at_least else f"{size}"
    return ApiError(413, f"request body of {of} bytes exceeds the limit of {limit} bytes (SMARTBOTIC_MAX_BODY_BYTES)")


async def read_limited(request: web.Request, limit: int) -> bytes:
    """The raw body, or 413 — from Content-Length before reading, or while reading a chunked body."""
    declared = request.content_length
    if declared is not None and declared > limit:
        raise too_large(declared, limit)
    chunks: list[bytes] = []
    total = 0
    async for chunk in request.content.iter_chunked(CHUNK):
        total += len(chunk)
        if total > limit:
            raise too_large(total, limit, at_least=True)
        chunks.append(chunk)
    return b"".join(chunks)


async def expect_continue(request: web.Request) -> web.StreamResponse | None:
    """``Expect: 100-continue``: refuse an oversized body before the client sends it."""
    expect = request.headers.get("Expect", "")
    if expect.lower() != "100-continue":
        return ApiError(417, f"unsupported Expect header {expect!r}; only 100-continue is").response()
    limit = settings_of(request).max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        return too_large(request.content_length, limit).response()
    if request.version == HttpVersion11:
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    return None


def is_json_content_type(content_type: str) -> bool:
    """``application/json`` or any ``+json`` type (``application/merge-patch+json``, ...)."""
    mime = content_type.split(";", 1)[0].strip().lower()
    return mime == "application/json" or mime.endswith("+json")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(raw: bytes) -> Any:
    """Parse a JSON body; an empty body is ``None``; a bad one is a 400 naming line and column."""
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"request body is not valid JSON: not UTF-8 at byte {exc.start}") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ApiError(
            400, f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:  # NaN / Infinity
        raise ApiError(400, f"request body is not valid JSON: {exc}") from None


def decode_text(raw: bytes, charset: str | None) -> str:
    """A non-JSON body as text, in its declared charset (UTF-8 when none or unknown)."""
    encoding = "utf-8"
    if charset:
        with contextlib.suppress(LookupError):
            encoding = codecs.lookup(charset).name
    return raw.decode(encoding, errors="replace")


async def read_json(request: web.Request) -> Any:
    """A REST body: always JSON, whatever the Content-Type says; empty → None."""
    return parse_json(await read_limited(request, settings_of(request).max_body_bytes))


async def read_json_object(request: web.Request, *, required: bool = True) -> dict[str, Any]:
    """A REST body that must be a JSON object (``{}`` when empty and not required)."""
    body = await read_json(request)
    if body is None and not required:
        return {}
    if not isinstance(body, dict):
        raise ApiError(400, f"request body must be a JSON object, not {json_type(body)}")
    return body


def json_type(value: Any) -> str:
    if value is None:
        return "null (empty body)"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def optional_string(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ApiError(400, f"'{key}' must be a string, not {json_type(value)}")
    return value


# --- query parameters -----------------------------------------------------------------------------------------------


def query_bool(request: web.Request, name: str, default: bool) -> bool:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    low = raw.lower()
    if low in {"true", "1", "yes"}:
        return True
    if low in {"false", "0", "no"}:
        return False
    raise ApiError(400, f"query parameter '{name}' must be true or false, not {raw!r}")


def query_int(request: web.Request, name: str, *, minimum: int = 1) -> int:
    """An integer query parameter; 0 when absent (the proto's "not set")."""
    raw = request.query.get(name)
    if raw is None or raw == "":
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"query parameter '{name}' must be an integer, not {raw!r}") from None
    if not minimum <= value <= INT32_MAX:
        raise ApiError(400, f"query parameter '{name}' must be between {minimum} and {INT32_MAX}, not {value}")
    return value


def query_seconds(request: web.Request, name: str, default: float) -> float:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise ApiError(400, f"query parameter '{name}' must be a number of seconds above 0, not {raw!r}")
    return value


def path_int(request: web.Request, name: str) -> int:
    raw = request.match_info[name]
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"'{name}' in the path must be an integer, not {raw!r}") from None
    if not 1 <= value <= INT32_MAX:
        raise ApiError(400, f"'{name}' in the path must be between 1 and {INT32_MAX}, not {value}")
    return value
