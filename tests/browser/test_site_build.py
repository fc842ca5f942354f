"""The site build (no browser): what it ships, what it must never ship, and how it is served."""

from __future__ import annotations

import gzip
import io
import json
import re
import urllib.request
import zipfile
from pathlib import Path

import pytest

from judge.commands.site.build import MARKER, BuildError, build_site
from judge.commands.site.compress import ENCODINGS
from judge.commands.site.markdown import render_markdown
from judge.commands.statements import is_translation, translations
from judge.core.problem import discover_problems
from judge.engines import pyodide_dist
from tests.browser.conftest import Served
from tests.conftest import FIXTURE_PROBLEMS, PROBLEMS


def is_twin(path: Path) -> bool:
    """Whether ``path`` is a twin the build's compression writes (``F.br`` or ``F.gz`` beside ``F``)."""
    name = path.name
    for suffix in (suffix for _, suffix in ENCODINGS):
        if name.endswith(suffix) and (path.parent / name[: -len(suffix)]).is_file():
            return not (suffix == ".gz" and name.endswith(".img.gz"))
    return False


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
            continue  # the Pyodide files are pinned by sha256 in judge/engines/pyodide_dist.py
        if is_twin(path):
            continue  # a precompressed twin decodes to the file beside it (test_twins_decode_to_their_files)
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
        assert all(p.split("/")[0] in ("problem.toml", "README.md", "starter", "tests", "support")
                   or is_translation(p) for p in paths)
        assert not [p for p in paths if p.startswith(("tests/secret", "reference", "wrong"))]
        assert entry["starter"] == problem.starter
        assert entry["statement_html"].strip()
        assert sorted(entry["statements_html"]) == sorted(translations(problem.path))


def test_judge_package_ships_without_native_only_parts(cdn_site: Path) -> None:
    names = zipfile.ZipFile(next((cdn_site / "assets").glob("judge-*.zip"))).namelist()
    assert "judge/core/runner.py" in names and "judge/__init__.py" in names
    assert not [n for n in names if n.startswith(("judge/commands/site/", "judge/engines/pyodide_harness/", "judge/_problems/"))]
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]


def test_cdn_mode_points_at_the_official_distribution(cdn_site: Path) -> None:
    config = _config(cdn_site)
    assert config["pyodide"]["indexURL"] == pyodide_dist.CDN_URL
    assert pyodide_dist.PYODIDE_VERSION in pyodide_dist.CDN_URL
    assert not (cdn_site / "pyodide").exists()


def test_self_mode_ships_the_pinned_distribution(site_dir: Path) -> None:
    config = _config(site_dir)
    folder = site_dir / config["pyodide"]["indexURL"]
    assert sorted(p.name for p in folder.iterdir() if not is_twin(p)) == sorted(pyodide_dist.DIST_FILES)
    sw = (site_dir / "sw.js").read_text()
    assert f'"{config["pyodide"]["indexURL"]}pyodide.asm.wasm"' in sw  # precached for offline use


def test_twins_decode_to_their_files(site_dir: Path) -> None:
    """Every precompressed twin is the file beside it (what the leak scan read), in another encoding."""
    import brotli

    from judge.commands.site.compress import decoded_content

    twins = [p for p in site_dir.rglob("*") if p.is_file() and is_twin(p)]
    assert any(p.name == "pyodide.asm.wasm.br" for p in twins) and any(p.name.endswith(".js.gz") for p in twins)
    for twin in twins:
        original = twin.with_name(twin.name[:-len(twin.suffix)])
        data = twin.read_bytes()
        decoded = brotli.decompress(data) if twin.suffix == ".br" else gzip.decompress(data)
        assert decoded == decoded_content(original), twin
    sw = (site_dir / "sw.js").read_text()
    assert ".br\"" not in sw and ".wasm.gz" not in sw  # twins are never precached (the host picks one)


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
    # a Chinese sentence wrapped across lines: no space where the line broke, between two characters
    ("流水线的\n气泡", "<p>流水线的气泡</p>"),
    ("**预热**\n之后", "<strong>预热</strong>之后"),
    ("rank\n之间", "rank\n之间"),  # beside a Latin word the break stays a space
    ("two\nlines", "two\nlines"),
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


# --- problem assets --------------------------------------------------------------------------

def _problems_with_assets(root: Path) -> Path:
    """fx-add with an image in assets/ that its statement shows, under ``root/problems``."""
    import shutil

    folder = root / "problems" / "fx-add"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "assets" / "img").mkdir(parents=True)
    (folder / "assets" / "img" / "stages.svg").write_text(SVG, encoding="utf-8")
    readme = folder / "README.md"
    readme.write_text(readme.read_text() + "\n![two stages](assets/img/stages.svg)\n"
                      "[the picture](./assets/img/stages.svg#top)\n")
    return folder.parent


SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>\n'


def test_assets_are_served_from_a_hashed_folder_the_statement_points_at(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build_site(site, pyodide="cdn", problems_dir=_problems_with_assets(tmp_path))
    [folder] = (site / "assets").glob("problem-fx-add-*")
    assert (folder / "img" / "stages.svg").read_text() == SVG
    manifest = json.loads(next((site / "assets").glob("problems-*.json")).read_text())
    html = manifest["problems"][0]["statement_html"]
    url = f"assets/{folder.name}/img/stages.svg"
    assert f'<img src="{url}" alt="two stages" />' in html and f'<a href="{url}#top">' in html
    assert f'"{url}"' in (site / "sw.js").read_text()  # precached: the statement works offline
    _assert_nothing_secret(site, tmp_path / "problems")


@pytest.mark.parametrize("leak", ["copy of the secret test", "symbolic link to the reference"])
def test_an_asset_that_would_publish_a_private_file_stops_the_build(tmp_path: Path, leak: str) -> None:
    problems = _problems_with_assets(tmp_path)
    folder = problems / "fx-add"
    if leak.startswith("copy"):
        (folder / "assets" / "data.txt").write_bytes((folder / "tests" / "secret" / "test_big.py").read_bytes())
        words = "holds the content of tests/secret/test_big.py"
    else:
        (folder / "assets" / "adder.py").symlink_to(folder / "reference" / "adder.py")
        words = "is a symbolic link"
    with pytest.raises(BuildError, match=words):
        build_site(tmp_path / "site", pyodide="cdn", problems_dir=problems)
    assert not (tmp_path / "site").exists()


# --- publishing: _headers, the GitHub Pages workflow ------------------------------------------

def _header_rules(text: str) -> list[tuple[str, dict[str, str]]]:
    """The rules of a Netlify / Cloudflare Pages ``_headers`` file: (URL pattern, headers)."""
    rules: list[tuple[str, dict[str, str]]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line[0].isspace():
            rules.append((line.strip(), {}))
        else:
            name, value = line.strip().split(":", 1)
            rules[-1][1][name.strip()] = value.strip()
    return rules


def _headers_for(rules: list[tuple[str, dict[str, str]]], path: str) -> dict[str, str]:
    """What the hosts send for ``path``; a header set by two matching rules would be merged, so it is an error."""
    headers: dict[str, str] = {}
    for pattern, values in rules:
        if path == pattern or (pattern.endswith("*") and path.startswith(pattern[:-1])):
            twice = set(values) & set(headers)
            assert not twice, f"{path}: {twice} set by two rules (the hosts would merge the values)"
            headers.update(values)
    return headers


def _assert_headers_match_the_server(site: Path) -> None:
    rules = _header_rules((site / "_headers").read_text())
    served = Served(site)
    try:
        paths = ["/"] + ["/" + p.relative_to(site).as_posix() for p in sorted(site.rglob("*"))
                         if p.is_file() and not p.name.startswith((".", "_")) and not is_twin(p)]
        for path in paths:
            with urllib.request.urlopen(served.url + path.lstrip("/")) as response:
                response.read()
                sent = response.headers
            wanted = _headers_for(rules, path)
            for name in ("Cross-Origin-Opener-Policy", "Cross-Origin-Embedder-Policy", "Cross-Origin-Resource-Policy",
                         "X-Content-Type-Options", "Cache-Control"):
                assert wanted.get(name) == sent[name], f"{path}: _headers gives {name}: {wanted.get(name)}, " \
                                                       f"judge serve sends {sent[name]}"
    finally:
        served.stop()


def test_headers_file_asks_hosts_for_what_judge_serve_sends(cdn_site: Path) -> None:
    text = (cdn_site / "_headers").read_text()
    assert "/*\n  Cross-Origin-Opener-Policy: same-origin\n  Cross-Origin-Embedder-Policy: require-corp\n" in text
    assert "/assets/*\n  Cache-Control: public, max-age=31536000, immutable\n" in text
    assert "/sw.js\n  Cache-Control: no-cache\n" in text
    assert "_headers" not in (cdn_site / "sw.js").read_text()  # the hosts do not serve it: never precached
    _assert_headers_match_the_server(cdn_site)


def test_headers_file_of_a_self_hosted_site_caches_pyodide(site_dir: Path) -> None:
    assert "/pyodide/*\n  Cache-Control: public, max-age=31536000, immutable\n" in (site_dir / "_headers").read_text()
    _assert_headers_match_the_server(site_dir)


def test_github_pages_workflow(tmp_path: Path) -> None:
    import shlex
    import shutil

    import yaml

    from judge import __version__
    from judge.commands.cli import parsers
    from judge.commands.export.wheels import check_judge_wheel
    from tests.conftest import run_cli

    repo = tmp_path / "course"
    shutil.copytree(FIXTURE_PROBLEMS, repo / "problems", ignore=shutil.ignore_patterns("__pycache__"))
    done = run_cli("build", "site", "--pyodide", "cdn", "--github-pages-workflow", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Wrote .github/workflows/pages.yml" in done.stdout and "Source to GitHub Actions" in done.stdout
    path = repo / ".github" / "workflows" / "pages.yml"
    workflow = yaml.safe_load(path.read_text())
    assert workflow[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as true
    assert "workflow_dispatch" in workflow[True]
    assert workflow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    build, deploy = workflow["jobs"]["build"], workflow["jobs"]["deploy"]
    steps = {step["name"]: step for step in build["steps"]}
    [install] = [s for n, s in steps.items() if n.startswith("Install the judge")]
    assert install["run"] == f"python -m pip install .judge/wheels/pp_judge-{__version__}-py3-none-any.whl"
    wheel = repo / ".judge" / "wheels" / f"pp_judge-{__version__}-py3-none-any.whl"
    check_judge_wheel(wheel)  # what the workflow installs exists, in the repository, without any solution
    assert steps["Cache the Pyodide distribution"]["with"]["path"] == "~/.cache/pp-judge"
    check = shlex.split(steps["Check the problems"]["run"])
    assert check == ["judge", "check"]
    command = shlex.split(steps["Build the site"]["run"])
    assert command[:2] == ["judge", "build"]
    args = parsers()["build"].parse_args(command[2:])  # the judge's own parser accepts the step's command
    assert (args.site_dir, args.pyodide, args.problems) == (Path("site"), "cdn", None)
    assert steps["Upload the site"]["uses"].startswith("actions/upload-pages-artifact@")
    assert steps["Upload the site"]["with"]["path"] == "site"
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert [s["uses"].split("@")[0] for s in deploy["steps"]] == ["actions/deploy-pages"]
    again = run_cli("build", "site", "--pyodide", "cdn", "--github-pages-workflow", cwd=repo)
    assert again.returncode == 0, again.stderr  # the same workflow: rewriting it changes nothing
    path.write_text(path.read_text() + "# my own step\n")
    changed = run_cli("build", "site", "--pyodide", "cdn", "--github-pages-workflow", cwd=repo)
    assert changed.returncode == 2 and "exists and differs" in changed.stderr
    assert path.read_text().endswith("# my own step\n")


def test_the_workflow_names_a_problems_folder_other_than_the_default(tmp_path: Path) -> None:
    import shutil

    import yaml

    from tests.conftest import run_cli

    repo = tmp_path / "course"
    shutil.copytree(FIXTURE_PROBLEMS, repo / "exercises", ignore=shutil.ignore_patterns("__pycache__"))
    done = run_cli("build", "out/site", "--pyodide", "cdn", "--problems", "exercises", "--github-pages-workflow",
                   cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    workflow = yaml.safe_load((repo / ".github" / "workflows" / "pages.yml").read_text())
    steps = {s["name"]: s for s in workflow["jobs"]["build"]["steps"]}
    assert steps["Check the problems"]["run"] == "judge check exercises"
    assert steps["Build the site"]["run"] == "judge build out/site --pyodide cdn --problems exercises"
    assert steps["Upload the site"]["with"]["path"] == "out/site"
    outside = run_cli("build", str(tmp_path / "elsewhere"), "--pyodide", "cdn", "--problems", "exercises",
                      "--github-pages-workflow", cwd=repo)
    assert outside.returncode == 2 and "must be inside the current folder" in outside.stderr


def test_the_course_sets_the_sites_title_and_intro(tmp_path: Path) -> None:
    import shutil

    from tests.conftest import run_cli

    repo = tmp_path / "course"
    shutil.copytree(FIXTURE_PROBLEMS, repo / "problems", ignore=shutil.ignore_patterns("__pycache__"))
    (repo / "problems" / "course.toml").write_text('title = "Distributed training <week 3>"\n'
                                                    'intro = "Solve these before *Friday*."\n')
    done = run_cli("build", "site", "--pyodide", "cdn", cwd=repo)
    assert done.returncode == 0, done.stderr
    page = (repo / "site" / "index.html").read_text()
    assert "<title>Distributed training &lt;week 3&gt;</title>" in page
    assert '<a class="brand" href="#/">Distributed training &lt;week 3&gt;</a>' in page
    assert "<h1>Distributed training &lt;week 3&gt;</h1>" in page
    # (the judge's own intro is still a message of the catalogs embedded in the configuration, not a paragraph)
    assert "<p>Solve these before <em>Friday</em>.</p>" in page and '<p data-i18n="html">Each exercise' not in page
    flags = run_cli("build", "site", "--pyodide", "cdn", "--title", "Week 4", "--intro", "New **intro**.", cwd=repo)
    assert flags.returncode == 0, flags.stderr
    page = (repo / "site" / "index.html").read_text()
    assert "<title>Week 4</title>" in page and "<strong>intro</strong>" in page
    workflow = run_cli("build", "site", "--pyodide", "cdn", "--title", "Week 4", "--github-pages-workflow", cwd=repo)
    assert workflow.returncode == 2 and "course.toml" in workflow.stderr


def test_the_tab_title_is_the_courses_on_every_page(tmp_path: Path, browser) -> None:
    import shutil

    from tests.browser.conftest import Served
    from tests.conftest import run_cli

    repo = tmp_path / "course"
    shutil.copytree(FIXTURE_PROBLEMS, repo / "problems", ignore=shutil.ignore_patterns("__pycache__"))
    done = run_cli("build", "site", "--pyodide", "cdn", "--title", "Week 4", cwd=repo)
    assert done.returncode == 0, done.stderr
    served = Served(repo / "site")
    page = browser.new_page()
    try:
        page.goto(served.url + "#/")
        page.wait_for_function("document.title === 'Week 4'")
        page.goto(served.url + "#/fx-add")
        page.wait_for_function("document.title.endsWith(' · Week 4')")
        assert "Pipeline-parallel" not in page.title()
    finally:
        page.close()
        served.stop()


def test_the_preloads_list_the_pages_static_imports_and_the_fonts_only_with_math(tmp_path: Path) -> None:
    from judge.commands.site.build import MATH_FONTS, preload_links

    files = {
        "js/app.js": 'import { a } from "./a.js";\nimport {\n  b,\n} from "../vendor/b.js";\n'
                     'const later = () => import("./lazy.js");\n// import "./commented.js"\n',
        "js/a.js": 'export { c } from "./c.mjs";\nimport "./a.js";\n',
        "js/c.mjs": 'import x from "https://example.invalid/x.js";\n',
        "vendor/b.js": "export const b = 1;\n",
        "js/lazy.js": "", "js/commented.js": "",
        **dict.fromkeys(MATH_FONTS, ""),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    with_math = preload_links(tmp_path, "assets/problems-1.json", math=True).splitlines()
    assert with_math == [
        '<link rel="modulepreload" href="js/app.js">', '<link rel="modulepreload" href="js/a.js">',
        '<link rel="modulepreload" href="vendor/b.js">', '<link rel="modulepreload" href="js/c.mjs">',
        '<link rel="preload" href="assets/problems-1.json" as="fetch" crossorigin>',
        *[f'<link rel="preload" href="{font}" as="font" type="font/woff2" crossorigin>' for font in MATH_FONTS]]
    assert preload_links(tmp_path, "assets/problems-1.json", math=False).splitlines() == with_math[:5]
