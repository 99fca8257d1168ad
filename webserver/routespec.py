"""The shape of one route: what aiohttp registers and what OpenAPI describes.

One table of these (:mod:`webserver.routes`) drives both, so the document
cannot drift from the server.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

ANY_METHOD = "*"
ANY_METHOD_EXPANDS_TO = ("get", "put", "post", "delete", "options", "head", "patch")
"""What a ``*`` route is in OpenAPI (every method a path item can hold, except trace)."""

_PLACEHOLDER = re.compile(r"\{(\w+)(?::[^{}]*)?\}")


class Auth(enum.Enum):
    NONE = "none"
    """Never needs a key (health, OpenAPI, webhooks)."""
    REQUIRED = "required"
    """Needs ``Authorization: Bearer <key>`` when API keys are configured."""
    OPTIONAL = "optional"
    """Authorised otherwise (resume: by its token); a key, when given, must be valid and names the caller."""


@dataclass(frozen=True)
class Param:
    """A query parameter."""

    name: str
    type: str
    """JSON Schema type: string, integer, number or boolean."""
    description: str
    enum: tuple[str, ...] = ()


@dataclass(frozen=True)
class Body:
    """A JSON request body."""

    schema: str
    """Name of a schema in the OpenAPI components."""
    description: str
    required: bool = True


@dataclass(frozen=True)
class Route:
    method: str
    """Upper-case HTTP method, or ``*`` for any."""
    path: str
    """aiohttp path; ``{name:regex}`` placeholders are allowed."""
    handler: Handler
    operation_id: str
    summary: str
    ok_status: int
    ok_schema: str
    """Component schema of the success body."""
    auth: Auth = Auth.REQUIRED
    query: tuple[Param, ...] = ()
    body: Body | None = None
    statuses: tuple[int, ...] = ()
    """Other statuses this route may answer, besides those every route of its kind may (see openapi)."""
    accepted_schema: str = ""
    """Schema of a 202 answer when it differs from ``ok_schema``."""
    calls_runner: bool = True
    """False for routes the webserver answers alone (no 501/503 from the runner)."""

    @property
    def openapi_path(self) -> str:
        """The path with placeholders as OpenAPI writes them: ``{name}``."""
        return openapi_path(self.path)

    @property
    def path_params(self) -> tuple[str, ...]:
        return tuple(_PLACEHOLDER.findall(self.path))

    @property
    def openapi_methods(self) -> tuple[str, ...]:
        return ANY_METHOD_EXPANDS_TO if self.method == ANY_METHOD else (self.method.lower(),)


def openapi_path(path: str) -> str:
    return _PLACEHOLDER.sub(lambda m: "{" + m.group(1) + "}", path)
