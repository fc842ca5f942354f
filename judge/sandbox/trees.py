"""Removing folders the learner's code could fill: however deep, never following a link, never raising.

The judge removes a job's folders when the job ends, and what an identity of the pool left in the shared
temporary folders. The learner's code may have made them thousands of folders deep. Python's
``shutil.rmtree`` walks a tree by recursion (up to Python 3.12) and then raises ``RecursionError``,
which its ``ignore_errors`` does not cover: a red team's submission stopped ``judge grade`` for the whole
class that way. What ``rmtree`` leaves is opened to its owner again (``find``: a folder the learner
locked, folders only) and removed by ``rm -r``, which walks any depth; neither follows a link. What
neither can remove stays: callers that must know look for it (``nothing_left_behind`` in the tests; an
identity whose processes survive is never reused).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess

RM_SECONDS = 300.0  # rm -r of a tree the learner's code made within its limits


def remove_tree(path: str | os.PathLike[str]) -> None:
    """Remove ``path`` and everything under it, as deep as it goes; never raises."""
    with contextlib.suppress(RecursionError, OSError):
        shutil.rmtree(path, ignore_errors=True)
    if os.path.lexists(path):
        _remove_deep(os.fspath(path))


def _remove_deep(path: str) -> None:
    if os.geteuid() != 0 and os.path.isdir(path) and not os.path.islink(path):
        # a folder its owner locked (mode 0): the identity removing its own leftovers may not list it until
        # it opens it again (root may: it changes no mode, so no path raced into the tree can make it).
        # Folders only, each before find enters it, no link followed: a file may be a hard link to
        # someone else's, whose mode this must not change
        _run("find", path, "-type", "d", "!", "-perm", "-u=rwx", "-exec", "chmod", "u+rwx", "{}", ";")
    _run("rm", "-r", "-f", "--", path)


def _run(tool: str, *args: str) -> None:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([shutil.which(tool) or f"/bin/{tool}", *args], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=RM_SECONDS, check=False)
