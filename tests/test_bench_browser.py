"""``python -m bench.run`` (native + browser benchmarks) runs on a tiny case: one problem, one repeat.

No figure is asserted (no timing in tests): only that the command runs end to end, prints its
table and writes JSON with every measure. It drives Chromium like tests/browser: skipped locally
without Playwright or Chromium, a failure under CI (where .ci/setup installs both).

Below it, the start-up work that the benchmark measures: the bytecode-compiled Pyodide files.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURE_PROBLEMS, ROOT

CHROMIUM = Path("/usr/lib/chromium/chromium")


def _need_browser() -> None:
    try:
        import playwright.sync_api  # noqa: F401
        missing = None if CHROMIUM.exists() else f"{CHROMIUM} is missing (apt-get install chromium)"
    except ImportError:
        missing = "Python Playwright is not installed (pip install -e '.[test]')"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the browser benchmark cannot run: {missing}")
        pytest.skip(f"browser benchmark skipped: {missing}")


def test_bench_run_measures_native_and_browser_on_a_tiny_case(tmp_path: Path) -> None:
    _need_browser()
    out = tmp_path / "latest.json"
    result = subprocess.run(
        [sys.executable, "-m", "bench.run", "--problems", str(FIXTURE_PROBLEMS), "--native-repeats", "1",
         "--browser-repeats", "1", "--reruns", "1", "--grade-submissions", "2", "--json", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    for line in ("Machine:", "median ratio", "floor: imported numpy+pytest, cold", "app: engine ready, cold",
                 "app: engine ready, repeat", "before (no snapshot): ready cold", "fx-add", "app, repeat visit",
                 "first-visit bytes / before", "first visit at 10 Mbit/s", "bytes until Run is usable",
                 "Codec:", "A call across the boundary", "Class grading:", "Targets:"):
        assert line in result.stdout, f"{line!r} missing from:\n{result.stdout}"

    data = json.loads(out.read_text())
    assert data["machine"]["nproc"] >= 1
    assert data["native"]["problems"] == 1 and data["native"]["median_ratio_serial"] > 0
    assert [row["problem"] for row in data["boundary"]["problems"]] == ["fx-add"]
    assert data["grade"]["submissions"] == 2 and data["grade"]["ratio"] > 0
    b = data["browser"]
    assert b["problems"] == ["fx-add"] and b["repeats"] == 1 and len(b["runs"]) == 1
    assert b["modes"] == ["snapshot"]  # the engine restored the site's memory snapshot, cold and on the repeat visit
    m = b["median"]
    for key in ("floor_cold_ms", "floor_repeat_ms", "app_cold_ready_ms", "app_repeat_ready_ms",
                "before_cold_ready_ms", "before_repeat_ready_ms"):
        assert m[key] > 0, key
    assert m["verdict_at_ready_repeat_ms"]["fx-add"] > 0
    assert m["first_verdict_ms"]["fx-add"] > 0 and m["rerun_median_ms"]["fx-add"] > 0
    assert m["learner_rerun_ms"]["fx-add"] > 0  # a re-run in a settled spare that never ran these tests
    # the yardstick of warm re-runs: bare pytest.main on the same tests in the same engine
    assert m["bare_pytest_rerun_ms"]["fx-add"] > 0 and m["bare_pytest_inside_ms"]["fx-add"] > 0
    assert m["rerun_vs_bare_pytest"]["fx-add"] > 0 and m["rerun_engine_ms"]["fx-add"] > 0
    for visit in ("floor_cold", "floor_repeat", "app_cold", "app_repeat", "before_cold", "before_repeat"):
        assert set(m["bytes"][visit]) >= {"bytes", "gzip_bytes", "pyodide_bytes", "requests"}
    # a first visit downloads Pyodide (the server saw it); both pages loaded it from the same site
    assert m["bytes"]["floor_cold"]["pyodide_bytes"] > 1_000_000
    assert m["bytes"]["app_cold"]["pyodide_bytes"] > 1_000_000
    assert b["ratios"]["first_visit_bytes_vs_before"] > 0
    assert set(b["meets"]) >= {"ready_cold_vs_floor", "ready_repeat_vs_floor_repeat", "first_verdict_ms",
                               "repeat_pyodide_bytes", "first_visit_bytes_vs_before"}
    assert b["runs"][0]["app"]["page_errors"] == []
    # the first visit at 10 Mbit/s, the app and the floor under the same throttle
    t = b["throttled"]
    assert t["app_ready_ms"] > 0 and t["floor_ms"] > 0 and t["app_page_ms"] > 0
    assert t["app_bytes"] > 1_000_000 and t["floor_bytes"] > 1_000_000
    assert b["ratios"]["throttled_ready_vs_floor"] > 0 and b["ratios"]["throttled_bytes_vs_issue"] > 0
    assert {"throttled_ready_vs_floor", "throttled_bytes_vs_issue"} <= set(b["meets"])


# --- the start-up work the benchmark measures: bytecode-compiled Pyodide files -----------------
# (no timing here either: that the files are made, honest about their hashes, used by the site,
# and that a machine without Node.js still gets a working site)

import hashlib  # noqa: E402
import zipfile  # noqa: E402

from judge.engines import pyodide_dist as dist  # noqa: E402

IN_CI = os.environ.get("CI") == "true"


@pytest.fixture(scope="module")
def distribution() -> Path:
    try:
        return dist.ensure_distribution()
    except dist.DistributionError as exc:
        if "is not installed" in str(exc) and not IN_CI:
            pytest.skip(f"cannot assemble the Pyodide distribution here: {exc}")
        raise


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_compiled_twins_carry_pycs_beside_the_sources_and_honest_hashes(distribution: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if not shutil.which("node") and not IN_CI:
        pytest.skip("Node.js is not installed")
    from judge.engines.pyodide_files import judge_zip_bytes

    judge_zip = judge_zip_bytes()
    compiled, packages = dist.ensure_compiled(None, {"judge": judge_zip})
    assert set(compiled.files) == set(dist.COMPILED_INPUTS)
    for name, (size, digest) in compiled.files.items():
        path = compiled.folder / name
        assert path.stat().st_size == size and _sha256(path) == digest, name
        assert digest != dist.DIST_FILES[name][1] or name.startswith("packaging-"), f"{name} was not compiled"
    with zipfile.ZipFile(compiled.folder / "python_stdlib.zip") as zf:
        names = set(zf.namelist())
        assert {"json/__init__.py", "json/__init__.pyc", "dataclasses.py", "dataclasses.pyc"} <= names
        assert zf.read("json/__init__.pyc")[4:8] == (1).to_bytes(4, "little")  # unchecked hash-based pyc
    with zipfile.ZipFile(compiled.folder / dist.NUMPY_WHEEL[0]) as zf:
        names = zf.namelist()
        assert "numpy/__init__.py" in names and "numpy/__pycache__/__init__.cpython-312.pyc" in names
        record = zf.read(next(n for n in names if n.endswith(".dist-info/RECORD"))).decode()
        assert "numpy/__pycache__/__init__.cpython-312.pyc,sha256=" in record
    # the lock the site ships: the compiled wheels, each with its own sha256 (Chromium checks it)
    lock = json.loads(compiled.lock("../compiled-x/"))
    assert set(lock["packages"]) == {"numpy", "pytest", "pluggy", "iniconfig", "packaging"}
    for entry in lock["packages"].values():
        name = entry["file_name"].removeprefix("../compiled-x/")
        assert entry["file_name"].startswith("../compiled-x/") and entry["sha256"] == compiled.files[name][1]
    with zipfile.ZipFile(io.BytesIO(packages["judge"])) as zf:
        names = zf.namelist()
    assert "judge/core/__pycache__/runner.cpython-312.pyc" in names and all(n.endswith(".pyc") for n in names)
    # a second call finds everything on disk: no Node.js run
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("ensure_compiled ran a subprocess although its cache is complete")

    monkeypatch.setattr(subprocess, "run", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    again, again_packages = dist.ensure_compiled(None, {"judge": judge_zip})
    assert again.files == compiled.files and again_packages == packages


def test_self_site_loads_the_compiled_files(distribution: Path, tmp_path: Path) -> None:
    if not shutil.which("node") and not IN_CI:
        pytest.skip("Node.js is not installed")
    from judge.commands.site.build import build_site

    site = tmp_path / "site"
    build_site(site, pyodide="self", problems_dir=FIXTURE_PROBLEMS)
    text = (site / "index.html").read_text()
    config = json.loads(text.split('id="site-config">', 1)[1].split("</script>", 1)[0])
    pyodide = config["pyodide"]
    assert pyodide["lockFileURL"].startswith("pyodide/compiled-") and pyodide["stdLibURL"].startswith("pyodide/compiled-")
    assert (site / config["judge_pyc"]).is_file()
    assert '<script type="module" async src="js/engine.js"></script>' in text
    lock = json.loads((site / pyodide["lockFileURL"]).read_text())
    index = site / pyodide["indexURL"]
    for entry in lock["packages"].values():
        wheel = (index / entry["file_name"]).resolve()
        assert wheel.is_file() and _sha256(wheel) == entry["sha256"], entry["file_name"]
    # the plain distribution stays as pinned; the service worker precaches only what the page loads
    for name, (_, digest) in dist.DIST_FILES.items():
        assert _sha256(index / name) == digest, name
    sw = (site / "sw.js").read_text()
    settings = json.loads(sw.split("const SETTINGS = ", 1)[1].split(";\n", 1)[0])
    assert f"{pyodide['indexURL']}pyodide.asm.wasm" in settings["precache"]
    assert f"{pyodide['indexURL']}{dist.NUMPY_WHEEL[0]}" not in settings["precache"]
    assert pyodide["lockFileURL"] in settings["precache"] and settings["httpCached"] == ["pyodide/"]


def test_self_site_ships_a_memory_snapshot_made_once_per_inputs(
        distribution: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if not shutil.which("node") and not IN_CI:
        pytest.skip("Node.js is not installed")
    import gzip

    from judge.commands.site.build import build_site
    from judge.engines import pyodide_snapshot

    site = tmp_path / "site"
    build_site(site, pyodide="self", problems_dir=FIXTURE_PROBLEMS)
    config = json.loads((site / "index.html").read_text().split('id="site-config">', 1)[1].split("</script>", 1)[0])
    snapshot = config["pyodide"]["snapshot"]
    image = site / snapshot["url"]
    assert snapshot["url"].startswith("pyodide/judge-snapshot-") and snapshot["url"].endswith(".img.gz")
    packed = image.read_bytes()
    assert len(packed) == snapshot["size"] and _sha256(image) == snapshot["sha256"]
    raw = gzip.decompress(packed)
    assert len(raw) == snapshot["imageSize"] and hashlib.sha256(raw).hexdigest() == snapshot["imageSha256"]
    assert snapshot["dataOffset"] is None or 0 < snapshot["dataOffset"] < len(raw)
    # the service worker precaches it with the other immutable files (a repeat visit fetches nothing)
    sw = (site / "sw.js").read_text()
    settings = json.loads(sw.split("const SETTINGS = ", 1)[1].split(";\n", 1)[0])
    assert snapshot["url"] in settings["precache"] and settings["httpCached"] == ["pyodide/"]
    # no problem content in it: one image serves any problem set
    reference = (FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py").read_text()
    assert reference.encode() not in raw

    # a second build with the same inputs finds it on disk: no Node.js run
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("the snapshot was made again although its cache is complete")

    monkeypatch.setattr(subprocess, "run", forbidden)
    monkeypatch.setattr(pyodide_snapshot.subprocess, "run", forbidden)
    again = tmp_path / "again"
    build_site(again, pyodide="self", problems_dir=FIXTURE_PROBLEMS)
    assert (again / snapshot["url"]).read_bytes() == packed


def test_without_node_the_site_ships_the_plain_files(distribution: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    from judge.commands.site.build import build_site

    cache = tmp_path / "cache" / "pyodide"  # a distribution with no compiled twins cached yet
    shutil.copytree(distribution, cache)
    monkeypatch.setattr(dist.shutil, "which", lambda name: None)
    site = tmp_path / "site"
    build_site(site, pyodide="self", problems_dir=FIXTURE_PROBLEMS, cache_dir=cache)
    assert "without compiled bytecode" in capsys.readouterr().err
    config = json.loads((site / "index.html").read_text().split('id="site-config">', 1)[1].split("</script>", 1)[0])
    assert "lockFileURL" not in config["pyodide"] and config["judge_pyc"] is None
    assert "snapshot" not in config["pyodide"] and not list((site / "pyodide").glob("judge-snapshot-*"))
    assert not list((site / "pyodide").glob("compiled-*"))
