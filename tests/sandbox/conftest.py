"""Real sandbox pools (worker processes) shared by the sandbox tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from runner.sandbox import SandboxLimits, SandboxPool
from tests.sandbox.support import ABUSE_LIMITS, FUNCTIONAL_LIMITS, FakeHost


@pytest.fixture
def host() -> FakeHost:
    return FakeHost()


async def _running(limits: SandboxLimits, size: int) -> AsyncIterator[SandboxPool]:
    sandbox = SandboxPool(limits, size=size)
    sandbox.start()
    yield sandbox
    await sandbox.close()


@pytest_asyncio.fixture(scope="session")
async def pool() -> AsyncIterator[SandboxPool]:
    """Two workers with generous time limits, for behaviour tests."""
    async for sandbox in _running(FUNCTIONAL_LIMITS, 2):
        yield sandbox


@pytest_asyncio.fixture(scope="session")
async def solo_pool() -> AsyncIterator[SandboxPool]:
    """One worker, so an attack and the probe after it run in the same process."""
    async for sandbox in _running(FUNCTIONAL_LIMITS, 1):
        yield sandbox


@pytest_asyncio.fixture(scope="session")
async def abuse_pool() -> AsyncIterator[SandboxPool]:
    """Two workers with a 1 s wall-clock budget and 256 MiB each."""
    async for sandbox in _running(ABUSE_LIMITS, 2):
        yield sandbox
