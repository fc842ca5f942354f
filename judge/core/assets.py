"""A problem's ``assets/`` folder: images and other files its statement links to.

Assets are published: ``judge build`` serves them from a content-hashed folder of the site (and
rewrites the statement's ``assets/...`` links to it), and the practice folder gets a copy beside
README.md, so ``![diagram](assets/diagram.svg)`` works on the site, in the practice folder and
in the problem folder alike. Only regular files are published: a problem folder with a symbolic link
anywhere does not load (judge.core.problem), hidden files and ``__pycache__`` are skipped, and a file that holds a
reference solution, a secret test or a wrong solution is a leak (:func:`leaks`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

ASSETS = "assets"
SITE_PREFIX = "assets/problem-"  # + "<id>-<hash>/": under the site's immutable assets/ folder
_PRIVATE = ("reference", "wrong", "tests/secret")  # never published, so never inside an asset


def asset_files(problem_dir: Path) -> list[Path]:
    """The publishable files under ``problem_dir/assets`` (absolute paths, sorted)."""
    found = []
    for folder, dirs, files in os.walk(problem_dir / ASSETS):  # never follows a linked folder
        dirs[:] = sorted(d for d in dirs if _published_name(d) and not Path(folder, d).is_symlink())
        found += [Path(folder, f) for f in files if _published_name(f) and not Path(folder, f).is_symlink()]
    return sorted(found)


def leaks(problem_dir: Path) -> list[str]:
    """Assets that hold the content of a reference solution, a secret test or a wrong solution."""
    private = [(p, p.read_bytes().strip()) for p in _private_files(problem_dir)]
    found = []
    for asset in asset_files(problem_dir):
        data = asset.read_bytes()
        for path, body in private:
            if body and body in data:
                found.append(f"{asset.relative_to(problem_dir).as_posix()} holds the content of "
                             f"{path.relative_to(problem_dir).as_posix()}, which must never be published")
    return found


def site_folder(problem_id: str, problem_dir: Path) -> str | None:
    """Where the site serves this problem's assets (``assets/problem-<id>-<hash>/``); None without assets.

    The hash covers every asset's path and bytes, so the folder may be cached for good.
    """
    files = asset_files(problem_dir)
    if not files:
        return None
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(problem_dir).as_posix().encode() + b"\0")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return f"{SITE_PREFIX}{problem_id}-{digest.hexdigest()[:12]}/"


def _published_name(name: str) -> bool:
    return not name.startswith(".") and name != "__pycache__"


def _private_files(problem_dir: Path) -> list[Path]:
    return sorted(p for part in _PRIVATE for p in (problem_dir / part).rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)
