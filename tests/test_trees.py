"""Removing what the learner's code made (judge/sandbox/trees.py): however deep, never through a link,
never raising: a tree 5,000 folders deep once stopped `judge grade` for the whole class."""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
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
