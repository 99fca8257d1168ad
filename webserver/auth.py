"""Bearer-key authentication of ``/api/v1`` routes (DESIGN §10).

With ``SMARTBOTIC_API_KEYS`` set, a route marked :attr:`Auth.REQUIRED` needs
``Authorization: Bearer <key>``; the key's name becomes the request's
``saved_by`` / ``resumed_by`` / ``cancelled_by``.
"""

from __future__ import annotations

from aiohttp import web

from webserver.context import API_KEY_NAME, KEYRING
from webserver.errors import ApiError
from webserver.routespec import Auth, Handler

CHALLENGE = {"WWW-Authenticate": "Bearer"}


def bearer_token(header: str | None) -> str | None:
    """The key in an ``Authorization: Bearer <key>`` header, or None."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


def authenticate(request: web.Request, auth: Auth) -> str | None:
    """The caller's key name; raises 401 when a needed key is missing or a given key is wrong."""
    keyring = request.app[KEYRING]
    if auth is Auth.NONE or not keyring.enabled:
        return None
    header = request.headers.get("Authorization")
    if header is None:
        if auth is Auth.OPTIONAL:
            return None
        raise ApiError(401, "this route needs an 'Authorization: Bearer <key>' header", headers=CHALLENGE)
    token = bearer_token(header)
    if token is None:
        raise ApiError(401, "the Authorization header must be 'Bearer <key>'", headers=CHALLENGE)
    name = keyring.name_for(token)
    if name is None:
        raise ApiError(401, "the API key is not valid", headers=CHALLENGE)
    return name


def with_auth(handler: Handler, auth: Auth) -> Handler:
    """``handler`` behind the key check ``auth`` asks for."""
    if auth is Auth.NONE:
        return handler

    async def checked(request: web.Request) -> web.StreamResponse:
        request[API_KEY_NAME] = authenticate(request, auth)
        return await handler(request)

    checked.__name__ = getattr(handler, "__name__", "handler")
    checked.__doc__ = handler.__doc__
    return checked
