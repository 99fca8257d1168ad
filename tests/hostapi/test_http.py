"""smartbotic.http.request against a real aiohttp server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
from aiohttp import web

from runner.hostapi import HostApi, HostApiError
from tests.conftest import free_port
from tests.hostapi.conftest import SCOPE, MakeApi


async def echo(request: web.Request) -> web.Response:
    return web.json_response(
        {
            "method": request.method,
            "contentType": request.headers.get("Content-Type"),
            "auth": request.headers.get("Authorization"),
            "cookie": request.headers.get("Cookie"),
            "body": (await request.read()).decode(),
        }
    )


async def json_reply(request: web.Request) -> web.Response:
    resp = web.json_response({"ok": True, "items": [1, 2.5, None]}, headers={"X-Trace": "abc"})
    resp.headers.add("X-Multi", "one")
    resp.headers.add("X-Multi", "two")
    return resp


async def text_reply(request: web.Request) -> web.Response:
    return web.Response(text="héllo", content_type="text/plain", charset="utf-8")


async def status(request: web.Request) -> web.Response:
    code = int(request.match_info["code"])
    return web.json_response({"error": f"status {code}"}, status=code)


async def slow(request: web.Request) -> web.Response:
    await asyncio.sleep(10)  # longer than any timeout a test uses; cancelled at teardown
    return web.Response(text="late")


async def big(request: web.Request) -> web.Response:
    return web.Response(body=b"x" * int(request.query["n"]))


async def big_streamed(request: web.Request) -> web.StreamResponse:
    resp = web.StreamResponse()  # chunked: no Content-Length to check up front
    await resp.prepare(request)
    for _ in range(int(request.query["n"]) // 100):
        await resp.write(b"y" * 100)
    await resp.write_eof()
    return resp


async def bad_json(request: web.Request) -> web.Response:
    return web.Response(text="{not json", content_type="application/json")


async def problem_json(request: web.Request) -> web.Response:
    return web.Response(text='{"title": "nope"}', status=422, content_type="application/problem+json")


async def empty_json(request: web.Request) -> web.Response:
    return web.Response(status=200, content_type="application/json")


async def set_cookie(request: web.Request) -> web.Response:
    resp = web.Response(text="set")
    resp.set_cookie("session", "node-a-secret")
    return resp


async def redirect(request: web.Request) -> web.Response:
    raise web.HTTPFound("/json")


@pytest.fixture
async def server() -> AsyncIterator[str]:
    app = web.Application()
    app.router.add_route("*", "/echo", echo)
    app.router.add_get("/json", json_reply)
    app.router.add_get("/text", text_reply)
    app.router.add_get("/status/{code}", status)
    app.router.add_get("/slow", slow)
    app.router.add_get("/big", big)
    app.router.add_get("/big-streamed", big_streamed)
    app.router.add_get("/bad-json", bad_json)
    app.router.add_get("/problem", problem_json)
    app.router.add_get("/empty-json", empty_json)
    app.router.add_get("/set-cookie", set_cookie)
    app.router.add_get("/redirect", redirect)
    runner = web.AppRunner(app, shutdown_timeout=0.1)  # don't wait for /slow or idle keep-alive connections
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    yield f"http://127.0.0.1:{port}"
    await runner.cleanup()


@pytest.fixture
def api(make_api: MakeApi) -> HostApi:
    return make_api()


async def request(api: HostApi, *args: object) -> dict[str, object]:
    result = await api.call(SCOPE, "http.request", list(args))
    assert isinstance(result, dict)
    return result


async def test_json_response_is_parsed_and_header_names_lowercased(api: HostApi, server: str) -> None:
    result = await request(api, "GET", f"{server}/json")
    assert result["status"] == 200
    assert result["body"] == {"ok": True, "items": [1, 2.5, None]}
    headers = result["headers"]
    assert isinstance(headers, dict)
    assert headers["x-trace"] == "abc"
    assert headers["x-multi"] == "one, two"
    assert headers["content-type"].startswith("application/json")


async def test_text_response_is_returned_as_text(api: HostApi, server: str) -> None:
    result = await request(api, "get", f"{server}/text")
    assert (result["status"], result["body"]) == (200, "héllo")


async def test_a_dict_body_is_sent_as_json(api: HostApi, server: str) -> None:
    result = await request(api, "POST", f"{server}/echo", {"Authorization": "Bearer t0ken"}, {"a": [1, "ü"]})
    assert result["body"] == {
        "method": "POST",
        "contentType": "application/json",
        "auth": "Bearer t0ken",
        "cookie": None,
        "body": '{"a":[1,"ü"]}',
    }


async def test_a_string_body_is_sent_as_text_and_a_given_content_type_wins(api: HostApi, server: str) -> None:
    plain = await request(api, "PUT", f"{server}/echo", None, "a=1")
    assert plain["body"] == {
        "method": "PUT",
        "contentType": "text/plain; charset=utf-8",
        "auth": None,
        "cookie": None,
        "body": "a=1",
    }
    form = await request(api, "POST", f"{server}/echo", {"content-type": "application/x-www-form-urlencoded"}, "a=1")
    body = form["body"]
    assert isinstance(body, dict)
    assert body["contentType"] == "application/x-www-form-urlencoded"


@pytest.mark.parametrize("code", [201, 404, 500])
async def test_non_2xx_statuses_are_returned_not_raised(api: HostApi, server: str, code: int) -> None:
    result = await request(api, "GET", f"{server}/status/{code}")
    assert (result["status"], result["body"]) == (code, {"error": f"status {code}"})


async def test_redirects_are_followed(api: HostApi, server: str) -> None:
    result = await request(api, "GET", f"{server}/redirect")
    assert (result["status"], result["body"]) == (200, {"ok": True, "items": [1, 2.5, None]})


async def test_json_like_content_types_are_parsed(api: HostApi, server: str) -> None:
    result = await request(api, "GET", f"{server}/problem")
    assert (result["status"], result["body"]) == (422, {"title": "nope"})


async def test_invalid_json_is_returned_as_text_and_empty_json_as_null(api: HostApi, server: str) -> None:
    assert (await request(api, "GET", f"{server}/bad-json"))["body"] == "{not json"
    assert (await request(api, "GET", f"{server}/empty-json"))["body"] is None


async def test_the_timeout_is_named_when_it_passes(api: HostApi, server: str) -> None:
    started = time.monotonic()
    with pytest.raises(HostApiError, match=r"http\.request: GET http://127\.0\.0\.1:\d+/slow timed out after 0\.3 s"):
        await request(api, "GET", f"{server}/slow", None, None, 0.3)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize("path", ["big", "big-streamed"])
async def test_a_response_over_the_cap_is_refused_naming_the_cap(make_api: MakeApi, server: str, path: str) -> None:
    api = make_api(http_response_cap=1000)
    ok = await request(api, "GET", f"{server}/{path}?n=1000")
    assert len(str(ok["body"])) == 1000
    with pytest.raises(HostApiError, match="the response body is larger than the 1000-byte cap"):
        await request(api, "GET", f"{server}/{path}?n=1100")


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "not a url", "http://", "javascript:alert(1)"]
)
async def test_only_http_and_https_urls_are_allowed(api: HostApi, url: str) -> None:
    with pytest.raises(HostApiError, match=r"http\.request: .*(only http:// and https://|not a valid URL)"):
        await request(api, "GET", url)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["TRACE", "http://127.0.0.1/"], "method 'TRACE' is not one of"),
        (["GET"], r"http\.request\(method, url, headers=None, body=None, timeout=None\) takes 2 to 5 arguments"),
        (["GET", "http://127.0.0.1/", ["a"]], "headers must be an object, got list"),
        (["GET", "http://127.0.0.1/", {"X-A": "1\r\nX-B: 2"}], "has an empty name or a line break"),
        (["GET", "http://127.0.0.1/", {"X-A": None}], "header 'X-A' must be a string"),
        (["GET", "http://127.0.0.1/", None, None, 301], "at most 300 seconds"),
    ],
)
async def test_bad_arguments_are_refused(api: HostApi, args: list[object], message: str) -> None:
    with pytest.raises(HostApiError, match=message):
        await api.call(SCOPE, "http.request", args)


async def test_a_refused_connection_is_an_error_naming_the_url(api: HostApi) -> None:
    url = f"http://127.0.0.1:{free_port()}/x"
    with pytest.raises(HostApiError, match=rf"http\.request: GET {url} failed: "):
        await request(api, "GET", url)


async def test_cookies_are_not_kept_between_calls(api: HostApi, server: str) -> None:
    await request(api, "GET", f"{server}/set-cookie")
    body = (await request(api, "GET", f"{server}/echo"))["body"]
    assert isinstance(body, dict)
    assert body["cookie"] is None


async def test_the_session_is_reopened_after_close(api: HostApi, server: str) -> None:
    await request(api, "GET", f"{server}/json")
    await api.close()
    assert (await request(api, "GET", f"{server}/json"))["status"] == 200
