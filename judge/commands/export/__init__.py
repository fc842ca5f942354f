"""``judge export PLATFORM -o OUT``: package the problems for the graders instructors already use.

One module per platform, each writing what that platform takes:

- :mod:`.gradescope`: ``autograder.zip`` (``setup.sh``, ``run_autograder``, the judge bundle and
  every wheel, so the install needs no package index);
- :mod:`.github_classroom`: a template repository (the practice layout, a student README, the
  judge's wheel and ``.github/workflows/classroom.yml``), and optionally a private tests repository;
- :mod:`.prairielearn`: a course fragment (one externally graded question per problem, the grader
  script and wheels in ``serverFilesCourse``).

All share :mod:`.bundle` (problems without reference/ or wrong/, canonical Results computed now),
:mod:`.wheels` (the judge's wheel holds no solution) and, on the platform, :mod:`.run`.
Documented for instructors in docs/platforms.md.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path

from ...core.problem import Problem
from ...i18n import _
from ..assignments import Assignment
from .bundle import ExportError
from .wheels import DEFAULT_PLATFORM, DEFAULT_PYTHON, Target

PLATFORMS = {"gradescope": "gradescope", "github-classroom": "github_classroom", "prairielearn": "prairielearn"}
_TEMPLATES = Path(__file__).resolve().parent / "templates"

__all__ = ["PLATFORMS", "ExportError", "ExportOptions", "export", "template"]


@dataclass
class ExportOptions:
    """What an export is made of (the command line's options)."""

    out: Path
    problems: list[Problem]
    wheels: Path | None = None  # a folder of prebuilt wheels instead of building and downloading them
    timeout: float | None = None  # overrides every problem's time limit on the platform
    feedback: str = "names"  # how much of the secret tests students see: full | names | none
    python_version: str = DEFAULT_PYTHON
    platform_tag: str = DEFAULT_PLATFORM
    parallel: int = 1
    private_tests: str | None = None  # github-classroom: OWNER/REPO holding the tests
    tests_out: Path | None = None  # github-classroom: where to write that repository's content
    image: str | None = None  # prairielearn: the grading image (default python:<version>-slim)
    lang: str = "en"  # the language of what students read on the platform (the bundle's config.json "lang")
    assignment: Assignment | None = None  # the course's assignment exported (its points are checked)
    grading_timeout: float = 600.0  # gradescope: the autograder's time limit for one submission (its default)

    @property
    def target(self) -> Target:
        return Target(self.python_version, self.platform_tag)


def export(platform: str, options: ExportOptions) -> list[str]:
    """Write ``platform``'s export to ``options.out``; return lines that say what was written."""
    if platform not in PLATFORMS:
        raise ExportError(_("unknown platform {name!r} (known: {known})").format(name=platform,
                                                                                known=", ".join(PLATFORMS)))
    module = importlib.import_module(f"{__name__}.{PLATFORMS[platform]}")
    return module.export(options)


def template(name: str, **values: str) -> str:
    """The template ``templates/NAME`` with each ``@@KEY@@`` replaced (shell and YAML keep their own ``$``)."""
    text = (_TEMPLATES / name).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace(f"@@{key.upper()}@@", value)
    if "@@" in text:
        raise ExportError(f"template {name}: a value was not given ({text[text.index('@@'):][:40]}...)")
    return text


def size_text(path: Path) -> str:
    """A file's or folder's size, as people read it."""
    size = path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 1024:.0f} KiB"
