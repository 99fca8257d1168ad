"""Settings are read once from the environment; a bad value names its variable."""

from __future__ import annotations

import subprocess
import sys

import pytest

from runner.settings import Settings, SettingsError
from tests.conftest import ROOT


def test_defaults_listen_on_localhost_only() -> None:
    s = Settings.from_env({})
    assert s.grpc_addr == "127.0.0.1:50051" and s.http_host == "127.0.0.1" and s.http_port == 8080
    assert s.allow_exec is False and s.api_keys == {}
    assert s.fs_roots == (str(s.data_dir / "files"),)


@pytest.mark.parametrize(
    ("name", "value", "fragment"),
    [
        ("SMARTBOTIC_HTTP_PORT", "eighty", "SMARTBOTIC_HTTP_PORT"),
        ("SMARTBOTIC_HTTP_PORT", "70000", "between 0 and 65535"),
        ("SMARTBOTIC_GRPC_ADDR", "localhost", "host:port"),
        ("SMARTBOTIC_ALLOW_EXEC", "maybe", "SMARTBOTIC_ALLOW_EXEC"),
        ("SMARTBOTIC_MAX_OUTPUT_BYTES", "-5", "greater than 0"),
        ("SMARTBOTIC_API_KEYS", "alice", "name:key"),
        ("SMARTBOTIC_API_KEYS", "alice:short", "shorter than 8"),
        ("SMARTBOTIC_PUBLIC_URL", "ftp://x", "http"),
    ],
)
def test_a_bad_value_names_the_variable(name: str, value: str, fragment: str) -> None:
    with pytest.raises(SettingsError) as info:
        Settings.from_env({name: value})
    assert name in str(info.value) and fragment in str(info.value)


def test_api_keys_and_fs_roots_are_parsed() -> None:
    s = Settings.from_env(
        {"SMARTBOTIC_API_KEYS": "ops:0123456789,ci:abcdefghij", "SMARTBOTIC_FS_ROOTS": "/srv/a,/srv/b"}
    )
    assert s.api_keys == {"0123456789": "ops", "abcdefghij": "ci"}
    assert s.fs_roots == ("/srv/a", "/srv/b")
    assert Settings.from_env({"SMARTBOTIC_FS_ROOTS": "*"}).fs_roots == ("*",)


@pytest.mark.parametrize("module", ["runner", "webserver"])
def test_processes_refuse_to_start_with_a_bad_value(module: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", module],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "SMARTBOTIC_HTTP_PORT": "nope", "SMARTBOTIC_GRPC_ADDR": "x"},
    )
    assert proc.returncode == 2
    assert "SMARTBOTIC_" in proc.stderr and "Traceback" not in proc.stderr
