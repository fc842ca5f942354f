"""One Pyodide boot for every host, and one definition of the Results no run produced.

``web/js/boot.mjs`` (with ``judge/engines/pyodide_boot.py``) sets Pyodide up; the browser's Web
Worker and the Node.js harness only import it. The harness boots from a site folder, so the parity
tests run the files a build ships; here it also boots from a full ``judge build`` site. The
browser fills Python's templates of the unfinished Results (``web/js/unfinished.mjs``): that must
give exactly what :func:`judge.engines.unfinished.unfinished_result` gives.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from judge.engines import Job
from judge.engines import pyodide as parity
from judge.engines.unfinished import REASONS, templates, unfinished_result
from tests.conftest import FIXTURE_PROBLEMS, ROOT, folder_job

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None and os.environ.get("CI") != "true",
                                reason="node (Node.js 20) is not installed (in CI a missing node is a failure)")
BOOT = ROOT / "web" / "js" / "boot.mjs"
HOSTS = [ROOT / "web" / "worker.js", ROOT / "judge" / "engines" / "pyodide_harness" / "worker.mjs"]
# what setting Pyodide up for judging consists of: only the boot may do it
SET_UP = ["setInterruptBuffer", "unpackArchive", "setStdin", "gc.freeze", "invalidate_caches", "warm",
          "loadedPackages", "SIGINT"]
CASES = [("pp-x", 0), ("pp-x", 4), ("bt-limits", 2.3), ("a-b", 0.1), ("a-b", 600), ("c", 12.5)]


_SLOT = re.compile(r"\{(problem|seconds|detail)\}")


def fill(template: dict[str, Any], problem: str, seconds: float = 0.0, detail: str = "") -> dict[str, Any]:
    """A template filled in, the way ``web/js/unfinished.mjs`` does it (its Python twin, for this test)."""
    values = {"problem": problem, "seconds": f"{seconds:g}", "detail": detail}

    def walk(value: Any) -> Any:
        if value == "{seconds}":
            return seconds
        if isinstance(value, str):
            return _SLOT.sub(lambda m: values[m.group(1)], value)
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        return value

    return walk(template)


def test_the_boot_exists_once_and_both_hosts_import_it() -> None:
    for host in HOSTS:
        text = _code(host)
        assert "bootJudge" in text and "boot.mjs" in text, f"{host.name} must boot through js/boot.mjs"
        done_here = [word for word in SET_UP if word in text]
        assert not done_here, f"{host.relative_to(ROOT)} sets Pyodide up itself ({done_here}): that is boot.mjs's job"
    others = [p for p in (ROOT / "web" / "js").glob("*js") if p != BOOT]
    assert not [p.name for p in others if "loadPyodide" in _code(p)]


def test_the_harness_python_is_the_shipped_judge() -> None:
    # the harness unpacks the site's judge zip: no second copy of Python beside the .mjs files
    assert sorted(p.name for p in (ROOT / "judge" / "engines" / "pyodide_harness").iterdir()
                  if p.suffix == ".py") == ["__init__.py"]


def test_unfinished_templates_give_python_results() -> None:
    for reason in REASONS:
        for problem, seconds in CASES:
            want = unfinished_result(problem, reason, seconds, "boom {seconds} {problem}").to_dict()
            assert fill(templates()[reason], problem, seconds, "boom {seconds} {problem}") == want


@needs_node
def test_javascript_fills_the_templates_like_python(tmp_path: Path) -> None:
    script = tmp_path / "fill.mjs"
    script.write_text(
        f"import {{ unfinishedResult }} from {json.dumps((ROOT / 'web' / 'js' / 'unfinished.mjs').as_uri())};\n"
        "import fs from 'node:fs';\n"
        "const { templates, cases } = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));\n"
        "const out = cases.map(([reason, problem, seconds, detail]) =>\n"
        "  unfinishedResult(templates, reason, { problem, seconds, detail }));\n"
        "process.stdout.write(JSON.stringify(out));\n", encoding="utf-8")
    cases = [(reason, problem, seconds, "it {detail} broke")
             for reason in REASONS for problem, seconds in CASES]
    data = tmp_path / "cases.json"
    data.write_text(json.dumps({"templates": templates(), "cases": cases}), encoding="utf-8")
    run = subprocess.run([NODE or "node", str(script), str(data)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    for got, (reason, problem, seconds, detail) in zip(json.loads(run.stdout), cases):
        assert got == unfinished_result(problem, reason, seconds, detail).to_dict(), (reason, seconds)


NUMPY_ADDER = "import numpy as np\n\n\ndef add(a, b):\n    return int(np.add(a, b))\n"


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    from judge.commands.site.build import build_site

    site = tmp_path_factory.mktemp("boot") / "site"
    build_site(site, pyodide="self", problems_dir=FIXTURE_PROBLEMS)
    return site


def _jobs() -> list[Job]:
    problem = FIXTURE_PROBLEMS / "fx-add"
    source = (problem / "reference" / "adder.py").read_text(encoding="utf-8")
    return [folder_job(problem, source, include_secret=True, label="reference"),
            folder_job(problem, NUMPY_ADDER, include_secret=True, label="numpy")]


def _verdicts(run: parity.HarnessRun) -> list[dict]:
    return [parity.normalise(r, p.problem.path) for r, p in zip(run.results, _jobs(), strict=True)]


@needs_node
def test_the_harness_boots_from_a_built_site(built_site: Path) -> None:
    config = _site_config(built_site)
    assert config["judge_pyc"] and "compiled-" in config["pyodide"]["lockFileURL"]  # what the browser loads
    snapshot = config["pyodide"]["snapshot"]
    image = built_site / snapshot["url"]
    packed = image.read_bytes()
    assert packed[:2] == b"\x1f\x8b" and hashlib.sha256(packed).hexdigest() == snapshot["sha256"]
    run = parity.run_harness(_jobs(), site=built_site)
    assert [r["status"] for r in run.results] == ["passed", "passed"], run.results
    timings = run.boots[0]["timings"]
    assert timings["mode"] == "snapshot" and timings["snapshotError"] is None, timings
    assert set(timings) >= {"restore", "afterRestore", "total"}
    # the browser's fallback, the plain boot, gives the same verdicts
    plain = parity.run_harness(_jobs(), site=built_site, plain=True)
    assert plain.boots[0]["timings"]["mode"] == "plain"
    assert set(plain.boots[0]["timings"]) >= {"loadPyodide", "imports", "warmup", "total"}
    assert _verdicts(plain) == _verdicts(run)


@needs_node
def test_a_corrupt_snapshot_is_not_restored_and_the_engine_boots_the_plain_way(built_site: Path,
                                                                               tmp_path: Path) -> None:
    site = tmp_path / "site"
    shutil.copytree(built_site, site)
    image = site / _site_config(site)["pyodide"]["snapshot"]["url"]
    data = bytearray(image.read_bytes())
    data[len(data) // 2] ^= 0xFF
    image.write_bytes(bytes(data))
    run = parity.run_harness(_jobs(), site=site)
    timings = run.boots[0]["timings"]
    assert timings["mode"] == "plain" and "sha256" in timings["snapshotError"], timings
    assert [r["status"] for r in run.results] == ["passed", "passed"], run.results


# A snapshot whose check fails while the boot waits at its gate (the browser's spare engine, paused by a
# run): the failure is the plain boot's reason, never an unhandled rejection (the page reports those as
# errors). The loader fails on purpose once the snapshot is given up: only the order of events matters.
GATED_BOOT = """
import { bootJudge } from BOOT;
const unhandled = [];
process.on("unhandledRejection", (err) => unhandled.push(String(err && err.message || err)));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const loaded = [];
const loadPyodide = async (options) => {
  loaded.push(options._loadSnapshot ? "snapshot" : "plain");
  if (options._loadSnapshot) await options._loadSnapshot;
  throw new Error("no Pyodide in this test");
};
const packed = new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
let outcome;
try {
  await bootJudge({ loadPyodide, indexURL: "/", packages: [], judgeZip: new Uint8Array(),
                    snapshot: { bytes: packed, sha256: "0".repeat(64) }, gate: () => sleep(300) });
} catch (err) {
  outcome = String(err.message);
}
await sleep(100);
process.stdout.write(JSON.stringify({ unhandled, loaded, outcome }));
"""


@needs_node
def test_a_snapshot_that_fails_its_check_while_the_boot_waits_is_no_unhandled_rejection(tmp_path: Path) -> None:
    script = tmp_path / "gated.mjs"
    script.write_text(GATED_BOOT.replace("BOOT", json.dumps(BOOT.as_uri())), encoding="utf-8")
    run = subprocess.run([NODE or "node", str(script)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["unhandled"] == [], seen
    assert seen["loaded"] == ["snapshot", "plain"] and seen["outcome"] == "no Pyodide in this test", seen


def _site_config(site: Path) -> dict:
    text = (site / "index.html").read_text(encoding="utf-8")
    return json.loads(re.search(r'id="site-config">(.*?)</script>', text, re.S).group(1))


def _code(path: Path) -> str:
    """The file without its comments (they may name what the code does not do)."""
    text = re.sub(r"/\*.*?\*/", "", path.read_text(encoding="utf-8"), flags=re.S)
    return "\n".join(line.split("//", 1)[0] if not line.lstrip().startswith("//") else ""
                     for line in text.splitlines())
