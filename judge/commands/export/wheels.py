"""The wheels an export ships: the judge's own, holding no solution, and its dependencies.

The judge's wheel is built from the project's source tree (``pip wheel``, hatchling) after
``problems/``, which the wheel carries as ``judge/_problems``, is replaced by published copies of
the exported problems: no reference, wrong or secret file gets into it. For platforms that must
install without a package index (Gradescope, PrairieLearn), ``pip download`` also fetches, at
export time, a wheel of every dependency for the platform's Python and machine (``Target``) and
pip's own wheel, which runs straight from the file to install the others.

Without the source tree (the judge installed from its wheel), the judge's wheel is packed from the
installed package instead (:func:`pack_installed_judge`: its files and metadata, ``judge/_problems``
replaced by published copies of the exported problems, packed with the ``wheel`` tool). A
``--wheels DIR`` judge wheel that carries solutions (``pip wheel .`` of the project does) is
repacked the same way (:func:`clean_judge_wheel`); the other wheels in DIR are used as they are.
"""

from __future__ import annotations

import importlib.metadata
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ...core.problem import Problem
from ...i18n import _
from .bundle import ExportError, copy_problem

DEFAULT_PYTHON = "3.11"
DEFAULT_PLATFORM = "manylinux2014_x86_64"
PROJECT = "pp-judge"
_INSTALL_RECORDS = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")  # written by pip; `wheel pack` writes RECORD
_SECRET_PATH = re.compile(r"^judge/_problems/[^/]+/(reference|wrong|tests/secret)/")


@dataclass(frozen=True)
class Target:
    """The Python and machine the wheels are for (pip's ``--python-version`` and ``--platform``)."""

    python_version: str = DEFAULT_PYTHON
    platform: str = DEFAULT_PLATFORM

    @property
    def abi(self) -> str:
        return "cp" + self.python_version.replace(".", "")


def prepare_wheels(dest: Path, problems: list[Problem], target: Target | None, prebuilt: Path | None) -> list[Path]:
    """Put the judge's wheel in ``dest``, and every dependency's too unless ``target`` is None."""
    dest.mkdir(parents=True, exist_ok=True)
    if prebuilt is not None:
        wheels = _copy_prebuilt(prebuilt, dest, problems, with_dependencies=target is not None)
    else:
        wheels = [build_judge_wheel(dest, problems) if source_tree() else pack_installed_judge(dest, problems)]
        if target is not None:
            download_dependencies(dest, wheels[0], target)
    return sorted(dest.glob("*.whl"))


def source_tree() -> Path | None:
    """The project folder the running judge comes from, when it is a source checkout."""
    root = Path(__file__).resolve().parents[3]
    pyproject = root / "pyproject.toml"
    try:
        name = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"]
    except (OSError, tomllib.TOMLDecodeError, KeyError):
        return None
    return root if name == PROJECT else None


def build_judge_wheel(dest: Path, problems: list[Problem]) -> Path:
    """Build the judge's wheel into ``dest`` from a copy of the source tree with published problems."""
    root = source_tree()
    if root is None:
        raise ExportError("no source tree to build the judge's wheel from (pack_installed_judge packs the installed "
                          "judge instead)")
    with tempfile.TemporaryDirectory(prefix="judge-wheel-") as scratch:
        stage = Path(scratch) / "src"
        _stage_source(root, stage, problems)
        out = Path(scratch) / "dist"
        _pip("wheel", "--no-deps", "-q", "-w", str(out), str(stage))
        [wheel] = out.glob("*.whl")
        check_judge_wheel(wheel)
        return Path(shutil.copy2(wheel, dest / wheel.name))


def download_dependencies(dest: Path, judge_wheel: Path, target: Target) -> None:
    """``pip download`` the judge's dependencies and pip itself, as wheels for ``target``, into ``dest``."""
    _pip("download", "-q", "-d", str(dest), "--only-binary=:all:", "--python-version", target.python_version,
         "--platform", target.platform, "--implementation", "cp", "--abi", target.abi, str(judge_wheel), "pip")


def check_judge_wheel(wheel: Path) -> None:
    """Refuse a judge wheel that carries a reference, wrong or secret file of a problem."""
    with zipfile.ZipFile(wheel) as archive:
        leaks = [name for name in archive.namelist() if _SECRET_PATH.match(name)]
    if leaks:
        raise ExportError(f"{wheel.name} carries solution or secret files ({leaks[0]}, ...); exports need a judge "
                          "wheel without them (one built by `judge export` from the source tree)")


def _stage_source(root: Path, stage: Path, problems: list[Problem]) -> None:
    """A copy of what hatchling reads: pyproject, README, judge/, the forced includes; problems published."""
    stage.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(root / name, stage / name)
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "_problems", "_web")
    shutil.copytree(root / "judge", stage / "judge", ignore=skip)
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    included = pyproject["tool"]["hatch"]["build"]["targets"]["wheel"].get("force-include", {})
    for source in included:
        if source == "problems":
            continue
        origin, target = root / source, stage / source
        target.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, target, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
        else:
            shutil.copy2(origin, target)
    (stage / "problems").mkdir()
    for problem in problems:
        copy_problem(problem, stage / "problems" / problem.id, include_secret=False)


def pack_installed_judge(dest: Path, problems: list[Problem]) -> Path:
    """The installed judge as a wheel in ``dest``, its bundled problems replaced by published copies of ``problems``."""
    try:
        dist = importlib.metadata.distribution(PROJECT)
    except importlib.metadata.PackageNotFoundError:
        raise ExportError(f"the judge is neither a source checkout nor an installed {PROJECT} distribution") from None
    with tempfile.TemporaryDirectory(prefix="judge-pack-") as scratch:
        stage = Path(scratch) / "stage"
        for file in dist.files or []:
            name = file.as_posix()
            if _packed(name):
                target = stage / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(str(dist.locate_file(file))), target)
        return _pack(stage, dest, problems)


def clean_judge_wheel(wheel: Path, dest: Path, problems: list[Problem]) -> Path:
    """``wheel`` repacked into ``dest`` without its bundled problems, with published copies of ``problems``."""
    with tempfile.TemporaryDirectory(prefix="judge-clean-") as scratch, zipfile.ZipFile(wheel) as archive:
        stage = Path(scratch) / "stage"
        for member in archive.infolist():
            if not member.is_dir() and _packed(member.filename) and ".." not in Path(member.filename).parts:
                target = stage / member.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(archive.read(member))
        return _pack(stage, dest, problems)


def _packed(name: str) -> bool:
    """Whether an installed or wheel file goes into a clean judge wheel (the judge and its metadata only)."""
    if "__pycache__" in name or name.endswith(".pyc") or name.startswith("judge/_problems/"):
        return False
    if name.startswith("judge/"):
        return True
    head, _, tail = name.partition("/")
    return head.startswith("pp_judge-") and head.endswith(".dist-info") and tail not in _INSTALL_RECORDS


def _pack(stage: Path, dest: Path, problems: list[Problem]) -> Path:
    if not list(stage.glob("pp_judge-*.dist-info/WHEEL")) or not (stage / "judge" / "__init__.py").is_file():
        raise ExportError("the judge's files or its wheel metadata (pp_judge-*.dist-info/WHEEL) are missing")
    for problem in problems:
        copy_problem(problem, stage / "judge" / "_problems" / problem.id, include_secret=False)
    out = stage.parent / "dist"
    out.mkdir()
    done = subprocess.run([sys.executable, "-m", "wheel", "pack", "-d", str(out), str(stage)],
                          capture_output=True, text=True, check=False)
    wheels = list(out.glob("pp_judge-*.whl"))
    if done.returncode != 0 or len(wheels) != 1:
        raise ExportError(f"packing the judge's wheel failed: {(done.stderr or done.stdout).strip()[-800:]}")
    check_judge_wheel(wheels[0])
    return Path(shutil.copy2(wheels[0], dest / wheels[0].name))


def _copy_prebuilt(source: Path, dest: Path, problems: list[Problem], with_dependencies: bool) -> list[Path]:
    wheels = sorted(source.glob("*.whl"))
    judge = [w for w in wheels if w.name.startswith("pp_judge-")]
    if len(judge) != 1:
        raise ExportError(_("{path}: expected exactly one pp_judge-*.whl, found {n}").format(path=source, n=len(judge)))
    if with_dependencies and not any(w.name.startswith("pip-") for w in wheels):
        raise ExportError(_("{path}: no pip-*.whl (the install on the platform runs pip from its wheel)").format(
            path=source))
    others = [w for w in wheels if w not in judge] if with_dependencies else []
    try:
        check_judge_wheel(judge[0])
        copied = Path(shutil.copy2(judge[0], dest / judge[0].name))
    except ExportError:  # a wheel built from the project carries the solutions: repack it without them
        copied = clean_judge_wheel(judge[0], dest, problems)
    return [copied] + [Path(shutil.copy2(w, dest / w.name)) for w in others]


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-8:])
        raise ExportError(f"pip {args[0]} failed:\n{tail}")
