"""smartbotic.process.exec with real subprocesses."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from runner.hostapi import HostApi, HostApiError
from tests.hostapi.conftest import SCOPE, MakeApi


def is_running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.fixture
def exec_api(make_api: MakeApi, tmp_path: Path) -> HostApi:
    return make_api(allow_exec=True, fs_roots=(str(tmp_path),))


async def run(api: HostApi, *args: object) -> dict[str, object]:
    result = await api.call(SCOPE, "process.exec", list(args))
    assert isinstance(result, dict)
    return result


async def test_exec_is_refused_by_default_and_says_how_to_enable_it(make_api: MakeApi, tmp_path: Path) -> None:
    api = make_api()
    with pytest.raises(HostApiError, match="SMARTBOTIC_ALLOW_EXEC=1"):
        await run(api, f"touch {tmp_path}/ran")
    assert not (tmp_path / "ran").exists()


async def test_exec_string_runs_through_the_shell(exec_api: HostApi) -> None:
    result = await run(exec_api, "echo out; echo err >&2; exit 3")
    assert result == {"exitCode": 3, "stdout": "out\n", "stderr": "err\n"}


async def test_exec_list_runs_as_argv_without_a_shell(exec_api: HostApi) -> None:
    result = await run(exec_api, ["echo", "$HOME; rm -rf /", "two"])
    assert result == {"exitCode": 0, "stdout": "$HOME; rm -rf / two\n", "stderr": ""}


async def test_exec_runs_in_the_first_fs_root(exec_api: HostApi, tmp_path: Path) -> None:
    assert (await run(exec_api, "pwd"))["stdout"] == f"{tmp_path}\n"


async def test_exec_a_signal_gives_a_negative_exit_code(exec_api: HostApi) -> None:
    assert (await run(exec_api, "kill -TERM $$"))["exitCode"] == -15


async def test_exec_does_not_leak_the_runner_environment(exec_api: HostApi, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MONGODB_URI", "mongodb://user:hunter2@db")
    monkeypatch.setenv("SMARTBOTIC_API_KEYS", "ops:supersecretkey")
    result = await run(exec_api, ["/usr/bin/env"])
    assert result["stdout"] == "PATH=/usr/local/bin:/usr/bin:/bin\n"
    shell = await run(exec_api, 'echo "[$MONGODB_URI][$SMARTBOTIC_API_KEYS]"')
    assert shell["stdout"] == "[][]\n"


async def test_exec_timeout_kills_the_process_group_and_names_the_timeout(exec_api: HostApi, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    with pytest.raises(HostApiError, match=r"did not finish within 0\.5 s and was killed"):
        await run(exec_api, f"sleep 60 & echo $! > {pid_file}; wait", 0.5)
    assert time.monotonic() - started < 5
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while is_running(child) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not is_running(child)


async def test_exec_kills_what_the_command_leaves_behind(exec_api: HostApi) -> None:
    started = time.monotonic()
    result = await run(exec_api, "sleep 60 & echo $!")
    assert time.monotonic() - started < 5  # the background sleep held stdout open; it did not make the call wait
    child = int(str(result["stdout"]).strip())
    deadline = time.monotonic() + 5
    while is_running(child) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not is_running(child)


async def test_exec_output_is_capped_with_a_marker(make_api: MakeApi) -> None:
    api = make_api(allow_exec=True, exec_output_cap=1000)
    result = await run(api, "head -c 5000 /dev/zero | tr '\\0' a; head -c 1000 /dev/zero | tr '\\0' b >&2")
    assert result["stdout"] == "a" * 1000 + "\n[stdout cut: first 1000 of 5000 bytes shown]"
    assert result["stderr"] == "b" * 1000


async def test_exec_output_that_is_not_utf8_is_replaced(exec_api: HostApi) -> None:
    assert (await run(exec_api, "printf 'ok\\377'"))["stdout"] == "ok\ufffd"


async def test_exec_of_a_missing_program_is_an_error(exec_api: HostApi) -> None:
    with pytest.raises(HostApiError, match="command not found: no-such-program-xyz"):
        await run(exec_api, ["no-such-program-xyz"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([""], "command must be a non-empty string"),
        ([[]], "command must be a non-empty string"),
        ([["ls", 3]], "or a non-empty list of strings"),
        ([{"cmd": "ls"}], "command must be"),
        (["true", 0], r"timeout must be more than 0 and at most 300 seconds, got 0"),
        (["true", 5000], r"at most 300 seconds, got 5000"),
        (["true", "5"], "timeout must be a number of seconds, got str"),
        ([], r"process\.exec\(command, timeout=None\) takes 1 to 2 arguments, got 0"),
        (["true", 1, 2], "takes 1 to 2 arguments, got 3"),
    ],
)
async def test_exec_refuses_bad_arguments(exec_api: HostApi, args: list[object], message: str) -> None:
    with pytest.raises(HostApiError, match=message):
        await exec_api.call(SCOPE, "process.exec", args)


async def test_exec_with_a_root_that_does_not_exist_runs_in_the_runner_directory(make_api: MakeApi) -> None:
    api = make_api(allow_exec=True, fs_roots=("/nonexistent/root",))
    assert (await run(api, "pwd"))["stdout"] == f"{os.getcwd()}\n"


async def test_a_cancelled_exec_call_kills_the_command(exec_api: HostApi, tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    task = asyncio.ensure_future(run(exec_api, f"sleep 60 & echo $! > {pid_file}; wait"))
    deadline = time.monotonic() + 5
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    child = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    while is_running(child) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    assert not is_running(child)
