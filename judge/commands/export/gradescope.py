"""``judge export gradescope -o autograder.zip``: a Gradescope autograder (gradescope/autograder_samples docs/specs.md).

    setup.sh                 installs the judge from pp-judge/wheels/ into /autograder/pp-judge-venv
    run_autograder           judges /autograder/submission, writes /autograder/results/results.json
    pp-judge/                problems with their secret tests (no reference/, no wrong/),
                             canonical.json, config.json, wheels/ (the judge, every dependency, pip)

Gradescope extracts the zip to /autograder/source and copies run_autograder to /autograder.
"""

from __future__ import annotations

import tempfile
import zipfile
from pathlib import Path

from ... import __version__
from ...formats.points import add, text
from . import ExportOptions, size_text, template
from .bundle import canonical_results, grading_budget, perfect_line, write_bundle
from .wheels import prepare_wheels

BUNDLE = "pp-judge"  # not "judge-...": the runner forgets modules under /tmp/*judge-* paths
_EXECUTABLE = 0o755 << 16


def export(options: ExportOptions) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="judge-gradescope-") as scratch:
        stage = Path(scratch)
        canonical = canonical_results(options.problems, True, options.timeout, options.parallel,
                                      options.assignment)
        config = {"platform": "gradescope", "feedback": options.feedback, "timeout": options.timeout,
                  "lang": options.lang, "budget": grading_budget(options.grading_timeout)}
        write_bundle(stage / BUNDLE, options.problems, canonical, config, include_secret=True)
        wheels = prepare_wheels(stage / BUNDLE / "wheels", options.problems, options.target, options.wheels)
        values = {"judge_version": __version__, "python_version": options.python_version}
        (stage / "setup.sh").write_text(template("gradescope_setup.sh", **values), encoding="utf-8")
        (stage / "run_autograder").write_text(template("gradescope_run_autograder", **values), encoding="utf-8")
        options.out.parent.mkdir(parents=True, exist_ok=True)
        _zip(stage, options.out)
        wheel_size = size_text(stage / BUNDLE / "wheels")
    points = add(r.max_points for r in canonical.values())
    return [(f"Wrote {options.out} ({size_text(options.out)}; wheels {wheel_size} in {len(wheels)} files): "
             f"{len(options.problems)} problem(s), {text(points)} points, for Python {options.python_version} "
             f"on {options.platform_tag}."),
            perfect_line(options.problems, canonical),
            f"Set the assignment's points to {text(points)} and upload the zip on its Configure Autograder page "
            "(docs/platforms.md)."]


def _zip(stage: Path, out: Path) -> None:
    """Zip ``stage``'s content (not the folder) with the scripts executable and a stable member order."""
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in stage.rglob("*") if p.is_file()):
            name = path.relative_to(stage).as_posix()
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED if name.endswith(".whl") else zipfile.ZIP_DEFLATED
            info.external_attr = _EXECUTABLE if name in ("setup.sh", "run_autograder") else 0o644 << 16
            archive.writestr(info, path.read_bytes())
