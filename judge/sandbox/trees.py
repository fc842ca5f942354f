"""Removing folders the learner's code could fill: however deep, never following a link, never raising.

The judge removes a job's folders when the job ends, and what an identity of the pool left in the shared
temporary folders. The learner's code may have made them thousands of folders deep. Python's
``shutil.rmtree`` walks a tree by recursion (up to Python 3.12) and then raises ``RecursionError``,
which its ``ignore_errors`` does not cover: a red team's submission stopped ``judge grade`` for the whole
class that way. What ``rmtree`` leaves is removed by ``rm -r``, which walks any depth without following
links. What neither can remove stays: callers that must know look for it (``nothing_left_behind`` in the
tests; an identity whose processes survive is never reused).
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
    rm = shutil.which("rm") or "/bin/rm"
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run([rm, "-r", "-f", "--", path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=RM_SECONDS, check=False)
