"""``python -m webserver``: serve webhooks and the REST API on SMARTBOTIC_HTTP_HOST:SMARTBOTIC_HTTP_PORT."""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

from aiohttp import web

from runner.settings import Settings, SettingsError
from webserver.app import make_app

log = logging.getLogger("webserver")


def _url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


async def serve(settings: Settings) -> None:
    runner = web.AppRunner(make_app(settings))
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.http_host, settings.http_port)
        await site.start()
        port = next((addr[1] for addr in runner.addresses if isinstance(addr, tuple)), settings.http_port)
        log.info("webserver listening on %s (runner at %s)", _url(settings.http_host, port), settings.runner_target)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        log.info("webserver stopping")
    finally:
        await runner.cleanup()


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"webserver: bad configuration: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(settings))
    except OSError as exc:
        log.error("cannot listen on %s: %s", _url(settings.http_host, settings.http_port), exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
