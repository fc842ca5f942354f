"""What a learner sees in the practice folder: no answer to another problem, and no path that is not there.

The practice folder (``judge.commands.practice.create_practice``) puts side by side, for every problem, the
starter, the statement, the public tests (in ``tests/``) and the support modules. So:

- a starter must not pass another problem's tests (two problems share the entry ``pp_sim.py``);
- no learner-visible module (starter, public test or helper, support module) of one problem may
  contain a working answer to another problem: here, a function that returns the GPipe / 1F1B
  orders of ``pp-schedule`` or the interleaved orders of ``pp-interleaved`` for sizes the public
  tests do not use;
- every file path a statement mentions (``tests/...``, ``*.py``) exists where the learner looks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from judge.commands.practice import create_practice
from judge.core.problem import discover_problems
from judge.engines import Job
from tests.judged import judge_cached

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "problems"


def _problems():
    problems, errors = discover_problems(PROBLEMS)
    assert not errors, errors
    return problems


@pytest.mark.slow
def test_a_starter_does_not_pass_another_problem_with_the_same_entry():
    problems = _problems()
    pairs = [(a, b) for a in problems for b in problems if a.id != b.id and a.entry == b.entry]
    assert pairs, "expected at least one pair of problems sharing an entry file (pp-schedule, pp-simulate)"
    results = judge_cached([Job(a, b.starter_path, include_secret=True) for a, b in pairs])
    for (a, b), result in zip(pairs, results):
        passed = [t.name for t in result.tests if t.outcome == "passed"]
        assert result.status != "passed", f"{b.id}'s starter passes every test of {a.id}: it holds {a.id}'s answer"
        if a.id == "pp-schedule":  # pp-simulate's starter once shipped a working schedule()
            assert not passed, f"{b.id}'s starter passes some of {a.id}'s tests: {passed[:5]}"


# Run in a child process: it imports every learner-visible module of every problem from a fresh
# practice folder and calls every top-level function with the argument shapes of the answers.
_SCAN = textwrap.dedent(r'''
    import importlib, inspect, json, sys
    from pathlib import Path

    practice, problem_id, answers = Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3])
    folder = practice / problem_id
    sys.path[:0] = [str(folder), str(folder / "tests")]
    sys.dont_write_bytecode = True

    def norm(value):
        """Schedules as lists of lists of 'F0'-style labels (tuples, lists or strings accepted)."""
        if isinstance(value, str):
            return value.split()
        if isinstance(value, (list, tuple)):
            out = []
            for item in value:
                if isinstance(item, (list, tuple)) and item and isinstance(item[0], (list, tuple, str)) and not (
                        len(item) in (2, 3) and all(isinstance(x, (int, str)) for x in item)):
                    out.append(norm(item))
                elif isinstance(item, (list, tuple)) and len(item) == 2:
                    out.append(f"{item[0]}{item[1]}")
                elif isinstance(item, (list, tuple)) and len(item) == 3:   # (chunk, op, mb)
                    out.append(f"{item[1]}{item[2]}c{item[0]}")
                else:
                    out.append(item if isinstance(item, str) else repr(item))
            return out
        return None

    found = []
    names = [p.stem for p in folder.glob("*.py")] + [p.stem for p in (folder / "tests").glob("*.py")]
    for name in sorted(set(names)):
        try:
            module = importlib.import_module(name)
        except BaseException as exc:  # a starter may fail to import on purpose; that is no leak
            continue
        for fname, func in vars(module).items():
            if not inspect.isfunction(func) or func.__module__ != module.__name__ or fname.startswith("test_"):
                continue
            for answer in answers:
                for args, want in answer["cases"]:
                    try:
                        got = norm(func(*args))
                    except BaseException:
                        continue
                    if got is not None and got == want:
                        found.append(f"{name}.{fname}{tuple(args)} returns {answer['problem']}'s answer")
    print(json.dumps(found))
''')


def _answers() -> list[dict]:
    """Argument shapes under which a function would be a working answer, with the right result."""
    import importlib.util

    def load(problem: str, entry: str):
        spec = importlib.util.spec_from_file_location(f"_ref_{problem.replace('-', '_')}",
                                                      PROBLEMS / problem / "reference" / entry)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        return module

    sched = load("pp-schedule", "pp_sim.py")
    inter = load("pp-interleaved", "interleaved.py")

    def labels(rows):
        return [[f"{op}{mb}" for op, mb in row] for row in rows]

    cases = []
    for kind, p, m in [("1f1b", 5, 7), ("1f1b", 6, 11), ("gpipe", 5, 7)]:
        want = labels(sched.schedule(kind, p, m))
        cases += [[[kind, p, m], want]]
        if kind == "1f1b":
            cases += [[[p, m], want]] + [[[p, s, m], want[s]] for s in (0, 2)]
    icases = []
    for p, m, v in [(3, 6, 2), (2, 6, 3)]:
        want = [[f"{op}{mb}c{c}" for c, op, mb in row] for row in inter.interleaved_schedule(p, m, v)]
        icases += [[[p, m, v], want], [["interleaved", p, m, v], want]]
    return [{"problem": "pp-schedule", "cases": cases}, {"problem": "pp-interleaved", "cases": icases}]


@pytest.mark.slow
def test_no_learner_visible_module_holds_another_problems_answer(tmp_path):
    problems = _problems()
    practice = tmp_path / "practice"
    create_practice(practice, problems)
    answers = _answers()
    leaks = []
    for problem in problems:
        mine = [a for a in answers if a["problem"] != problem.id]
        out = subprocess.run([sys.executable, "-c", _SCAN, str(practice), problem.id, json.dumps(mine)],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path,
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"})
        assert out.returncode == 0, out.stderr[-3000:]
        leaks += [f"{problem.id}: {line}" for line in json.loads(out.stdout.strip().splitlines()[-1])]
    assert not leaks, "learner-visible modules that answer another problem:\n" + "\n".join(leaks)


_PATH = re.compile(r"(?<![\w/.-])((?:tests/|support/|reference/|starter/|wrong/)?[\w./-]*\w\.py|tests/[\w./-]+)")


@pytest.mark.parametrize("problem", _problems(), ids=lambda p: p.id)
def test_every_path_in_a_statement_exists_in_the_practice_folder(problem, tmp_path):
    create_practice(tmp_path, [problem])
    folder = tmp_path / problem.id
    shipped = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    missing = []
    for path in sorted(set(_PATH.findall(problem.statement))):
        path = path.rstrip(".")
        if path in shipped or f"tests/{path}" in shipped:
            continue
        missing.append(path)
    assert not missing, (f"{problem.id}/README.md mentions {missing}, which the practice folder "
                         f"{sorted(shipped)} does not have (paths are relative to practice/{problem.id}/)")
