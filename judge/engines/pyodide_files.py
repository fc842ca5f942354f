"""The files the browser engine boots from, written into a site folder, and the engine-only site.

Both hosts of the browser engine (the page's Web Worker and the Node.js harness behind
``judge check --pyodide`` and the parity tests) boot from these files with ``web/js/boot.mjs``:
the judge's browser bundle (:data:`BROWSER_BUNDLE`, a reproducible zip), and in ``self`` mode the
pinned Pyodide distribution (:mod:`.pyodide_dist`), its bytecode-compiled twins and the memory
snapshot (:mod:`.pyodide_snapshot`). ``judge build`` (:mod:`judge.commands.site.build`) adds the
problems and the page around them; :func:`build_engine_site` makes a site with the engine alone.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import shutil
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import JudgeError
from . import pyodide_dist, pyodide_snapshot, unfinished

BOOT_PACKAGES = ("numpy", "pytest")  # loaded while Pyodide boots
#: what the browser gets of the judge: what runs in both engines, the browser engine's Python half and
#: the learner's side of the boundary as it runs in the browser's one interpreter
BROWSER_BUNDLE = ("__init__.py", "artifacts.py", "i18n.py", "lang.py", "core", "engines/__init__.py",
                  "engines/pyodide_boot.py", "engines/late_stdlib.py", "engines/unfinished.py",
                  "sandbox/__init__.py", "sandbox/learner.py", "sandbox/standin.py", "sandbox/inprocess.py",
                  "sandbox/guard.py")
CONFIG_PLACEHOLDER = "<!--SITE_CONFIG-->"
_ZIP_DATE = (2020, 1, 1, 0, 0, 0)  # fixed timestamps: the same source gives the same zip bytes
_WEB_EXCLUDE = {"node_modules", "src", "package.json", "package-lock.json", "vendor.sh", ".gitignore",
                "README.md"}  # web/ entries that are sources or tooling, not site content


class WebSourceError(JudgeError, RuntimeError):
    """The web front end is missing or incomplete."""


def web_source_dir() -> Path:
    """The front-end sources: ``web/`` of the repository (or ``judge/_web`` in an installed wheel)."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_web", package.parent / "web"):
        if (candidate / "index.html").is_file() and (candidate / "vendor").is_dir():
            return candidate
    raise WebSourceError(f"the web front end was not found (looked for {package.parent / 'web'}/index.html "
                     "and web/vendor/)")


def copy_web(web: Path, out: Path) -> None:
    """The front end's files (web/, without its npm tooling) into the site folder ``out``."""
    for item in sorted(web.iterdir()):
        if item.name in _WEB_EXCLUDE or item.name.startswith("."):
            continue
        if item.is_dir():
            shutil.copytree(item, out / item.name, ignore=shutil.ignore_patterns("__pycache__", ".*"))
        else:
            shutil.copyfile(item, out / item.name)
    for required in ("index.html", "worker.js", "sw.js"):
        if not (out / required).is_file():
            raise WebSourceError(f"{web / required}: missing from the web front end")


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
    judge_name = hashed_name("judge", ".zip", judge_bytes)
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
    config["judge_pyc"] = f"assets/{hashed_name('pyc-judge', '.zip', judge_pyc_bytes)}"
    (out / config["judge_pyc"]).write_bytes(judge_pyc_bytes)
    snapshot = _snapshot(twins, judge_bytes, judge_pyc_bytes, cache_dir, require_compiled)
    # the app never loads the plain twins: they stay in the site (the pinned distribution, as
    # published), but the service worker does not download them
    unused = {f"{index_url}{name}" for name in twins.files} | {f"{index_url}{pyodide_dist.TRIMMED_LOCK.name}"}
    if snapshot is not None:
        url = f"pyodide/judge-snapshot-{snapshot.sha256[:12]}.img.gz"
        shutil.copyfile(snapshot.path, out / url)
        stdlib = f"{index_url}{pyodide_snapshot.STDLIB}"
        config["pyodide"]["snapshot"] = {**snapshot.config(url), "stdLibURL": stdlib}
        # a restore mounts the plain standard library; only the plain boot (the fallback) the compiled one
        unused = (unused - {stdlib}) | {config["pyodide"]["stdLibURL"]}
    return EngineFiles(config, index_url, frozenset(unused))


def build_engine_site(site_dir: Path, cache_dir: Path | None = None) -> dict[str, Any]:
    """A site folder with the engine alone (no problems), for the Node.js harness; its configuration.

    The same web front end and :func:`write_engine` files as :func:`build_site` in ``self`` mode,
    compiled bytecode required, with the configuration embedded in ``index.html`` as usual.
    """
    site_dir = Path(site_dir)
    site_dir.mkdir(parents=True, exist_ok=True)
    copy_web(web_source_dir(), site_dir)
    engine = write_engine(site_dir, "self", cache_dir, require_compiled=True)
    config = {**engine.config, "problems": []}
    index = site_dir / "index.html"
    index.write_text(embed_config(index.read_text(encoding="utf-8"), config), encoding="utf-8")
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
    """The memory snapshot the worker boots from (see :mod:`judge.engines.pyodide_snapshot`); ``None``
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


def judge_zip_bytes() -> bytes:
    """The browser's part of the ``judge`` package as a zip (``judge/...``); reproducible.

    That part is :data:`BROWSER_BUNDLE`: what runs in both engines (``judge/core/``, the authoring
    API ``judge/artifacts.py``) and the browser engine's Python half (``judge/engines/``' shared
    modules). Commands, formats and the native engine stay out.
    """
    root = Path(__file__).resolve().parents[1]
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


def hashed_name(stem: str, suffix: str, data: bytes) -> str:
    """``stem-<12 hex of the sha256>suffix``: a name that changes with the content."""
    return f"{stem}-{hashlib.sha256(data).hexdigest()[:12]}{suffix}"


def embed_config(text: str, config: dict[str, Any]) -> str:
    """index.html's text with the site configuration (and the engine's early start) in place of its
    placeholder, and the problems' titles for readers without JavaScript."""
    if CONFIG_PLACEHOLDER not in text:
        raise WebSourceError(f"web/index.html lacks the {CONFIG_PLACEHOLDER} placeholder")
    payload = json.dumps(config, ensure_ascii=False).replace("</", "<\\/")
    titles = "".join(f'<li><a href="#/{html.escape(p["id"])}">{html.escape(p["title"])}</a></li>'
                     for p in config["problems"])
    # js/engine.js right after the configuration, async: it starts the Python engine as soon as it
    # arrives, while the page's other modules (editor, KaTeX) are still loading
    text = text.replace(CONFIG_PLACEHOLDER,
                        f'<script type="application/json" id="site-config">{payload}</script>\n'
                        '<script type="module" async src="js/engine.js"></script>')
    return text.replace("<!--NOSCRIPT_PROBLEMS-->", titles)
