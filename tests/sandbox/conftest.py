"""Real sandbox pools (worker processes) shared by the sandbox tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from runner.sandbox import SandboxPool
from tests.sandbox.support import ABUSE_LIMITS, FUNCTIONAL_LIMITS, FakeHost


@pytest.fixture
def host() -> FakeHost:
    return FakeHost()


@pytest_asyncio.fixture(scope="session")
async def pool() -> AsyncIterator[SandboxPool]:
    """Two workers with generous time limits, for behaviour tests."""
    sandbox = SandboxPool(FUNCTIONAL_LIMITS, size=2)
    sandbox.start()
    yield sandbox
    await sandbox.close()


@pytest_asyncio.fixture(scope="session")
async def solo_pool() -> AsyncIterator[SandboxPool]:
    """One worker, so an attack and the probe after it run in the same process."""
    sandbox = SandboxPool(FUNCTIONAL_LIMITS, size=1)
    sandbox.start()
    yield sandbox
    await sandbox.close()


@pytest_asyncio.fixture(scope="session")
async def abuse_pool() -> AsyncIterator[SandboxPool]:
    """Two workers with a 1 s wall-clock budget and 256 MiB each."""
    sandbox = SandboxPool(ABUSE_LIMITS, size=2)
    sandbox.start()
    yield sandbox
    await sandbox.close()
