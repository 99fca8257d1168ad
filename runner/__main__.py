"""``python -m runner``: the gRPC RunnerService and the background loops."""

from __future__ import annotations

import asyncio
import logging
import sys

from .settings import Settings, SettingsError


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        settings = Settings.from_env()
    except SettingsError as exc:
        print(f"runner: {exc}", file=sys.stderr)
        return 2
    # The sandbox's forkserver must start before any gRPC or pymongo thread exists.
    from .sandbox import SandboxLimits, SandboxPool

    pool = SandboxPool(
        SandboxLimits(
            wall_seconds=settings.node_timeout_seconds,
            cpu_seconds=settings.node_timeout_seconds,
            memory_bytes=settings.node_memory_mb * 1024 * 1024,
            max_output_bytes=settings.max_output_bytes,
        ),
        size=settings.workers,
    )
    pool.start()
    from .server import serve

    try:
        asyncio.run(serve(settings, pool))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
