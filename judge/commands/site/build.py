"""Build the deployable static site: ``python -m judge build SITE_DIR [--pyodide self|cdn]``.

The site is the front end from ``web/`` (HTML, CSS, JavaScript modules and the vendored, pinned
browser libraries under ``web/vendor/``), plus what this build generates::

    SITE_DIR/
      index.html                the page, with the site configuration embedded as JSON
      sw.js                     the service worker, with this build's id and precache list
      worker.js, js/, style.css, vendor/ ...   copied from web/
      assets/problems-<hash>.json   the problem manifest: metadata, rendered statement, starter,
                                    and the *published* files (problem.toml, README.md, starter/,
                                    tests/public/, support/) the worker writes into Pyodide's FS
      assets/judge-<hash>.zip   the judge package (same source as the native one), unpacked into
                                Pyodide's site-packages by the worker
      assets/problem-<id>-<hash>/   a problem's assets/ folder (images the statement shows), where
                                the rendered statement's ``assets/...`` links now point
      assets/wheels/            extra pure-Python wheels that problems declare (``packages``) and
                                micropip, which installs them (only when some problem needs them)
      pyodide/0.27.7/           ``self`` mode only: the trimmed, pinned Pyodide distribution
      pyodide/compiled-<hash>/  ``self`` mode only: its bytecode-compiled twins (standard library
                                zip, numpy, pytest and its dependencies, with ``.pyc`` beside the
                                sources) and a ``pyodide-lock.json`` listing them with their own
                                sha256; the page loads these (``lockFileURL``, ``stdLibURL``)
      assets/pyc-judge-<hash>.zip   ``self`` mode only: the judge package's ``__pycache__``
      pyodide/judge-snapshot-<hash>.img.gz   ``self`` mode only: a memory snapshot of Pyodide with
                                pytest and the judge imported and warmed up (gzip; its sha256 is in
                                the configuration), which the worker restores instead of booting

The compiled files are made inside Pyodide itself (its CPython 3.12; the host's differs), by
Node.js, once: :func:`judge.commands.site.pyodide_dist.ensure_compiled` caches them on disk, and so does
:func:`judge.commands.site.pyodide_snapshot.ensure_snapshot` for the memory snapshot. Without Node.js the
build warns and the site loads the plain files (slower start, same behaviour).

What is never written: reference solutions, secret tests, wrong solutions (only the published
files listed above are read from a problem folder at all; an asset that is a symbolic link, or
holds one of those files' content, stops the build). The build is staged in a temporary
sibling folder and renamed into place; an existing SITE_DIR is replaced only if it is empty or
was made by this function (it holds the marker file ``.pp-judge-site``).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core import assets as problem_assets
from ...core.errors import JudgeError
from ...core.problem import Problem, ProblemError, discover_problems
from ...engines import unfinished
from . import pyodide_dist, pyodide_snapshot
from .course import CourseText, apply_course_text, course_text
from .markdown import render_markdown
from .publish import write_headers

__all__ = ["build_site", "build_engine_site", "write_engine", "BuildError", "web_source_dir", "MARKER"]

MARKER = ".pp-judge-site"
PYODIDE_MODES = ("self", "cdn")
CONFIG_PLACEHOLDER = "<!--SITE_CONFIG-->"
SW_PLACEHOLDER = "/*__PRECACHE__*/"
BOOT_PACKAGES = ("numpy", "pytest")  # loaded while Pyodide boots

# web/ entries that are sources or tooling, not site content
_WEB_EXCLUDE = {"node_modules", "src", "package.json", "package-lock.json", "vendor.sh", ".gitignore",
                "README.md"}
# judge/ entries that must not go to the browser: native-only code (never imported in Pyodide)
# The judge's files the browser engine loads (relative to judge/): the layout says what runs where.
BROWSER_BUNDLE = ("__init__.py", "artifacts.py", "core", "engines/__init__.py", "engines/pyodide_boot.py",
                  "engines/unfinished.py", "sandbox/__init__.py", "sandbox/learner.py", "sandbox/standin.py",
                  "sandbox/inprocess.py", "sandbox/guard.py")
_ZIP_DATE = (2020, 1, 1, 0, 0, 0)  # fixed timestamps: the same source gives the same zip bytes


class BuildError(JudgeError, RuntimeError):
    """The site could not be built (invalid problems, missing web sources, unusable SITE_DIR)."""


def build_site(site_dir: Path, *, pyodide: str = "self", problems_dir: Path,
               cache_dir: Path | None = None, course: CourseText | None = None) -> None:
    """Write the static site for the problems under ``problems_dir`` into ``site_dir``.

    ``pyodide="self"`` copies the trimmed Pyodide distribution into the site (cached on disk by
    :func:`judge.commands.site.pyodide_dist.ensure_distribution`, so a second build needs no network);
    ``pyodide="cdn"`` makes the page load the official distribution of the same version.
    ``cache_dir`` is passed to ``ensure_distribution`` (default: its own cache folder). ``course``
    is the site's title and introduction (default: the problems folder's ``course.toml``, if any).
    """
    if pyodide not in PYODIDE_MODES:
        raise BuildError(f"--pyodide must be one of {', '.join(PYODIDE_MODES)}, got {pyodide!r}")
    site_dir = Path(site_dir).absolute()
    problems = _load_problems(Path(problems_dir))
    web = web_source_dir()
    _check_target(site_dir)
    site_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{site_dir.name}.build-", dir=site_dir.parent))
    try:
        _build_into(staging, web, problems, pyodide, cache_dir, course or course_text(Path(problems_dir)))
        staging.chmod(0o755)
        _replace(staging, site_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def web_source_dir() -> Path:
    """The front-end sources: ``web/`` of the repository (or ``judge/_web`` in an installed wheel)."""
    package = Path(__file__).resolve().parents[2]
    for candidate in (package / "_web", package.parent / "web"):
        if (candidate / "index.html").is_file() and (candidate / "vendor").is_dir():
            return candidate
    raise BuildError(f"the web front end was not found (looked for {package.parent / 'web'}/index.html "
                     "and web/vendor/)")


# ---------------------------------------------------------------------------------------------
# steps


def _load_problems(problems_dir: Path) -> list[Problem]:
    try:
        problems, errors = discover_problems(problems_dir)
    except ProblemError as exc:
        raise BuildError(str(exc)) from None
    if errors:
        raise BuildError("invalid problem folder(s), fix them or run `python -m judge check`:\n"
                         + "\n".join(f"  {e}" for e in errors))
    if not problems:
        raise BuildError(f"{problems_dir}: no problem folders (folders with a problem.toml)")
    return problems


def _build_into(out: Path, web: Path, problems: list[Problem], mode: str, cache_dir: Path | None,
                course: CourseText) -> None:
    _copy_web(web, out)
    assets = out / "assets"
    assets.mkdir(exist_ok=True)
    _copy_problem_assets(out, problems)

    wheels = _package_wheels(problems, assets / "wheels", cache_dir)
    manifest = {"problems": [_problem_entry(p, wheels) for p in problems]}
    manifest_bytes = (json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=None) + "\n").encode()
    manifest_name = _hashed_name("problems", ".json", manifest_bytes)
    (assets / manifest_name).write_bytes(manifest_bytes)

    engine = write_engine(out, mode, cache_dir)
    config: dict[str, Any] = {
        **engine.config,
        "manifest": f"assets/{manifest_name}",
        "micropip": wheels.get("micropip"),
        "problems": [{"id": p.id, "title": p.title} for p in problems],
    }
    files = sorted(_site_files(out))
    build_id = _digest_files(out, files, extra=json.dumps(config, sort_keys=True).encode())[:16]
    config["build"] = build_id
    _write_index(out, config, course)
    _write_service_worker(out, build_id,
                          [f for f in files if f not in ("sw.js", MARKER) and f not in engine.not_precached]
                          + ["index.html"],
                          cdn_prefix=engine.index_url if mode == "cdn" else None,
                          http_cached=["pyodide/"] if mode == "self" else [])
    (out / MARKER).write_text(json.dumps({"build": build_id, "pyodide": mode}) + "\n", encoding="utf-8")
    write_headers(out)


@dataclass(frozen=True)
class EngineFiles:
    """What :func:`write_engine` wrote: the engine's part of the site configuration, and more."""

    config: dict[str, Any]  # "pyodide", "judge_zip", "judge_pyc", "unfinished"
    index_url: str  # where Pyodide is loaded from (relative to the site, or the CDN)
    not_precached: frozenset[str] = frozenset()  # files the app never loads (the plain twins)


def write_engine(out: Path, mode: str = "self", cache_dir: Path | None = None, *,
                 require_compiled: bool = False) -> EngineFiles:
    """Write the files the Python engine boots from into the site folder ``out``.

    The judge package (and, in ``self`` mode, Pyodide, its compiled twins and the judge's
    bytecode) under ``assets/`` and ``pyodide/``; ``web/js/boot.mjs`` boots from them in the browser
    and in the Node.js harness alike. With ``require_compiled`` a failure to compile is an error
    instead of a warning.
    """
    assets = out / "assets"
    assets.mkdir(parents=True, exist_ok=True)
    judge_bytes = judge_zip_bytes()
    judge_name = _hashed_name("judge", ".zip", judge_bytes)
    (assets / judge_name).write_bytes(judge_bytes)
    version = pyodide_dist.PYODIDE_VERSION
    pyodide_config: dict[str, Any] = {"mode": mode, "version": version, "packages": list(BOOT_PACKAGES)}
    config: dict[str, Any] = {"pyodide": pyodide_config, "judge_zip": f"assets/{judge_name}", "judge_pyc": None,
                              "unfinished": unfinished.templates()}
    if mode != "self":
        pyodide_config["indexURL"] = pyodide_dist.CDN_URL
        return EngineFiles(config, pyodide_dist.CDN_URL)
    pyodide_config["indexURL"] = f"pyodide/{version}/"
    return _write_pyodide(out, config, judge_bytes, cache_dir, require_compiled)


def _write_pyodide(out: Path, config: dict[str, Any], judge_bytes: bytes, cache_dir: Path | None,
                   require_compiled: bool) -> EngineFiles:
    """The self-hosted distribution and, when they can be made, its compiled twins and the judge's."""
    index_url = config["pyodide"]["indexURL"]
    dist = pyodide_dist.ensure_distribution(cache_dir)
    (out / index_url).mkdir(parents=True)
    for name in sorted(pyodide_dist.DIST_FILES):
        shutil.copyfile(dist / name, out / index_url / name)
    compiled = _compiled_distribution(cache_dir, judge_bytes, require_compiled)
    if compiled is None:
        return EngineFiles(config, index_url)
    twins, judge_pyc_bytes = compiled
    folder = _write_compiled(out, twins)
    config["pyodide"]["lockFileURL"] = f"pyodide/{folder}/pyodide-lock.json"
    config["pyodide"]["stdLibURL"] = f"pyodide/{folder}/python_stdlib.zip"
    config["judge_pyc"] = f"assets/{_hashed_name('pyc-judge', '.zip', judge_pyc_bytes)}"
    (out / config["judge_pyc"]).write_bytes(judge_pyc_bytes)
    snapshot = _snapshot(twins, judge_bytes, judge_pyc_bytes, cache_dir, require_compiled)
    if snapshot is not None:
        url = f"pyodide/judge-snapshot-{snapshot.sha256[:12]}.img.gz"
        shutil.copyfile(snapshot.path, out / url)
        config["pyodide"]["snapshot"] = snapshot.config(url)
    # the app never loads the plain twins: they stay in the site (the pinned distribution, as
    # published), but the service worker does not download them
    plain = {f"{index_url}{name}" for name in twins.files} | {f"{index_url}{pyodide_dist.TRIMMED_LOCK.name}"}
    return EngineFiles(config, index_url, frozenset(plain))


def build_engine_site(site_dir: Path, cache_dir: Path | None = None) -> dict[str, Any]:
    """A site folder with the engine alone (no problems), for the Node.js harness; its configuration.

    The same web front end and :func:`write_engine` files as :func:`build_site` in ``self`` mode,
    compiled bytecode required, with the configuration embedded in ``index.html`` as usual.
    """
    site_dir = Path(site_dir)
    site_dir.mkdir(parents=True, exist_ok=True)
    _copy_web(web_source_dir(), site_dir)
    engine = write_engine(site_dir, "self", cache_dir, require_compiled=True)
    config = {**engine.config, "problems": []}
    _write_index(site_dir, config)
    return config


def _compiled_distribution(cache_dir: Path | None, judge_bytes: bytes, required: bool = False
                           ) -> tuple[pyodide_dist.CompiledDistribution, bytes] | None:
    """Bytecode-compiled twins of the distribution and the judge's pycs; ``None`` (with a warning)
    when they cannot be made here (no Node.js): the site then loads the plain files."""
    try:
        twins, packages = pyodide_dist.ensure_compiled(cache_dir, {"judge": judge_bytes})
    except pyodide_dist.DistributionError as exc:
        if required:
            raise
        print(f"judge build: warning: shipping Pyodide without compiled bytecode (slower start): {exc}",
              file=sys.stderr)
        return None
    return twins, packages["judge"]


def _snapshot(twins: pyodide_dist.CompiledDistribution, judge_bytes: bytes, judge_pyc_bytes: bytes,
              cache_dir: Path | None, required: bool) -> pyodide_snapshot.Snapshot | None:
    """The memory snapshot the worker boots from (see :mod:`judge.commands.site.pyodide_snapshot`); ``None``
    (with a warning) when it cannot be made here: the site then boots the plain way."""
    try:
        return pyodide_snapshot.ensure_snapshot(twins, judge_bytes, judge_pyc_bytes,
                                                web_source_dir() / "js" / "boot.mjs", cache_dir)
    except pyodide_dist.DistributionError as exc:
        if required:
            raise
        print(f"judge build: warning: shipping no memory snapshot (slower start): {exc}", file=sys.stderr)
        return None


def _write_compiled(out: Path, twins: pyodide_dist.CompiledDistribution) -> str:
    """Copy the compiled twins into ``pyodide/compiled-<hash>/`` with their lock; return the folder name."""
    digest = hashlib.sha256(json.dumps(sorted(twins.files.items())).encode()).hexdigest()[:12]
    folder = f"compiled-{digest}"
    target = out / "pyodide" / folder
    target.mkdir(parents=True)
    for name in sorted(twins.files):
        shutil.copyfile(twins.folder / name, target / name)
    # Pyodide resolves a lock's file_name against indexURL (pyodide/<version>/)
    (target / pyodide_dist.TRIMMED_LOCK[0]).write_bytes(twins.lock(f"../{folder}/"))
    return folder


def _copy_web(web: Path, out: Path) -> None:
    for item in sorted(web.iterdir()):
        if item.name in _WEB_EXCLUDE or item.name.startswith("."):
            continue
        if item.is_dir():
            shutil.copytree(item, out / item.name, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        else:
            shutil.copyfile(item, out / item.name)
    for required in ("index.html", "worker.js", "sw.js"):
        if not (out / required).is_file():
            raise BuildError(f"{web / required}: missing from the web front end")


def _problem_entry(problem: Problem, wheels: dict[str, Any]) -> dict[str, Any]:
    """One problem in the manifest: metadata, rendered statement and its published files only."""
    folder = problem.path
    files: list[dict[str, str]] = []
    published = [folder / "problem.toml", folder / "README.md", problem.starter_path]
    public_dir = folder / "tests" / "public"
    published += sorted(p for p in public_dir.rglob("*")
                        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")
    published += list(problem.support_files)
    for path in published:
        files.append(_file_record(path.relative_to(folder).as_posix(), path.read_bytes()))
    public = [f["path"] for f in files if f["path"].startswith("tests/public/")]
    support = [f["path"] for f in files if f["path"].startswith("support/")]
    return {
        "id": problem.id, "title": problem.title, "summary": problem.summary, "order": problem.order,
        "difficulty": problem.difficulty, "entry": problem.entry, "time_limit": problem.time_limit,
        "memory_limit": problem.memory_limit, "tags": list(problem.tags), "packages": list(problem.packages),
        "wheels": [w for pkg in problem.packages for w in wheels.get("by_package", {}).get(pkg, [])],
        "statement_html": render_markdown(problem.statement, problem_assets.site_folder(problem.id, folder)),
        "starter": problem.starter,
        "public_tests": public, "support": support,
        "files": files,
    }


def _copy_problem_assets(out: Path, problems: list[Problem]) -> None:
    """Every problem's assets/ into its content-hashed site folder, after the same leak checks as check's."""
    for problem in problems:
        refused = problem_assets.unpublishable(problem.path) + problem_assets.leaks(problem.path)
        if refused:
            raise BuildError(f"{problem.path}: assets/ cannot be published:\n" + "\n".join(f"  {r}" for r in refused))
        folder = problem_assets.site_folder(problem.id, problem.path)
        if folder is None:
            continue
        for path in problem_assets.asset_files(problem.path):
            target = out / folder / path.relative_to(problem.path / problem_assets.ASSETS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


def _file_record(path: str, data: bytes) -> dict[str, str]:
    try:
        return {"path": path, "text": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"path": path, "base64": base64.b64encode(data).decode("ascii")}


def judge_zip_bytes() -> bytes:
    """The browser's part of the ``judge`` package as a zip (``judge/...``); reproducible.

    That part is :data:`BROWSER_BUNDLE`: what runs in both engines (``judge/core/``, the authoring
    API ``judge/artifacts.py``) and the browser engine's Python half (``judge/engines/``' shared
    modules). Commands, formats and the native engine stay out.
    """
    root = Path(__file__).resolve().parents[2]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if not path.is_file() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo"):
                continue
            if not any(rel.as_posix() == part or rel.as_posix().startswith(part + "/") for part in BROWSER_BUNDLE):
                continue
            info = zipfile.ZipInfo(f"judge/{rel.as_posix()}", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    return buffer.getvalue()


def _package_wheels(problems: list[Problem], dest: Path, cache_dir: Path | None) -> dict[str, Any]:
    """Wheels for the extra packages problems declare, plus micropip; ``{}`` when none is declared."""
    wanted = sorted({pkg for p in problems for pkg in p.packages})
    if not wanted:
        return {}
    cache = _wheel_cache(cache_dir)
    by_package: dict[str, list[str]] = {}
    for pkg in wanted:
        by_package[pkg] = [f"assets/wheels/{name}" for name in _fetch_wheels([pkg], cache, dest)]
    micropip = [f"assets/wheels/{name}" for name in _fetch_wheels([f"micropip=={MICROPIP_VERSION}"], cache, dest,
                                                                     no_deps=True)]
    return {"by_package": by_package, "micropip": micropip[0]}


MICROPIP_VERSION = "0.9.0"
# Already in the Pyodide distribution (loaded at boot or available to loadPackage): never re-ship.
_IN_DISTRIBUTION = {"numpy", "pytest", "pluggy", "iniconfig", "packaging"}


def _wheel_cache(cache_dir: Path | None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir).parent / "wheels"
    return pyodide_dist.default_cache_dir().parent / "wheels"


def _fetch_wheels(requirements: list[str], cache: Path, dest: Path, no_deps: bool = False) -> list[str]:
    """Pure-Python wheels (for Pyodide's Python 3.12) for ``requirements`` and their dependencies.

    Uses ``pip download`` into a per-requirement folder of the cache; a second build reuses it.
    Only ``py3-none-any``-style wheels are accepted (the browser cannot use compiled wheels).
    """
    key = hashlib.sha256(("\n".join(requirements) + str(no_deps)).encode()).hexdigest()[:16]
    folder = cache / key
    done = folder / ".complete"
    if not done.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--python-version", "3.12",
               "--implementation", "py", "--platform", "any", "--abi", "none", "--disable-pip-version-check",
               "--no-input", "-q", "-d", str(folder), *requirements]
        if no_deps:
            cmd.insert(4, "--no-deps")
        proc = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            raise BuildError(f"could not fetch pure-Python wheels for {requirements} with pip "
                             f"(a browser package must have a py3-none-any wheel):\n"
                             f"{(proc.stderr or proc.stdout).strip()[-2000:]}")
        done.write_text("ok\n")
    names = []
    dest.mkdir(parents=True, exist_ok=True)
    for wheel in sorted(folder.glob("*.whl")):
        dist_name = wheel.name.split("-")[0].lower().replace("_", "-")
        if dist_name in _IN_DISTRIBUTION and not no_deps:
            continue
        if not wheel.name.endswith("-none-any.whl"):
            raise BuildError(f"{wheel.name}: not a pure-Python wheel; Pyodide cannot install it from the site")
        shutil.copyfile(wheel, dest / wheel.name)
        names.append(wheel.name)
    return names


def _site_files(out: Path) -> list[str]:
    return [p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()]


def _digest_files(out: Path, files: list[str], extra: bytes = b"") -> str:
    h = hashlib.sha256(extra)
    for name in sorted(files):
        h.update(name.encode() + b"\0")
        h.update(hashlib.sha256((out / name).read_bytes()).digest())
    return h.hexdigest()


def _hashed_name(stem: str, suffix: str, data: bytes) -> str:
    return f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"


def _write_index(out: Path, config: dict[str, Any], course: CourseText | None = None) -> None:
    index = out / "index.html"
    text = apply_course_text(index.read_text(encoding="utf-8"), course or CourseText())
    if CONFIG_PLACEHOLDER not in text:
        raise BuildError(f"web/index.html lacks the {CONFIG_PLACEHOLDER} placeholder")
    payload = json.dumps(config, ensure_ascii=False).replace("</", "<\\/")
    titles = "".join(f'<li><a href="#/{html.escape(p["id"])}">{html.escape(p["title"])}</a></li>'
                     for p in config["problems"])
    # js/engine.js right after the configuration, async: it starts the Python engine as soon as it
    # arrives, while the page's other modules (editor, KaTeX) are still loading
    text = text.replace(CONFIG_PLACEHOLDER,
                        f'<script type="application/json" id="site-config">{payload}</script>\n'
                        '<script type="module" async src="js/engine.js"></script>')
    text = text.replace("<!--NOSCRIPT_PROBLEMS-->", titles)
    index.write_text(text, encoding="utf-8")


def _write_service_worker(out: Path, build_id: str, files: list[str], cdn_prefix: str | None,
                          http_cached: list[str] | None = None) -> None:
    sw = out / "sw.js"
    text = sw.read_text(encoding="utf-8")
    if SW_PLACEHOLDER not in text:
        raise BuildError(f"web/sw.js lacks the {SW_PLACEHOLDER} placeholder")
    urls = ["./"] + sorted(f for f in files if f != "index.html")
    settings = {"build": build_id, "precache": urls, "cdnPrefix": cdn_prefix, "httpCached": http_cached or []}
    sw.write_text(text.replace(SW_PLACEHOLDER, f"const SETTINGS = {json.dumps(settings, indent=1)};"),
                  encoding="utf-8")


def _check_target(site_dir: Path) -> None:
    if not site_dir.exists():
        return
    if not site_dir.is_dir():
        raise BuildError(f"{site_dir} exists and is not a folder")
    if any(site_dir.iterdir()) and not (site_dir / MARKER).is_file():
        raise BuildError(f"{site_dir} is not empty and was not made by `judge build` (no {MARKER}); "
                         "refusing to replace it: choose an empty or new folder")


def _replace(staging: Path, site_dir: Path) -> None:
    if site_dir.exists():
        trash = Path(tempfile.mkdtemp(prefix=f".{site_dir.name}.old-", dir=site_dir.parent))
        os.rename(site_dir, trash / "site")
        shutil.rmtree(trash, ignore_errors=True)
    os.rename(staging, site_dir)
