"""``smartbotic.http.request(method, url, headers=None, body=None, timeout=None)``.

- ``method``: GET, HEAD, POST, PUT, PATCH, DELETE or OPTIONS (any case).
- ``url``: http or https only.
- ``headers``: an object of string (or number) values.
- ``body``: a string is sent as text (``text/plain; charset=utf-8`` unless
  a Content-Type header is given); any other JSON value is sent as JSON
  (``application/json`` unless given).
- ``timeout``: seconds for the whole exchange, default 30, at most 300.

Returns ``{status, headers, body}`` for every status, 4xx and 5xx included.
Header names are lower-cased; repeated headers are joined with ``", "``.
The body is parsed when the content type is JSON (``application/json`` or
``*+json``; an empty body is null, and a body that does not parse is returned
as text); otherwise it is text in the response's charset (UTF-8 by default,
invalid bytes replaced). A response body over the cap (10 MiB, counted after
decompression) fails the call. Redirects are followed (at most 10). One
``aiohttp.ClientSession`` serves all calls; it keeps no cookies, so nodes never
see each other's.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

import aiohttp
from yarl import URL

from runner.hostapi.args import take, want_seconds, want_str
from runner.sandbox.types import JSON, HostApiError

DEFAULT_TIMEOUT_SECONDS = 30.0
MAX_TIMEOUT_SECONDS = 300.0
DEFAULT_RESPONSE_CAP = 10 * 1024 * 1024
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_CHUNK = 64 * 1024
_ARGS = ("method", "url", "headers", "body", "timeout")


def _url(value: JSON) -> URL:
    text = want_str("http.request", "url", value)
    try:
        url = URL(text)
    except ValueError as exc:
        raise HostApiError(f"http.request: {text!r} is not a valid URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise HostApiError(f"http.request: only http:// and https:// URLs with a host are allowed, got {text!r}")
    return url


def _headers(value: JSON) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise HostApiError(f"http.request: headers must be an object, got {type(value).__name__}")
    headers: dict[str, str] = {}
    for name, raw in value.items():
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            raise HostApiError(f"http.request: header {name!r} must be a string, got {type(raw).__name__}")
        text = str(raw)
        if not name or any(c in name for c in "\r\n:") or any(c in text for c in "\r\n"):
            raise HostApiError(f"http.request: header {name!r} has an empty name or a line break")
        headers[name] = text
    return headers


def _payload(body: JSON, headers: dict[str, str]) -> bytes | None:
    """The request body's bytes; sets a Content-Type unless the script gave one."""
    if body is None:
        return None
    is_text = isinstance(body, str)
    if not any(name.lower() == "content-type" for name in headers):
        headers["Content-Type"] = "text/plain; charset=utf-8" if is_text else "application/json"
    text = body if is_text else json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise HostApiError("http.request: body is not valid Unicode text (lone surrogate)") from None


def _response_headers(resp: aiohttp.ClientResponse) -> dict[str, str]:
    headers: dict[str, str] = {}
    for name, value in resp.headers.items():
        key = name.lower()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return headers


def _body(resp: aiohttp.ClientResponse, data: bytes) -> JSON:
    mime = resp.content_type.lower()
    charset = resp.charset or "utf-8"
    try:
        text = data.decode(charset, errors="replace")
    except LookupError:
        text = data.decode("utf-8", errors="replace")
    if mime == "application/json" or mime.endswith("+json"):
        if not text.strip():
            return None
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


class HttpClient:
    """The http calls, over one shared session created on first use."""

    def __init__(self, *, response_cap: int = DEFAULT_RESPONSE_CAP) -> None:
        self._cap = response_cap
        self._session: aiohttp.ClientSession | None = None

    def handlers(self) -> dict[str, Callable[[list[JSON]], Awaitable[JSON]]]:
        return {"http.request": self.request}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar(), trust_env=False)
        return self._session

    async def request(self, args: list[JSON]) -> JSON:
        method_arg, url_arg, headers_arg, body, timeout_arg = take("http.request", args, _ARGS, 2)
        method = want_str("http.request", "method", method_arg).upper()
        if method not in METHODS:
            raise HostApiError(f"http.request: method {method_arg!r} is not one of {', '.join(sorted(METHODS))}")
        url = _url(url_arg)
        headers = _headers(headers_arg)
        data = _payload(body, headers)
        timeout = want_seconds(
            "http.request", "timeout", timeout_arg, default=DEFAULT_TIMEOUT_SECONDS, maximum=MAX_TIMEOUT_SECONDS
        )
        what = f"http.request: {method} {url}"
        try:
            async with self._client().request(
                method, url, headers=headers, data=data, timeout=aiohttp.ClientTimeout(total=timeout)
            ) as resp:
                payload = await self._read(resp, what)
                return {"status": resp.status, "headers": _response_headers(resp), "body": _body(resp, payload)}
        except TimeoutError:
            raise HostApiError(f"{what} timed out after {timeout:g} s") from None
        except aiohttp.ClientError as exc:
            raise HostApiError(f"{what} failed: {exc or type(exc).__name__}") from None

    async def _read(self, resp: aiohttp.ClientResponse, what: str) -> bytes:
        too_big = HostApiError(f"{what}: the response body is larger than the {self._cap}-byte cap")
        if resp.content_length is not None and resp.content_length > self._cap:
            raise too_big
        chunks: list[bytes] = []
        total = 0
        while chunk := await resp.content.read(_CHUNK):
            total += len(chunk)
            if total > self._cap:
                raise too_big
            chunks.append(chunk)
        return b"".join(chunks)
