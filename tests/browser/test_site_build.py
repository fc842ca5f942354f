"""The site build (no browser): what it ships, what it must never ship, and how it is served."""

from __future__ import annotations

import io
import json
import re
import urllib.request
import zipfile
from pathlib import Path

import pytest

from judge.problem import discover_problems
from judge.site import pyodide_dist
from judge.site.build import MARKER, BuildError, build_site
from judge.site.markdown import render_markdown
from tests.browser.conftest import Served
from tests.conftest import PROBLEMS


@pytest.fixture(scope="module")
def cdn_site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("cdn") / "site"
    build_site(site, pyodide="cdn", problems_dir=PROBLEMS)
    return site


def _texts(site: Path) -> dict[str, str]:
    """Every text a browser could read from the site, zip members and JSON strings unpacked."""
    texts: dict[str, str] = {}
    for path in sorted(site.rglob("*")):
        rel = path.relative_to(site).as_posix()
        if not path.is_file() or rel.startswith("pyodide/"):
            continue  # the Pyodide files are pinned by sha256 in judge/site/pyodide_dist.py
        data = path.read_bytes()
        if path.suffix == ".zip":
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                for name in zf.namelist():
                    texts[f"{rel}!{name}"] = zf.read(name).decode("utf-8", "replace")
            continue
        text = data.decode("utf-8", "replace")
        texts[rel] = text
        if path.suffix == ".json":
            texts[rel + "!strings"] = "\n".join(_strings(json.loads(text)))
    return texts


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _forbidden(problems_dir: Path) -> dict[str, str]:
    """Reference solutions, secret tests and wrong solutions: path -> content."""
    problems, errors = discover_problems(problems_dir)
    assert not errors, errors
    out = {}
    for problem in problems:
        paths = list(problem.secret_test_files) + list(problem.wrong_files)
        paths += [p for p in (problem.path / "tests" / "secret").rglob("*") if p.is_file()]
        if problem.reference_path:
            paths.append(problem.reference_path)
        for path in paths:
            out[str(path.relative_to(problems_dir))] = path.read_text(encoding="utf-8")
    return out


def _assert_nothing_secret(site: Path, problems_dir: Path) -> None:
    texts = _texts(site)
    forbidden = _forbidden(problems_dir)
    assert forbidden, "the scan found nothing to look for: is problems/ empty?"
    leaks = []
    for name, content in forbidden.items():
        body = content.strip()
        for where, text in texts.items():
            if body and body in text:
                leaks.append(f"{name} appears in {where}")
        base = Path(name).name
        for where, text in texts.items():
            if where.endswith("!strings") and re.search(rf"(secret|wrong|reference)/{re.escape(base)}", text):
                leaks.append(f"a path to {name} appears in {where}")
    assert not leaks, "\n".join(leaks)


def test_cdn_site_never_ships_references_secret_tests_or_wrong_solutions(cdn_site: Path) -> None:
    _assert_nothing_secret(cdn_site, PROBLEMS)


def test_self_site_never_ships_references_secret_tests_or_wrong_solutions(site_dir: Path, problems_root: Path) -> None:
    _assert_nothing_secret(site_dir, problems_root)


def test_manifest_holds_exactly_the_published_files(cdn_site: Path) -> None:
    manifest = json.loads(next((cdn_site / "assets").glob("problems-*.json")).read_text())
    problems, _ = discover_problems(PROBLEMS)
    assert [p["id"] for p in manifest["problems"]] == [p.id for p in problems]
    for entry, problem in zip(manifest["problems"], problems):
        paths = {f["path"] for f in entry["files"]}
        assert {"problem.toml", "README.md", f"starter/{problem.entry}"} <= paths
        assert {f"tests/public/{p.name}" for p in problem.public_test_files} <= paths
        assert {f"support/{p.name}" for p in problem.support_files} <= paths
        assert all(p.split("/")[0] in ("problem.toml", "README.md", "starter", "tests", "support") for p in paths)
        assert not [p for p in paths if p.startswith(("tests/secret", "reference", "wrong"))]
        assert entry["starter"] == problem.starter
        assert entry["statement_html"].strip()


def test_judge_package_ships_without_native_only_parts(cdn_site: Path) -> None:
    names = zipfile.ZipFile(next((cdn_site / "assets").glob("judge-*.zip"))).namelist()
    assert "judge/runner.py" in names and "judge/__init__.py" in names
    assert not [n for n in names if n.startswith(("judge/site/", "judge/pyodide_harness/", "judge/_problems/"))]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_cdn_mode_points_at_the_official_distribution(cdn_site: Path) -> None:
    config = _config(cdn_site)
    assert config["pyodide"]["indexURL"] == pyodide_dist.CDN_URL
    assert pyodide_dist.PYODIDE_VERSION in pyodide_dist.CDN_URL
    assert not (cdn_site / "pyodide").exists()


def test_self_mode_ships_the_pinned_distribution(site_dir: Path) -> None:
    config = _config(site_dir)
    folder = site_dir / config["pyodide"]["indexURL"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(pyodide_dist.DIST_FILES)
    sw = (site_dir / "sw.js").read_text()
    assert f'"{config["pyodide"]["indexURL"]}pyodide.asm.wasm"' in sw  # precached for offline use


def test_build_is_reproducible(cdn_site: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    build_site(again, pyodide="cdn", problems_dir=PROBLEMS)
    files = sorted(p.relative_to(cdn_site).as_posix() for p in cdn_site.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again).as_posix() for p in again.rglob("*") if p.is_file())
    for name in files:
        assert (cdn_site / name).read_bytes() == (again / name).read_bytes(), name


def test_build_refuses_to_replace_a_folder_it_did_not_make(tmp_path: Path) -> None:
    target = tmp_path / "mine"
    target.mkdir()
    (target / "notes.txt").write_text("keep me")
    with pytest.raises(BuildError, match="refusing"):
        build_site(target, pyodide="cdn", problems_dir=PROBLEMS)
    assert (target / "notes.txt").read_text() == "keep me"
    site = tmp_path / "site"
    build_site(site, pyodide="cdn", problems_dir=PROBLEMS)
    build_site(site, pyodide="cdn", problems_dir=PROBLEMS)  # a site made by build may be rebuilt
    assert (site / MARKER).is_file()
    with pytest.raises(BuildError, match="self|cdn"):
        build_site(site, pyodide="elsewhere", problems_dir=PROBLEMS)


def test_server_sends_isolation_headers_mime_types_and_cache_lifetimes(site_dir: Path) -> None:
    served = Served(site_dir)
    try:
        version = pyodide_dist.PYODIDE_VERSION

        def head(path: str):
            with urllib.request.urlopen(served.url + path) as response:
                response.read()
                return response.headers

        index = head("")
        assert index["Cross-Origin-Opener-Policy"] == "same-origin"
        assert index["Cross-Origin-Embedder-Policy"] == "require-corp"
        assert index["Content-Type"].startswith("text/html")
        assert index["Cache-Control"] == "no-cache"
        wasm = head(f"pyodide/{version}/pyodide.asm.wasm")
        assert wasm["Content-Type"] == "application/wasm"
        assert "immutable" in wasm["Cache-Control"] and "max-age=31536000" in wasm["Cache-Control"]
        assert head(f"pyodide/{version}/pyodide.mjs")["Content-Type"].startswith("text/javascript")
        assert head("worker.js")["Content-Type"].startswith("text/javascript")
        assert head("sw.js")["Cache-Control"] == "no-cache"
        assert head("vendor/katex/fonts/KaTeX_Main-Regular.woff2")["Content-Type"] == "font/woff2"
    finally:
        served.stop()


def _config(site: Path) -> dict:
    html = (site / "index.html").read_text()
    match = re.search(r'<script type="application/json" id="site-config">(.*?)</script>', html, re.S)
    assert match, "index.html has no embedded site configuration"
    return json.loads(match.group(1))


@pytest.mark.parametrize(("source", "expected"), [
    (r"inline \( a_i + b \) math", '<span class="math inline">a_i + b</span>'),
    ("inline $x^2$ math", '<span class="math inline">x^2</span>'),
    ("$$\nT = (m + p - 1) t\n$$", '<div class="math block">\nT = (m + p - 1) t\n</div>'),
    ("\\[\n\\frac{p-1}{m}\n\\]", '<div class="math block">\n\\frac{p-1}{m}\n</div>'),
    (r"\[ x < y \]", '<div class="math block">\nx &lt; y\n</div>'),
    ("a $$b$$ c", '<span class="math display">b</span>'),
    ("costs $5 and $6", "costs $5 and $6"),
    ("<script>alert(1)</script>", "&lt;script&gt;"),
    ("```python\nx = 1 < 2\n```", '<code class="language-python">x = 1 &lt; 2'),
    ("| a | b |\n|---|---|\n| 1 | 2 |", "<table>"),
    (r"escaped \\( not math", r"escaped \( not math"),
])
def test_statement_markdown(source: str, expected: str) -> None:
    assert expected in render_markdown(source)


def test_the_leak_scan_finds_a_planted_reference(cdn_site: Path, tmp_path: Path) -> None:
    import shutil

    planted = tmp_path / "planted"
    shutil.copytree(cdn_site, planted)
    problems, _ = discover_problems(PROBLEMS)
    reference = problems[0].reference_path.read_text(encoding="utf-8")
    manifest = next((planted / "assets").glob("problems-*.json"))
    data = json.loads(manifest.read_text())
    data["problems"][0]["files"].append({"path": "notes.py", "text": reference})
    manifest.write_text(json.dumps(data))
    with pytest.raises(AssertionError, match="appears in"):
        _assert_nothing_secret(planted, PROBLEMS)
