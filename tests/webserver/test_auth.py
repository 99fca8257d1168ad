"""API keys: hashed at start-up, compared in constant time, 401 with a Bearer challenge."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from runner.settings import Settings
from tests.webserver.conftest import AppClient
from webserver.app import make_app
from webserver.auth import bearer_token
from webserver.context import KEYRING, SETTINGS
from webserver.keyring import KeyRing

KEYS = {"key-of-alice-123": "alice", "key-of-bob-4567": "bob"}


def test_keyring_names_the_key_holder() -> None:
    ring = KeyRing(KEYS)
    assert ring.name_for("key-of-bob-4567") == "bob"
    assert ring.name_for("key-of-bob-456") is None
    assert ring.name_for("") is None


def test_keyring_keeps_only_sha256_hashes() -> None:
    ring = KeyRing(KEYS)
    assert set(ring.hashes) == {hashlib.sha256(k.encode()).digest() for k in KEYS}
    assert not any(key in repr(ring._entries) for key in KEYS)


def test_every_stored_hash_is_compared_even_after_a_match(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[bytes] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append(a)
        return real(a, b)

    monkeypatch.setattr("webserver.keyring.hmac.compare_digest", counting)
    ring = KeyRing(KEYS)
    assert ring.name_for("key-of-alice-123") == "alice"  # the first entry matches
    assert len(calls) == len(KEYS)


def test_the_app_keeps_no_plaintext_key() -> None:
    app = make_app(Settings(api_keys=dict(KEYS)))
    assert app[SETTINGS].api_keys == {}
    assert app[KEYRING].name_for("key-of-alice-123") == "alice"


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer   abc ", "abc"),
        ("Basic abc", None),
        ("Bearer", None),
        ("", None),
        (None, None),
    ],
)
def test_bearer_token(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


# With keys, routes that pass auth reach the (absent) runner: 503 means "let through".


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer wrong-key-000"}, {"Authorization": "key-of-bob-4567"}]
)
async def test_missing_or_wrong_key_is_401_with_bearer_challenge(
    app_client: AppClient, headers: dict[str, str]
) -> None:
    async with app_client(api_keys=KEYS) as client:
        resp = await client.get("/api/v1/workflows", headers=headers)
        assert resp.status == 401
        assert resp.headers["WWW-Authenticate"] == "Bearer"
        assert (await resp.json())["error"]


async def test_right_key_is_let_through(app_client: AppClient) -> None:
    async with app_client(api_keys=KEYS) as client:
        resp = await client.get("/api/v1/workflows", headers={"Authorization": "Bearer key-of-bob-4567"})
        assert resp.status == 503


async def test_auth_comes_before_the_body_is_read(app_client: AppClient) -> None:
    async with app_client(api_keys=KEYS) as client:
        resp = await client.post("/api/v1/workflows", data=b"{not json", headers={"Content-Type": "application/json"})
        assert resp.status == 401


@pytest.mark.parametrize(
    ("method", "path"),
    [("GET", "/healthz"), ("POST", "/webhook/anything"), ("POST", "/api/v1/executions/e1/resume")],
)
async def test_routes_without_key(app_client: AppClient, method: str, path: str) -> None:
    async with app_client(api_keys=KEYS) as client:
        resp = await client.request(method, path, json={"token": "t"})
        assert resp.status == 503


async def test_openapi_needs_no_key(app_client: AppClient) -> None:
    async with app_client(api_keys=KEYS) as client:
        assert (await client.get("/openapi.json")).status == 200


async def test_resume_with_a_wrong_key_is_401(app_client: AppClient) -> None:
    async with app_client(api_keys=KEYS) as client:
        resp = await client.post(
            "/api/v1/executions/e1/resume", json={"token": "t"}, headers={"Authorization": "Bearer nope-nope-nope"}
        )
        assert resp.status == 401


async def test_without_keys_no_route_needs_one(app_client: AppClient) -> None:
    async with app_client() as client:
        assert (await client.get("/api/v1/workflows")).status == 503
