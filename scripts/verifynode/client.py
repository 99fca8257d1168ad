"""The harness's way to the stack: plain HTTP (no redirects followed, so 3xx statuses can be asserted)."""

from __future__ import annotations

import http.client
import json
import urllib.parse
from dataclasses import dataclass
from typing import Any

REQUEST_TIMEOUT_S = 60.0


class CallError(RuntimeError):
    """The stack could not be reached or answered something the harness cannot read."""


@dataclass(frozen=True)
class Response:
    status: int
    headers: list[tuple[str, str]]
    text: str
    content_type: str

    @property
    def body(self) -> Any:
        """Parsed JSON for a JSON response, else the text; an empty body is ``None``."""
        if not self.text:
            return None
        if "json" in self.content_type:
            try:
                return json.loads(self.text)
            except ValueError:
                return self.text
        return self.text

    def header_map(self) -> dict[str, str]:
        """Lower-cased names; a repeated header's values joined by ", "."""
        out: dict[str, str] = {}
        for name, value in self.headers:
            key = name.lower()
            out[key] = f"{out[key]}, {value}" if key in out else value
        return out

    def describe(self) -> str:
        return f"{self.status} {self.text[:300]}"


@dataclass(frozen=True)
class Http:
    base_url: str

    def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        has_json: bool = False,
        text_body: str | None = None,
        headers: dict[str, str] | None = None,
        timeout: float = REQUEST_TIMEOUT_S,
    ) -> Response:
        url = urllib.parse.urlsplit(self.base_url)
        host = url.hostname or "127.0.0.1"
        port = url.port or (443 if url.scheme == "https" else 80)
        conn_type = http.client.HTTPSConnection if url.scheme == "https" else http.client.HTTPConnection
        send_headers = {"Accept": "*/*"}
        data: bytes | None = None
        if has_json or json_body is not None:
            data = json.dumps(json_body).encode()
            send_headers["Content-Type"] = "application/json"
        elif text_body is not None:
            data = text_body.encode()
            send_headers["Content-Type"] = "text/plain; charset=utf-8"
        send_headers.update(headers or {})
        conn = conn_type(host, port, timeout=timeout)
        try:
            conn.request(method, url.path.rstrip("/") + path, body=data, headers=send_headers)
            resp = conn.getresponse()
            raw = resp.read()
            return Response(
                status=resp.status,
                headers=list(resp.getheaders()),
                text=raw.decode(errors="replace"),
                content_type=(resp.getheader("Content-Type") or "").lower(),
            )
        except (OSError, http.client.HTTPException) as exc:
            raise CallError(f"{method} {path}: {type(exc).__name__}: {exc}") from None
        finally:
            conn.close()

    def api(self, method: str, path: str, body: Any = None, *, timeout: float = REQUEST_TIMEOUT_S) -> Response:
        """A ``/api/v1`` call with a JSON body (``None`` sends no body)."""
        return self.request(method, "/api/v1" + path, json_body=body, timeout=timeout)
