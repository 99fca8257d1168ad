"""smartbotic.fs against real files: the calls, their errors, and confinement to the roots by real path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner.hostapi import HostApi, HostApiError
from runner.hostapi.fs import FileSystem
from tests.hostapi.conftest import SCOPE, MakeApi


async def call(api: HostApi, method: str, *args: object) -> object:
    return await api.call(SCOPE, method, list(args))


# --- the calls ----------------------------------------------------------------------------------


async def test_read_file_returns_utf8_text(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "a.txt").write_text("grüße ✓", encoding="utf-8")
    assert await call(fs_api, "fs.readFile", str(roots["files"] / "a.txt")) == "grüße ✓"


async def test_relative_path_resolves_against_first_root(make_api: MakeApi, roots: dict[str, Path]) -> None:
    api = make_api(fs_roots=(str(roots["files"]), str(roots["outside"])))
    (roots["files"] / "sub").mkdir()
    (roots["files"] / "sub" / "a.txt").write_text("first root")
    assert await call(api, "fs.readFile", "sub/a.txt") == "first root"
    assert await call(api, "fs.readFile", str(roots["outside"] / "secret.txt")) == "secret"


async def test_read_file_refuses_binary_naming_the_path(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "img.bin").write_bytes(b"\x89PNG\xff\xfe")
    with pytest.raises(HostApiError, match=r"img\.bin is not UTF-8 text .*binary files are not supported"):
        await call(fs_api, "fs.readFile", "img.bin")


async def test_read_file_refuses_files_above_the_cap_naming_size_and_cap(
    make_api: MakeApi, roots: dict[str, Path]
) -> None:
    api = make_api(fs_roots=(str(roots["files"]),), max_output_bytes=100)
    (roots["files"] / "ok.txt").write_text("x" * 100)
    (roots["files"] / "big.txt").write_text("x" * 101)
    assert await call(api, "fs.readFile", "ok.txt") == "x" * 100
    with pytest.raises(HostApiError, match=r"big\.txt is 101 bytes, above the 100-byte cap"):
        await call(api, "fs.readFile", "big.txt")


async def test_read_file_of_missing_file_or_directory_is_an_error(fs_api: HostApi, roots: dict[str, Path]) -> None:
    with pytest.raises(HostApiError, match=r"fs\.readFile: no such file or directory: nope\.txt"):
        await call(fs_api, "fs.readFile", "nope.txt")
    (roots["files"] / "dir").mkdir()
    with pytest.raises(HostApiError, match=r"dir is a directory"):
        await call(fs_api, "fs.readFile", "dir")


async def test_read_file_of_a_fifo_is_refused_without_blocking(fs_api: HostApi, roots: dict[str, Path]) -> None:
    os.mkfifo(roots["files"] / "pipe")
    with pytest.raises(HostApiError, match="pipe is not a regular file"):
        await call(fs_api, "fs.readFile", "pipe")


async def test_write_file_creates_and_overwrites(fs_api: HostApi, roots: dict[str, Path]) -> None:
    assert await call(fs_api, "fs.writeFile", "new.txt", "a longer first text ✓") is None
    assert (roots["files"] / "new.txt").read_text() == "a longer first text ✓"
    await call(fs_api, "fs.writeFile", str(roots["files"] / "new.txt"), "short")
    assert (roots["files"] / "new.txt").read_text() == "short"


async def test_write_file_needs_an_existing_parent(fs_api: HostApi, roots: dict[str, Path]) -> None:
    with pytest.raises(HostApiError, match=r"fs\.writeFile: no such file or directory: missing/a\.txt"):
        await call(fs_api, "fs.writeFile", "missing/a.txt", "x")
    assert not (roots["files"] / "missing").exists()


async def test_write_file_refuses_non_string_data_and_directories(fs_api: HostApi, roots: dict[str, Path]) -> None:
    with pytest.raises(HostApiError, match="data must be a string, got dict"):
        await call(fs_api, "fs.writeFile", "a.json", {"a": 1})
    (roots["files"] / "dir").mkdir()
    with pytest.raises(HostApiError, match="dir is a directory"):
        await call(fs_api, "fs.writeFile", "dir", "x")


async def test_exists_reports_files_directories_and_missing_paths(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "a.txt").write_text("a")
    (roots["files"] / "dir").mkdir()
    assert await call(fs_api, "fs.exists", "a.txt") is True
    assert await call(fs_api, "fs.exists", "dir") is True
    assert await call(fs_api, "fs.exists", "nope.txt") is False
    assert await call(fs_api, "fs.exists", "nope/deeper.txt") is False


async def test_mkdir_is_recursive_and_fine_when_it_exists(fs_api: HostApi, roots: dict[str, Path]) -> None:
    assert await call(fs_api, "fs.mkdir", "a/b/c") is None
    assert (roots["files"] / "a" / "b" / "c").is_dir()
    assert await call(fs_api, "fs.mkdir", "a/b/c") is None
    assert await call(fs_api, "fs.mkdir", str(roots["files"])) is None


async def test_mkdir_creates_a_missing_root(make_api: MakeApi, tmp_path: Path) -> None:
    api = make_api(fs_roots=(str(tmp_path / "fresh" / "files"),))
    await call(api, "fs.mkdir", "inbox")
    assert (tmp_path / "fresh" / "files" / "inbox").is_dir()


async def test_mkdir_over_a_file_is_an_error(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "a.txt").write_text("a")
    with pytest.raises(HostApiError, match=r"a\.txt exists and is not a directory"):
        await call(fs_api, "fs.mkdir", "a.txt/sub")


async def test_unlink_removes_a_file(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "a.txt").write_text("a")
    assert await call(fs_api, "fs.unlink", "a.txt") is None
    assert not (roots["files"] / "a.txt").exists()


async def test_unlink_refuses_directories_and_missing_files(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "dir").mkdir()
    with pytest.raises(HostApiError, match=r"dir is a directory; fs\.unlink removes files only"):
        await call(fs_api, "fs.unlink", "dir")
    assert (roots["files"] / "dir").is_dir()
    with pytest.raises(HostApiError, match=r"no such file or directory: gone\.txt"):
        await call(fs_api, "fs.unlink", "gone.txt")


async def test_unlink_of_a_symlink_removes_the_link_not_its_target(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "target.txt").write_text("t")
    (roots["files"] / "link.txt").symlink_to(roots["files"] / "target.txt")
    (roots["files"] / "out.txt").symlink_to(roots["outside"] / "secret.txt")
    await call(fs_api, "fs.unlink", "link.txt")
    await call(fs_api, "fs.unlink", "out.txt")
    assert not (roots["files"] / "link.txt").is_symlink()
    assert not (roots["files"] / "out.txt").is_symlink()
    assert (roots["files"] / "target.txt").read_text() == "t"
    assert (roots["outside"] / "secret.txt").read_text() == "secret"


async def test_stat_reports_size_mtime_in_ms_and_kind(fs_api: HostApi, roots: dict[str, Path]) -> None:
    path = roots["files"] / "a.txt"
    path.write_text("12345")
    os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_987_654_321))
    assert await call(fs_api, "fs.stat", "a.txt") == {
        "size": 5,
        "modifiedAt": 1_700_000_000_987,
        "isDirectory": False,
        "isFile": True,
    }
    dir_stat = await call(fs_api, "fs.stat", str(roots["files"]))
    assert isinstance(dir_stat, dict)
    assert (dir_stat["isDirectory"], dir_stat["isFile"]) == (True, False)
    with pytest.raises(HostApiError, match=r"no such file or directory: nope"):
        await call(fs_api, "fs.stat", "nope")


async def test_readdir_is_sorted_and_not_recursive(fs_api: HostApi, roots: dict[str, Path]) -> None:
    base = roots["files"]
    for name in ("b.txt", "a.txt", "C.txt"):
        (base / name).write_text(name)
    (base / "sub").mkdir()
    (base / "sub" / "deep.txt").write_text("deep")
    os.utime(base / "a.txt", ns=(0, 1_600_000_000_555_999_999))
    listing = await call(fs_api, "fs.readdir", ".")
    assert isinstance(listing, list)
    assert [e["name"] for e in listing] == ["C.txt", "a.txt", "b.txt", "sub"]
    a = listing[1]
    assert a == {
        "name": "a.txt",
        "path": str(base / "a.txt"),
        "size": 5,
        "modifiedAt": 1_600_000_000_555,
        "isDirectory": False,
    }
    assert listing[3]["isDirectory"] is True
    for entry in listing:
        stat = await call(fs_api, "fs.stat", entry["path"])
        assert isinstance(stat, dict)
        assert (stat["modifiedAt"], stat["size"]) == (entry["modifiedAt"], entry["size"])


async def test_readdir_of_a_file_or_missing_directory_is_an_error(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "a.txt").write_text("a")
    with pytest.raises(HostApiError, match=r"a\.txt: not a directory"):
        await call(fs_api, "fs.readdir", "a.txt")
    with pytest.raises(HostApiError, match="no such file or directory: nope"):
        await call(fs_api, "fs.readdir", "nope")


async def test_readdir_symlink_entries_show_targets_only_inside_the_roots(
    fs_api: HostApi, roots: dict[str, Path]
) -> None:
    base = roots["files"]
    (base / "real.txt").write_text("0123456789")
    (base / "in.txt").symlink_to(base / "real.txt")
    (base / "out.txt").symlink_to(roots["outside"] / "secret.txt")
    listing = await call(fs_api, "fs.readdir", str(base))
    assert isinstance(listing, list)
    by_name = {e["name"]: e for e in listing}
    assert by_name["in.txt"]["size"] == 10
    assert by_name["out.txt"]["size"] == len(str(roots["outside"] / "secret.txt"))  # the link's own size


# --- confinement --------------------------------------------------------------------------------

ALL_CALLS = [
    ("fs.readFile", ()),
    ("fs.writeFile", ("data",)),
    ("fs.exists", ()),
    ("fs.mkdir", ()),
    ("fs.unlink", ()),
    ("fs.stat", ()),
    ("fs.readdir", ()),
]


def escapes(roots: dict[str, Path]) -> dict[str, str]:
    return {
        "dotdot": "../outside/secret.txt",
        "absolute outside": str(roots["outside"] / "secret.txt"),
        "prefix trap": str(roots["files-evil"] / "evil.txt"),
        "dotdot into prefix trap": "../files-evil/evil.txt",
        "file symlink out": "link-file",
        "directory symlink out": "link-dir/secret.txt",
        "dangling symlink out": "link-later",
    }


ESCAPE_CASES = [
    (method, extra, how)
    for method, extra in ALL_CALLS
    for how in escapes({k: Path("/x") for k in ("outside", "files-evil")})
    # unlink removes a final symlink itself, which lies inside the root: see test_unlink_of_a_symlink_*
    if not (method == "fs.unlink" and how in ("file symlink out", "dangling symlink out"))
]


@pytest.mark.parametrize(("method", "extra", "how"), ESCAPE_CASES)
async def test_paths_outside_the_roots_are_refused_naming_path_and_roots(
    fs_api: HostApi, roots: dict[str, Path], how: str, method: str, extra: tuple[str, ...]
) -> None:
    base = roots["files"]
    (base / "link-file").symlink_to(roots["outside"] / "secret.txt")
    (base / "link-dir").symlink_to(roots["outside"])
    (base / "link-later").symlink_to(roots["outside"] / "later.txt")
    path = escapes(roots)[how]
    with pytest.raises(HostApiError) as err:
        await call(fs_api, method, path, *extra)
    message = str(err.value)
    assert message.startswith(f"{method}: {path} is outside the allowed roots")
    assert f"allowed: {base}" in message
    assert (roots["outside"] / "secret.txt").read_text() == "secret"
    assert not (roots["outside"] / "later.txt").exists()
    assert (roots["files-evil"] / "evil.txt").read_text() == "evil"


async def test_symlink_target_created_later_is_still_refused(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "link").symlink_to(roots["outside"] / "later.txt")
    assert (await call(fs_api, "fs.exists", str(roots["files"]))) is True
    with pytest.raises(HostApiError, match=r"resolves to .*later\.txt"):
        await call(fs_api, "fs.writeFile", "link", "x")
    (roots["outside"] / "later.txt").write_text("now it exists")
    with pytest.raises(HostApiError, match="outside the allowed roots"):
        await call(fs_api, "fs.readFile", "link")


async def test_symlink_pointing_inside_the_roots_is_followed(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "dir").mkdir()
    (roots["files"] / "dir" / "a.txt").write_text("inside")
    (roots["files"] / "alias").symlink_to(roots["files"] / "dir")
    assert await call(fs_api, "fs.readFile", "alias/a.txt") == "inside"
    await call(fs_api, "fs.writeFile", "alias/b.txt", "via link")
    assert (roots["files"] / "dir" / "b.txt").read_text() == "via link"


async def test_a_symlinked_root_works_by_either_path(make_api: MakeApi, roots: dict[str, Path], tmp_path: Path) -> None:
    (tmp_path / "root-link").symlink_to(roots["files"])
    api = make_api(fs_roots=(str(tmp_path / "root-link"),))
    (roots["files"] / "a.txt").write_text("a")
    assert await call(api, "fs.readFile", str(tmp_path / "root-link" / "a.txt")) == "a"
    assert await call(api, "fs.readFile", str(roots["files"] / "a.txt")) == "a"
    assert await call(api, "fs.readFile", "a.txt") == "a"
    with pytest.raises(HostApiError, match="outside the allowed roots"):
        await call(api, "fs.readFile", str(tmp_path / "root-link" / ".." / "outside" / "secret.txt"))


async def test_dotdot_that_stays_inside_is_allowed(fs_api: HostApi, roots: dict[str, Path]) -> None:
    (roots["files"] / "sub").mkdir()
    (roots["files"] / "a.txt").write_text("a")
    assert await call(fs_api, "fs.readFile", "sub/../a.txt") == "a"


async def test_a_directory_swapped_for_a_symlink_after_the_check_is_refused(roots: dict[str, Path]) -> None:
    fs = FileSystem((str(roots["files"]),), max_read_bytes=1000)
    (roots["files"] / "sub").mkdir()
    (roots["files"] / "sub" / "secret.txt").write_text("harmless")
    target = fs.resolve("fs.readFile", "sub/secret.txt")
    # between the check and the use, sub becomes a symlink to the outside directory
    (roots["files"] / "sub" / "secret.txt").unlink()
    (roots["files"] / "sub").rmdir()
    (roots["files"] / "sub").symlink_to(roots["outside"])
    with pytest.raises(HostApiError, match="a symlink appeared in the path after it was checked"):
        await fs._run("fs.readFile", target, fs._read_bytes)


async def test_a_file_swapped_for_a_symlink_after_the_check_is_refused(roots: dict[str, Path]) -> None:
    fs = FileSystem((str(roots["files"]),), max_read_bytes=1000)
    (roots["files"] / "a.txt").write_text("harmless")
    target = fs.resolve("fs.readFile", "a.txt")
    (roots["files"] / "a.txt").unlink()
    (roots["files"] / "a.txt").symlink_to(roots["outside"] / "secret.txt")
    with pytest.raises(HostApiError, match="a symlink appeared in the path after it was checked"):
        await fs._run("fs.readFile", target, fs._read_bytes)


async def test_star_root_lifts_the_confinement(make_api: MakeApi, roots: dict[str, Path]) -> None:
    api = make_api(fs_roots=("*",))
    assert await call(api, "fs.readFile", str(roots["outside"] / "secret.txt")) == "secret"
    (roots["files"] / "link").symlink_to(roots["outside"] / "secret.txt")
    assert await call(api, "fs.readFile", str(roots["files"] / "link")) == "secret"


async def test_no_roots_refuses_every_path(make_api: MakeApi, roots: dict[str, Path]) -> None:
    api = make_api(fs_roots=())
    with pytest.raises(HostApiError, match=r"outside the allowed roots; allowed: \(none configured\)"):
        await call(api, "fs.exists", str(roots["files"]))


@pytest.mark.parametrize("bad", [None, "", 3, ["a"], "a\0b"])
async def test_path_must_be_a_non_empty_string(fs_api: HostApi, bad: object) -> None:
    with pytest.raises(HostApiError, match=r"fs\.stat: (path must be a non-empty string|the path contains a NUL)"):
        await call(fs_api, "fs.stat", bad)
