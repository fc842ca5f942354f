"""Publishing a built site: the ``_headers`` file and a GitHub Pages workflow.

``_headers`` (Netlify and Cloudflare Pages syntax) asks the host for what ``judge serve`` sends
(:mod:`judge.commands.site.serve`): the cross-origin isolation headers on every file, a year of caching
for the versioned and content-hashed folders (``pyodide/``, ``assets/``) and revalidation
(``no-cache``) for everything else. No header is set by two rules that match the same path, so
neither host has to merge values. The hosts do not serve the file itself.

GitHub Pages sends no custom headers. The workflow (:func:`write_pages_workflow`) installs the
judge from its wheel, which ``judge build --github-pages-workflow`` writes into the repository
(``.judge/wheels/``, without any solution), builds the site on GitHub and deploys it; there the
service worker (``web/sw.js``) adds the isolation headers to every response it serves, so a learner's
page is isolated from the second load on.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from ... import __version__
from ...engines.pyodide_dist import PYODIDE_VERSION
from .serve import IMMUTABLE_PREFIXES

HEADERS_FILE = "_headers"
WORKFLOW = Path(".github") / "workflows" / "pages.yml"
ISOLATION = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"


def headers_text(site: Path) -> str:
    """The ``_headers`` file for the built site in ``site`` (its top-level entries are listed)."""
    rules = [("/*", ISOLATION)]
    rules += [(f"{prefix}*", {"Cache-Control": IMMUTABLE}) for prefix in IMMUTABLE_PREFIXES
              if (site / prefix.strip("/")).exists()]
    rules += [(path, {"Cache-Control": REVALIDATE}) for path in _revalidated(site)]
    blocks = ["\n".join([pattern, *(f"  {name}: {value}" for name, value in headers.items())])
              for pattern, headers in rules]
    return (f"# Response headers for Netlify and Cloudflare Pages, written by `judge build` (judge {__version__}):\n"
            "# cross-origin isolation everywhere; versioned files cached for a year, the rest revalidated.\n"
            + "\n\n".join(blocks) + "\n")


def write_headers(site: Path) -> None:
    """Write ``site/_headers`` (after the service worker's precache list: it is not a page's file)."""
    (site / HEADERS_FILE).write_text(headers_text(site), encoding="utf-8")


def _revalidated(site: Path) -> list[str]:
    """URL patterns for every top-level entry outside the immutable folders (no overlap with them)."""
    immutable = {prefix.strip("/") for prefix in IMMUTABLE_PREFIXES}
    patterns = ["/"]
    for entry in sorted(site.iterdir()):
        if entry.name in immutable or entry.name.startswith((".", "_")):
            continue
        patterns.append(f"/{entry.name}/*" if entry.is_dir() else f"/{entry.name}")
    return patterns


_WORKFLOW = """\
# Publish the exercises to GitHub Pages on every push to @@BRANCH@@ (and on demand, from the Actions tab).
# Written by `judge build --github-pages-workflow` (judge @@VERSION@@). Once, in the repository's
# Settings > Pages > Build and deployment, set Source to "GitHub Actions".
# GitHub Pages sends no custom headers: the site's service worker adds the cross-origin isolation
# headers from a learner's second load on (before that, Stop restarts Python instead of interrupting it).
name: Publish the exercises
on:
  push:
    branches: [@@BRANCH@@]
  workflow_dispatch:
permissions:
  contents: read
  pages: write
  id-token: write
concurrency:
  group: pages
  cancel-in-progress: false
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - name: Check out the course
        uses: actions/checkout@v4
      - name: Set up Python
        uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - name: Set up Node.js (npm fetches Pyodide once; node compiles its bytecode)
        uses: actions/setup-node@v4
        with:
          node-version: "20"
      - name: Install the judge (its wheel, committed with the course; the dependencies from the package index)
        run: python -m pip install @@REQUIREMENT@@
      - name: Cache the Pyodide distribution
        uses: actions/cache@v4
        with:
          path: ~/.cache/pp-judge
          key: pp-judge-@@VERSION@@-pyodide-@@PYODIDE_VERSION@@
      - name: Check the problems
        run: judge check@@PROBLEMS@@
      - name: Build the site
        run: judge build @@SITE@@ --pyodide @@MODE@@@@PROBLEMS_OPTION@@
      - name: Configure GitHub Pages
        uses: actions/configure-pages@v5
      - name: Upload the site
        uses: actions/upload-pages-artifact@v3
        with:
          path: @@SITE_YAML@@
  deploy:
    needs: build
    runs-on: ubuntu-latest
    environment:
      name: github-pages
      url: ${{ steps.deployment.outputs.page_url }}
    steps:
      - name: Deploy to GitHub Pages
        id: deployment
        uses: actions/deploy-pages@v4
"""


def pages_workflow(site: str, mode: str, problems: str | None, wheel: str, branch: str = "main") -> str:
    """The GitHub Actions workflow that checks the problems, builds ``site`` and deploys it.

    ``site``, ``problems`` and ``wheel`` (the judge's wheel, committed with the course) are paths
    relative to the repository's root (``problems=None``: the judge's default, ./problems).
    """
    values = {
        "@@BRANCH@@": branch, "@@VERSION@@": __version__, "@@PYODIDE_VERSION@@": PYODIDE_VERSION,
        "@@REQUIREMENT@@": shlex.quote(wheel),
        "@@PROBLEMS@@": f" {shlex.quote(problems)}" if problems else "",
        "@@PROBLEMS_OPTION@@": f" --problems {shlex.quote(problems)}" if problems else "",
        "@@SITE@@": shlex.quote(site), "@@SITE_YAML@@": json.dumps(site), "@@MODE@@": mode,
    }
    text = _WORKFLOW
    for key, value in values.items():
        text = text.replace(key, value)
    return text


def write_pages_workflow(repo: Path, site: str, mode: str, problems: str | None, wheel: str) -> Path:
    """Write ``repo/.github/workflows/pages.yml``; refuse to replace a different file there."""
    path = repo / WORKFLOW
    text = pages_workflow(site, mode, problems, wheel)
    if path.exists() and path.read_text(encoding="utf-8") != text:
        raise FileExistsError(f"{path} exists and differs from the workflow this judge writes; "
                              "delete it (or move it away) to write a new one")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
