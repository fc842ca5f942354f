"""Build the deployable static site: ``python -m judge build SITE_DIR [--pyodide self|cdn]``.

The site is the front end from ``web/`` (HTML, CSS, JavaScript modules and the vendored, pinned
browser libraries under ``web/vendor/``), plus what this build generates::

    SITE_DIR/
      index.html                the page, with the site configuration embedded as JSON (and in it
                                the judge's message catalogs, for the page's own words)
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
Node.js, once: :func:`judge.engines.pyodide_dist.ensure_compiled` caches them on disk, and so does
:func:`judge.engines.pyodide_snapshot.ensure_snapshot` for the memory snapshot (the engine's files are
written by :mod:`judge.engines.pyodide_files`). Without Node.js the
build warns and the site loads the plain files (slower start, same behaviour).

What is never written: reference solutions, secret tests, wrong solutions (only the published
files listed above are read from a problem folder at all; an asset that is a symbolic link, or
holds one of those files' content, stops the build). The build is staged in a temporary
sibling folder and renamed into place; an existing SITE_DIR is replaced only if it is empty or
was made by this function (it holds the marker file ``.pp-judge-site``).
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...core import assets as problem_assets
from ...core.errors import ExitCode, JudgeError, UsageError
from ...core.problem import Problem, ProblemError, discover_problems
from ...engines import pyodide_dist
from ...engines.pyodide_files import (
    BROWSER_BUNDLE,
    copy_web,
    embed_config,
    hashed_name,
    web_source_dir,
    write_engine,
)
from ...i18n import _
from ..options import (
    PROBLEMS_HELP,
    PROBLEMS_SOURCE,
    assignment_problems,
    default_problems_dir,
    language_option,
    load_problems,
)
from ..statements import translations
from .compress import write_twins
from .course import CourseText, apply_course_text, course_text
from .i18n import site_catalogs
from .markdown import render_markdown, statement_title
from .publish import write_headers

__all__ = ["build_site", "write_engine", "BuildError", "web_source_dir", "MARKER", "BROWSER_BUNDLE"]

MARKER = ".pp-judge-site"
PYODIDE_MODES = ("self", "cdn")
SW_PLACEHOLDER = "/*__PRECACHE__*/"
PRELOAD_PLACEHOLDER = "<!--PRELOAD-->"
PAGE_ENTRY = "js/app.js"
#: the KaTeX faces nearly every formula uses (the others load when a formula needs them)
MATH_FONTS = ("vendor/katex/fonts/KaTeX_Main-Regular.woff2", "vendor/katex/fonts/KaTeX_Math-Italic.woff2")
_STATIC_IMPORT = re.compile(r"""^[ \t]*(?:import|export)\s+(?:[^"';()]*?\bfrom\s*)?["']([^"']+)["']""", re.M)



class BuildError(JudgeError, RuntimeError):
    """The site could not be built (invalid problems, missing web sources, unusable SITE_DIR)."""


def build_site(site_dir: Path, *, pyodide: str = "self", problems_dir: Path,
               cache_dir: Path | None = None, course: CourseText | None = None,
               only: Sequence[str] | None = None) -> None:
    """Write the static site for the problems under ``problems_dir`` into ``site_dir``.

    ``pyodide="self"`` copies the trimmed Pyodide distribution into the site (cached on disk by
    :func:`judge.commands.site.pyodide_dist.ensure_distribution`, so a second build needs no network);
    ``pyodide="cdn"`` makes the page load the official distribution of the same version.
    ``cache_dir`` is passed to ``ensure_distribution`` (default: its own cache folder). ``course``
    is the site's title and introduction (default: the problems folder's ``course.toml``, if any).
    ``only``: the ids of the problems to publish, in that order (an assignment's; default: every one).
    """
    if pyodide not in PYODIDE_MODES:
        raise BuildError(f"--pyodide must be one of {', '.join(PYODIDE_MODES)}, got {pyodide!r}")
    site_dir = Path(site_dir).absolute()
    problems = _load_problems(Path(problems_dir))
    if only is not None:
        by_id = {p.id: p for p in problems}
        problems = [by_id[pid] for pid in only if pid in by_id]
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
    copy_web(web, out)
    assets = out / "assets"
    assets.mkdir(exist_ok=True)
    _copy_problem_assets(out, problems)

    wheels = _package_wheels(problems, assets / "wheels", cache_dir)
    manifest = {"problems": [_problem_entry(p, wheels) for p in problems]}
    manifest_bytes = (json.dumps(manifest, ensure_ascii=False, sort_keys=True, indent=None) + "\n").encode()
    manifest_name = hashed_name("problems", ".json", manifest_bytes)
    (assets / manifest_name).write_bytes(manifest_bytes)

    engine = write_engine(out, mode, cache_dir)
    config: dict[str, Any] = {
        **engine.config,
        "boot_files": _boot_files(out, engine.config),
        "manifest": f"assets/{manifest_name}",
        "micropip": wheels.get("micropip"),
        "problems": [{"id": p.id, "title": p.title} for p in problems],
        "i18n": site_catalogs(),  # the page's own words per language (web/js/i18n.js)
    }
    files = sorted(_site_files(out))
    build_id = _digest_files(out, files, extra=json.dumps(config, sort_keys=True).encode())[:16]
    config["build"] = build_id
    _write_index(out, config, course, preload_links(out, config["manifest"], _has_math(manifest["problems"])))
    _write_service_worker(out, build_id,
                          [f for f in files if f not in ("sw.js", MARKER) and f not in engine.not_precached]
                          + ["index.html"],
                          cdn_prefix=engine.index_url if mode == "cdn" else None,
                          http_cached=["pyodide/"] if mode == "self" else [])
    (out / MARKER).write_text(json.dumps({"build": build_id, "pyodide": mode}) + "\n", encoding="utf-8")
    write_headers(out)
    # last: twins of the files above (not in the precache list, the build id or _headers; a host that
    # negotiates the encoding serves them for the file itself)
    write_twins(out, [f for f in _site_files(out) if f != MARKER])


def _boot_files(out: Path, config: dict[str, Any]) -> list[dict[str, Any]]:
    """The large files a first visit's boot downloads, with their sizes (the page's progress)."""
    pyodide = config["pyodide"]
    if pyodide.get("mode") != "self":
        return []
    index = pyodide["indexURL"]
    snapshot = pyodide.get("snapshot")
    urls = [f"{index}pyodide.asm.js", f"{index}pyodide.asm.wasm"]
    if not snapshot:  # a restore goes without the standard library: it downloads once Python is ready
        urls.append(pyodide.get("stdLibURL") or f"{index}python_stdlib.zip")
    files = [{"url": url, "size": (out / url).stat().st_size} for url in urls if (out / url).is_file()]
    if snapshot and (out / snapshot["url"]).is_file():
        files.append({"url": snapshot["url"], "size": (out / snapshot["url"]).stat().st_size,
                      "decodedSize": snapshot.get("imageSize")})
    return files


def _problem_entry(problem: Problem, wheels: dict[str, Any]) -> dict[str, Any]:
    """One problem in the manifest: metadata, rendered statement and its published files only."""
    folder = problem.path
    files: list[dict[str, str]] = []
    published = [folder / "problem.toml", folder / "README.md", *translations(folder).values(), problem.starter_path]
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
        "statements_html": _translated_statements(problem),  # language -> HTML, README.<lang>.md rendered
        "titles": _translated_titles(problem),  # language -> the heading of README.<lang>.md
        "starter": problem.starter,
        "public_tests": public, "support": support,
        "files": files,
    }


def _translated_statements(problem: Problem) -> dict[str, str]:
    """Each translation of the statement rendered (a language without one reads ``statement_html``)."""
    assets_url = problem_assets.site_folder(problem.id, problem.path)
    return {lang: render_markdown(path.read_text(encoding="utf-8"), assets_url)
            for lang, path in translations(problem.path).items()}


def _translated_titles(problem: Problem) -> dict[str, str]:
    """Each translation's title, its first heading (a language without one reads ``title``)."""
    titles = {}
    for lang, path in translations(problem.path).items():
        title = statement_title(path.read_text(encoding="utf-8"))
        if title:
            titles[lang] = title
    return titles


def _copy_problem_assets(out: Path, problems: list[Problem]) -> None:
    """Every problem's assets/ into its content-hashed site folder, after the same leak checks as check's."""
    for problem in problems:
        refused = problem_assets.leaks(problem.path)
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


def _write_index(out: Path, config: dict[str, Any], course: CourseText | None = None, preload: str = "") -> None:
    index = out / "index.html"
    text = apply_course_text(index.read_text(encoding="utf-8"), course or CourseText())
    if PRELOAD_PLACEHOLDER not in text:
        raise BuildError(f"web/index.html lacks the {PRELOAD_PLACEHOLDER} placeholder")
    index.write_text(embed_config(text.replace(PRELOAD_PLACEHOLDER, preload), config), encoding="utf-8")


def preload_links(out: Path, manifest: str, math: bool) -> str:
    """``<link>`` tags that fetch the page's own files from the start: its modules, the problem
    manifest and, when a statement has math, KaTeX's two common faces.

    Without them each is found only when the one before it has run (app.js, then its imports, then
    the manifest, then the fonts), and on a slow line the page waits for that chain while Python's
    downloads wait for the page (see worker.js, "go").
    """
    href = functools.partial(html.escape, quote=True)
    links = [f'<link rel="modulepreload" href="{href(module)}">' for module in page_modules(out)]
    links.append(f'<link rel="preload" href="{href(manifest)}" as="fetch" crossorigin>')
    if math:
        links += [f'<link rel="preload" href="{href(font)}" as="font" type="font/woff2" crossorigin>'
                  for font in MATH_FONTS if (out / font).is_file()]
    return "\n".join(links)


def _has_math(entries: list[dict[str, Any]]) -> bool:
    """Whether a statement, in any language, has a formula for KaTeX (see web/js/statement.js)."""
    return any('class="math' in html for entry in entries
               for html in [entry["statement_html"], *entry.get("statements_html", {}).values()])


def page_modules(out: Path, entry: str = PAGE_ENTRY) -> list[str]:
    """The site's JavaScript modules ``entry`` imports statically, directly or through others
    (site-relative paths, ``entry`` first, in the order they are found)."""
    found = [entry]
    for module in found:
        folder = Path(module).parent
        for target in _STATIC_IMPORT.findall((out / module).read_text(encoding="utf-8")):
            if not target.startswith("."):
                continue
            path = os.path.normpath(folder / target).replace(os.sep, "/")
            if path not in found and (out / path).is_file():
                found.append(path)
    return found


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


# ------------------------------------------------------------------------------------------- the command
DESCRIPTION = "Write the static web site into SITE_DIR, with a _headers file for Netlify and Cloudflare Pages."
EPILOG = PROBLEMS_SOURCE


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``judge build``'s options: where, which Pyodide, which problems, the course's words, GitHub Pages."""
    parser.add_argument("site_dir", type=Path, metavar="SITE_DIR")
    parser.add_argument("--pyodide", choices=("self", "cdn"), default="self",
                        help="self: ship a trimmed Pyodide (offline); cdn: load it from the official CDN")
    parser.add_argument("--problems", type=Path, metavar="DIR", help=PROBLEMS_HELP)
    parser.add_argument("--title", metavar="TEXT", help="the site's title (default: the problems folder's "
                        "course.toml, else the judge's own)")
    parser.add_argument("--intro", metavar="MARKDOWN", help="the home page's introduction (default: course.toml's)")
    parser.add_argument("--assignment", metavar="NAME", help="publish only the problems of the course's assignment "
                        "NAME (course.toml's [[assignments]] beside the problems)")
    parser.add_argument("--github-pages-workflow", action="store_true", help="also write "
                        ".github/workflows/pages.yml in the current folder (your repository's root): GitHub builds "
                        "and publishes the site on every push to main")
    language_option(parser, "the errors")


def run(args: argparse.Namespace) -> int:
    """Build the site (and with --github-pages-workflow, the workflow that builds it on GitHub)."""
    from ..scaffold import inside_judge_package

    if inside_judge_package(args.site_dir):
        raise UsageError(_("{path} is inside the judge's own package; write the site elsewhere")
                         .format(path=args.site_dir))
    from .course import COURSE_FILE, course_text

    problems = args.problems or default_problems_dir()
    if args.github_pages_workflow and (args.title or args.intro):
        raise UsageError(_("--github-pages-workflow: put the title and intro in {file} (title = \"...\", intro = "
                           "\"...\"), which the workflow's build reads too, instead of --title/--intro")
                         .format(file=problems / COURSE_FILE))
    only = None
    if args.assignment and args.github_pages_workflow:
        raise UsageError("--github-pages-workflow publishes every problem: build an assignment's site without it")
    if args.assignment:
        chosen, _assignment = assignment_problems(args)
        only = [p.id for p in chosen]
    build_site(args.site_dir, pyodide=args.pyodide, problems_dir=problems,
               course=course_text(problems, args.title, args.intro), only=only)
    print(f"Wrote the site to {args.site_dir}/ (Pyodide: {args.pyodide}), with {args.site_dir}/_headers for "
          "Netlify and Cloudflare Pages.")
    if args.github_pages_workflow:
        print(_write_pages_workflow(args, problems))
    return ExitCode.OK


def _write_pages_workflow(args: argparse.Namespace, problems: Path) -> str:
    """Write the GitHub Pages workflow for this build command into the current folder; what to tell."""
    from .publish import write_pages_workflow

    here = Path.cwd().resolve()
    site, source = args.site_dir.resolve(), problems.resolve()
    if here not in site.parents:
        raise UsageError(_("--github-pages-workflow: {path} must be inside the current folder (the repository's "
                           "root), e.g. `judge build site --github-pages-workflow`").format(path=args.site_dir))
    if source != here and here not in source.parents:
        raise UsageError(_("--github-pages-workflow: the problems ({path}) must be in the repository: run it from "
                           "the course folder that holds them").format(path=problems))
    given = None if source == (here / "problems") else source.relative_to(here).as_posix()
    wheel = _course_wheel(here, source)
    try:
        path = write_pages_workflow(here, site.relative_to(here).as_posix(), args.pyodide, given, wheel)
    except FileExistsError as exc:
        raise UsageError(str(exc)) from None
    note = "" if (here / ".git").exists() else " (this folder is not a git repository's root: move it to the root)"
    return (f"Wrote {path.relative_to(here)} and {wheel} (the judge it installs){note}. Commit both with the "
            "problems, push, and in the repository's Settings > Pages set Source to GitHub Actions.")


def _course_wheel(repo: Path, problems: Path) -> str:
    """The judge's wheel, without solutions, in ``repo/.judge/wheels/`` (replacing an older one); its path there."""
    import tempfile

    from ..export.wheels import prepare_wheels

    folder = repo / ".judge" / "wheels"
    with tempfile.TemporaryDirectory(prefix="judge-pages-") as scratch:
        [built] = prepare_wheels(Path(scratch), load_problems(problems), None, None)
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("pp_judge-*.whl"):
            old.unlink()
        (folder / built.name).write_bytes(built.read_bytes())
    return (folder / built.name).relative_to(repo).as_posix()
