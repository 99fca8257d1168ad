"""Shared fixtures: one real MongoDB-compatible server per test session.

``MONGODB_URI`` set → tests use that server; otherwise the embedded
SecantusDB server is started as a separate process on a free port with
in-memory storage. Every test gets a fresh database name.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pymongo import MongoClient

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_mongo(uri: str, proc: subprocess.Popen[bytes] | None, deadline_s: float = 30.0) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"embedded MongoDB server exited with {proc.returncode}")
        try:
            MongoClient(uri, serverSelectionTimeoutMS=300).admin.command("ping")
            return
        except Exception:
            time.sleep(0.1)
    raise RuntimeError(f"MongoDB at {uri} not reachable after {deadline_s}s")


@pytest.fixture(scope="session")
def mongo_uri() -> Iterator[str]:
    external = os.environ.get("MONGODB_URI")
    if external:
        _wait_for_mongo(external, None)
        yield external
        return
    port = free_port()
    exe = Path(sys.executable).parent / "secantusd-py"
    cmd = [str(exe), "--host", "127.0.0.1", "--port", str(port), "--storage-path", ":memory:", "--log-level", "WARNING"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    uri = f"mongodb://127.0.0.1:{port}/?directConnection=true"
    try:
        _wait_for_mongo(uri, proc)
        yield uri
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture
def db_name() -> str:
    """A fresh database name for this test."""
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def sync_db(mongo_uri: str, db_name: str) -> Iterator[object]:
    client: MongoClient[dict[str, object]] = MongoClient(mongo_uri)
    yield client[db_name]
    client.drop_database(db_name)
    client.close()
