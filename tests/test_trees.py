"""Removing what the learner's code made (judge/sandbox/trees.py): however deep, never through a link,
never raising: a tree 5,000 folders deep once stopped `judge grade` for the whole class."""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from judge.sandbox import trees


def nest(top: Path, depth: int) -> None:
    """``depth`` folders named ``d`` under ``top``, each made relative to the last (no long path)."""
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
        with open(os.open("f", os.O_WRONLY | os.O_CREAT, 0o600, dir_fd=fd), "w") as handle:
            handle.write("deepest")
    finally:
        os.close(fd)


@contextlib.contextmanager
def default_recursion_limit() -> Iterator[None]:
    """Python's default recursion limit for a block (pytest-xdist's workers run with a higher one)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        yield
    finally:
        sys.setrecursionlimit(limit)


def test_a_tree_deeper_than_the_recursion_limit_is_removed_without_an_error(tmp_path: Path) -> None:
    top = tmp_path / "job"
    top.mkdir()
    nest(top, 5000)
    with default_recursion_limit():
        with pytest.raises(RecursionError):  # what the judge's clean-up called before, and what it raised
            shutil.rmtree(top, ignore_errors=True)
        trees.remove_tree(top)
    assert not top.exists() and list(tmp_path.iterdir()) == []


def test_links_are_removed_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("root's own file")
    top = tmp_path / "job"
    top.mkdir()
    nest(top, 3)
    (top / "d" / "to-a-folder").symlink_to(outside)
    (top / "d" / "to-a-file").symlink_to(outside / "keep")
    trees.remove_tree(top)
    assert not top.exists() and (outside / "keep").read_text() == "root's own file"


def test_what_is_not_there_or_not_a_folder_is_no_error(tmp_path: Path) -> None:
    trees.remove_tree(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    trees.remove_tree(tmp_path / "file")
    assert not (tmp_path / "file").exists()


def test_a_hard_link_to_a_file_outside_keeps_that_files_mode(tmp_path: Path) -> None:
    """What rmtree leaves is opened again folder by folder only: a file may be a hard link to another's."""
    outside = tmp_path / "outside"
    outside.write_text("root's own file")
    outside.chmod(0o600)
    top = tmp_path / "job"
    top.mkdir()
    nest(top, 2000)  # deeper than rmtree's recursion: what it leaves, the fallback removes
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(2000):  # down to the deepest folder, where rmtree never got
        inner = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    try:
        os.mkdir("locked", dir_fd=fd)
        os.link(outside, "locked/link", dst_dir_fd=fd)
        os.chmod("locked", 0, dir_fd=fd)
    finally:
        os.close(fd)
    with default_recursion_limit():
        trees.remove_tree(top)
    assert not top.exists()
    assert (outside.stat().st_mode & 0o777, outside.read_text()) == (0o600, "root's own file")


@pytest.mark.skipif(os.geteuid() != 0, reason="runs the removal as another user: needs root")
def test_the_owner_opens_a_folder_it_locked_and_no_file_outside_changes_mode() -> None:
    """As the identity removing its own leftovers (not root): a locked folder at the bottom of a deep tree,
    holding a hard link to a file outside, is opened and removed; the file outside keeps its mode."""
    place = Path(tempfile.mkdtemp(prefix="pp-judge-trees-"))  # pytest's tmp_path is closed to others
    place.chmod(0o777)
    try:
        _as_nobody(place)
        assert list(place.iterdir()) == [place / "outside"]
    finally:
        trees.remove_tree(place)


def _as_nobody(place: Path) -> None:
    pid = os.fork()
    if pid == 0:  # the child: become nobody, make the tree, remove it, say by the exit status how it went
        try:
            os.setgroups([])
            os.setresgid(65534, 65534, 65534)
            os.setresuid(65534, 65534, 65534)
            test_a_hard_link_to_a_file_outside_keeps_that_files_mode(place)
        except BaseException:  # noqa: BLE001 - reported through the exit status
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def _held_in_child(parent: Path) -> tuple[str, int, int]:
    """A folder made by held_folder in a forked process that then waits: (folder, pid, the pipe that ends it)."""
    made_read, made_write = os.pipe()
    end_read, end_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a judge that lives until told
        try:
            os.close(made_read)
            os.close(end_write)
            folder = trees.held_folder("judge-alive-", str(parent))
            os.write(made_write, folder.encode())
            os.read(end_read, 1)
        finally:
            os._exit(0)
    os.close(made_write)
    folder = os.read(made_read, 4096).decode()
    os.close(made_read)
    os.close(end_read)
    return folder, pid, end_write


def test_only_folders_of_a_judge_that_is_gone_are_removed(tmp_path: Path) -> None:
    """What a judge killed outright left (its lock file no longer held) goes; a living judge's folder, a folder
    without the lock file, a link to a held folder's twin, a folder of another prefix and the caller's own
    folder stay."""
    alive, pid, end = _held_in_child(tmp_path)
    gone, gone_pid, gone_end = _held_in_child(tmp_path)
    os.close(gone_end)  # that judge ends without removing its folder: as after a SIGKILL
    os.waitpid(gone_pid, 0)
    (Path(gone) / "work").mkdir()
    (Path(gone) / "work" / "solution.py").write_text("a learner's code\n")
    old = tmp_path / "judge-older-version"
    old.mkdir()
    mine = trees.held_folder("judge-mine-", str(tmp_path))
    other = tmp_path / "not-judge"
    other.mkdir()
    (other / trees.ALIVE).touch()
    abandoned_twin = tmp_path / "twin"
    abandoned_twin.mkdir()
    (abandoned_twin / trees.ALIVE).touch()
    (tmp_path / "judge-link").symlink_to(abandoned_twin)
    try:
        assert trees.remove_abandoned(str(tmp_path)) == [gone]
        assert not os.path.lexists(gone)
        for kept in (alive, old, mine, other, abandoned_twin, tmp_path / "judge-link"):
            assert os.path.lexists(kept), kept
        assert (abandoned_twin / trees.ALIVE).exists()
    finally:
        os.close(end)
        os.waitpid(pid, 0)
        trees.remove_tree(mine)
    assert trees.remove_abandoned(str(tmp_path)) == [alive]  # its judge has ended now


def test_another_users_folder_is_left_alone(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to make a folder of another user")
    gone, pid, end = _held_in_child(tmp_path)
    os.close(end)
    os.waitpid(pid, 0)
    os.chown(gone, 65534, 65534)
    assert trees.remove_abandoned(str(tmp_path)) == []
    assert os.path.isdir(gone)


def test_a_folder_removed_apart_keeps_its_lock_and_the_identitys_until_it_is_gone_and_holds_nothing_else(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``remove_apart``: the judge's loop goes on at once; the remover holds the folder's lock (a later judge's
    sweep leaves it alone) and the identity's (no job takes the uid) until the folder is gone, and none of the
    judge's other descriptors (another job's channel would not see its end)."""
    folder = trees.held_folder("judge-apart-", str(tmp_path))
    nest(Path(folder), 50)
    gate = tmp_path / "go"
    remove = trees.remove_tree

    def remove_when_told(path: str) -> None:  # runs in the remover: waits for the test, then removes
        for _ in range(6000):
            if gate.exists():
                break
            time.sleep(0.01)
        remove(path)

    monkeypatch.setattr(trees, "remove_tree", remove_when_told)
    identity_lock = os.open(tmp_path / "uid.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(identity_lock, fcntl.LOCK_EX)
    other_read, other_write = os.pipe()  # another job's channel, say
    remover = trees.remove_apart([folder], holding=identity_lock)
    assert remover is not None
    os.close(identity_lock)  # the caller's copy, as the judge closes it
    os.close(other_write)
    try:
        assert select.select([other_read], [], [], 60)[0], "the remover holds another descriptor of the judge's"
        assert os.read(other_read, 1) == b""
        assert os.path.isdir(folder) and folder not in trees._held
        assert trees.remove_abandoned(str(tmp_path)) == []  # its lock is held: not a killed judge's folder
        probe = os.open(tmp_path / "uid.lock", os.O_RDWR)
        with pytest.raises(BlockingIOError):
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        gate.touch()
        _, status = os.waitpid(remover, 0)
        os.close(other_read)
    assert os.waitstatus_to_exitcode(status) == 0
    assert not os.path.lexists(folder)
    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # given back with the folder gone
    os.close(probe)


def test_a_held_folder_is_worth_removing_apart_only_when_it_holds_more_than_its_lock(tmp_path: Path) -> None:
    folder = trees.held_folder("judge-job-", str(tmp_path))
    try:
        assert not trees.holds_more_than_its_lock(folder)  # the test process removed its learner's folder
        os.mkdir(os.path.join(folder, "judge-learner-x"))
        assert trees.holds_more_than_its_lock(folder)  # stopped at a limit before it could
    finally:
        trees.remove_tree(folder)
    assert not trees.holds_more_than_its_lock(folder)  # gone: nothing to remove
