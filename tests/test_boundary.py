"""The boundary between the tests and the learner's code, end to end (judge/sandbox, judge/core/protocol.py).

The fixture problem tests/fixtures/problems/fx-boundary passes generators, records, declared
exceptions and a lent object across. Its reference passes in every engine; hostile variants of it
fail only the tests they attack, and the other tests still count.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

from judge.core.problem import load_problem
from judge.core.runner import judge_source
from judge.engines import Job
from judge.engines.native import judge_many
from judge.engines.test_timer import TestTimer
from judge.sandbox import levels, standin
from judge.sandbox.inprocess import InProcessLearner
from judge.sandbox.process import ProcessLearner
from tests.conftest import FIXTURES, ROOT

PROBLEM = load_problem(FIXTURES / "boundary" / "fx-boundary")
REFERENCE = PROBLEM.reference_path.read_text()
NATIVE_LEVELS = ["plain"] + (["bubblewrap"] if shutil.which("bwrap") else [])


def judge_in(source: str, where: str) -> dict[str, tuple[str, str]]:
    """``{test function name: (outcome, message)}`` of a run of ``source`` (plain, bubblewrap or in-process)."""
    return {name: (test.outcome, test.message) for name, test in run(source, where).items()}


def run(source: str, where: str, per_test: float | None = None) -> dict:
    """``{test function name: TestResult}`` of a run of ``source`` (``per_test``: each test's CPU time limit)."""
    with tempfile.TemporaryDirectory(prefix="test-boundary-") as root:
        if where == "in-process":
            start = functools.partial(InProcessLearner, root=root)  # its folders go with root
            # what the fixture keeps in sys: the page runs each run in a fresh engine, this process does not
            sys.__dict__.pop("kept_by_the_learner", None)
        else:
            sandbox = levels.choose(where)

            def start(spec, side):
                return ProcessLearner(spec, sandbox, side)

        result = judge_source(PROBLEM, source, learner=functools.partial(standin.session, start=start),
                              plugins=[TestTimer(per_test or PROBLEM.per_test_time_limit)])
    assert result.tests, result.message
    return {t.id.split("::")[1]: t for t in result.tests}


def hostile(**functions: str) -> str:
    """The reference with some functions replaced (``name=source`` of the whole new def)."""
    source = REFERENCE
    for body in functions.values():
        source += "\n\n" + body.strip() + "\n"
    return "import json\nimport os\n" + source


@pytest.mark.parametrize("where", [*NATIVE_LEVELS, "in-process"])
def test_the_reference_passes_everywhere(where):
    outcomes = judge_in(REFERENCE, where)
    assert {name: outcome for name, (outcome, _) in outcomes.items()} == dict.fromkeys(outcomes, "passed")


@pytest.mark.parametrize("where", [*NATIVE_LEVELS, "in-process"])
def test_undeclared_members_of_a_lent_object_are_out_of_reach(where):
    source = hostile(use_meter="""
def use_meter(meter, xs):
    found = []
    for name in ("calls", "_secret", "reset", "__dict__", "_judge_ref"):
        try:
            getattr(meter, name)
            found.append(name)
        except AttributeError:
            pass
    try:
        meter.reset()
    except AttributeError as exc:
        raise ValueError(f"reachable: {found}; reset: {exc}")
""")
    outcome, message = judge_in(source, where)["test_a_lent_object_stays_here"]
    assert (outcome, message) == ("failed", "ValueError: reachable: ['_judge_ref']; reset: 'Meter' object has no "
                                            "attribute 'reset' (the tests lend the learner's code only add, fail, "
                                            "total of it)")


@pytest.mark.parametrize("where", NATIVE_LEVELS)
def test_a_call_that_runs_too_long_fails_its_test_alone(where):
    source = hostile(echo="def echo(x):\n    while True:\n        pass\n")
    outcomes = judge_in(source, where)
    assert outcomes["test_values_are_copies"][0] == "failed"
    assert "used more than its 2 s of CPU time" in outcomes["test_values_are_copies"][1]
    others = {n: o for n, (o, _) in outcomes.items() if n != "test_values_are_copies"}
    assert others == dict.fromkeys(others, "passed")  # a fresh learner process served the later tests


@pytest.mark.parametrize("where", NATIVE_LEVELS)
def test_a_crash_fails_the_test_that_caused_it(where):
    source = hostile(divide="def divide(a, b):\n    os._exit(3)\n")
    outcomes = judge_in(source, where)
    outcome, message = outcomes["test_declared_exceptions_cross_both_ways"]
    assert outcome == "failed" and "exit code 3" in message
    assert outcomes["test_keep_a_lent_object"][0] == "passed"


@pytest.mark.parametrize("where", NATIVE_LEVELS)
def test_forged_messages_fail_the_test_and_nothing_else(where):
    forge = """
def echo(x):
    out = json.loads(__import__("sys").argv[-1])["fds"][1]
    os.write(out, b'{"re": 999, "ok": 1}\\n')
    return x
"""
    garbage = """
def boxed(items):
    out = json.loads(__import__("sys").argv[-1])["fds"][1]
    os.write(out, b"not json at all\\n")
    return 1
"""
    outcomes = judge_in(hostile(echo=forge, boxed=garbage), where)
    assert outcomes["test_values_are_copies"] == (
        "failed", "a reply that does not answer the call in progress")
    assert outcomes["test_records_cross_by_value"][0] == "failed"
    assert "not valid JSON" in outcomes["test_records_cross_by_value"][1]
    assert outcomes["test_a_lent_object_stays_here"][0] == "passed"


@pytest.mark.parametrize("where", [*NATIVE_LEVELS, "in-process"])
def test_values_that_cannot_cross_fail_with_a_message(where):
    source = hostile(echo="""
class Always(list):
    def __eq__(self, other):
        return True

def echo(x):
    return Always()
""")
    outcome, message = judge_in(source, where)["test_values_are_copies"]
    assert outcome == "failed"
    assert message.startswith("echo() returned an object of type Always (from learner), a subclass of list, "
                              "which cannot be passed between the learner's code and the tests;")


@pytest.mark.parametrize("where", [*NATIVE_LEVELS, "in-process"])
def test_learner_exceptions_keep_their_type_message_and_line(where):
    source = REFERENCE.replace("def echo(x):\n    return x", "def echo(x):\n    return {}['missing']")
    test = run(source, where)["test_values_are_copies"]
    assert (test.outcome, test.message) == ("failed", "KeyError: 'missing'")
    assert [(f.file, f.function, f.code) for f in test.traceback][-1] == ("learner.py", "echo", "return {}['missing']")
    assert test.traceback[0].file == "tests/public/test_boundary.py"


def test_the_native_engine_records_the_sandbox_level():
    sandbox = levels.choose("plain")
    [result] = judge_many([Job(PROBLEM, source=REFERENCE)], sandbox=sandbox)
    assert result.status == "passed" and result.sandbox == "plain"
    assert json.loads(result.to_json())["sandbox"] == "plain"


def test_output_of_the_learner_lands_in_the_test_that_printed_it():
    source = REFERENCE.replace("def echo(x):\n    return x",
                               "def echo(x):\n    print('echo got', x)\n    os.write(1, b'raw fd\\n')\n    return x")
    source = "import os\n" + source
    tests = run(source, "plain")
    assert "echo got {'a': [1, (2, 3)]}" in tests["test_values_are_copies"].stdout
    assert "raw fd" in tests["test_values_are_copies"].stdout
    assert tests["test_generators_close"].stdout == ""


def test_a_learner_that_removes_its_own_folder_gets_the_same_verdict_in_the_browsers_engine():
    """The in-process engine (the browser's) used to fail every test with a bare FileNotFoundError from
    the judge's own bookkeeping of the working directory; in a learner process the call succeeds and
    the next tests cannot import the learner's file again. (Under bubblewrap the folder is a mount
    point, which cannot be removed: the call fails there.)"""
    source = hostile(echo="def echo(x):\n    import shutil\n    shutil.rmtree(os.getcwd())\n    return x\n")
    native, in_process = judge_in(source, "plain"), judge_in(source, "in-process")
    assert native["test_values_are_copies"][0] == "passed"
    assert "No such file or directory: 'learner.py'" in str(native)
    assert in_process == native


def test_an_interrupt_in_the_learners_code_ends_the_run_without_formatting_every_frame(monkeypatch, tmp_path):
    """The Pyodide harness's time limit is a KeyboardInterrupt raised in the learner's code. pytest's
    terminal reporter, whose output is never shown, formatted every frame of it (67 here, each source
    file parsed: 0.6 to 1.7 s of CPU before the run could end); it now gets the last frame only."""
    from _pytest._code.code import ExceptionInfo

    frames: list[int] = []
    getrepr = ExceptionInfo.getrepr

    def counting(self, *args, **options):
        if isinstance(self.value, KeyboardInterrupt):
            frames.append(len(self.traceback))
        return getrepr(self, *args, **options)

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    monkeypatch.setattr(ExceptionInfo, "getrepr", counting)
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        result = judge_source(PROBLEM, hostile(echo="def echo(x):\n    while True:\n        pass\n"),
                              learner=functools.partial(standin.session,
                                                        start=functools.partial(InProcessLearner, root=str(tmp_path))))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert frames == [1]
    assert "interrupted" in json.dumps(result.to_dict())


# The learner process caps the output it sends with each reply, but that is code the learner can change:
# the user-level sweeps' attack replaces it and sends 8 MiB of "printed" text with every reply.
OUTPUT_PAST_ITS_CAP = REFERENCE + "\n\n" + (FIXTURES / "attacks" / "user" / "output_past_the_cap.py").read_text()


def test_the_tests_process_keeps_no_more_of_the_learners_output_than_a_test_may_print(monkeypatch):
    """What the tests' process writes of the output replies carry: at most the limit (and one) per stream and
    test, whatever the replies carry; nothing between tests."""
    import io
    import types

    from judge.core.collector import OUTPUT_LIMIT
    from judge.sandbox.process import _print_output

    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    side = types.SimpleNamespace(output_left={"out": OUTPUT_LIMIT + 1, "err": OUTPUT_LIMIT + 1})
    for _ in range(3):
        _print_output(side, {"out": "x" * (3 << 20), "err": "y" * 10})
    assert (len(out.getvalue()), err.getvalue()) == (OUTPUT_LIMIT + 1, "y" * 30)
    side.output_left = {"out": 0, "err": 0}  # between tests
    _print_output(side, {"out": "late", "err": "late"})
    assert len(out.getvalue()) == OUTPUT_LIMIT + 1 and err.getvalue() == "y" * 30


@pytest.mark.parametrize("where", NATIVE_LEVELS)
def test_output_sent_past_the_learner_sides_cap_is_cut_on_the_tests_side(where):
    """What the tests' process keeps of a test's output is bounded there (it held hundreds of MiB at root's
    expense before): the test fails for printing too much, and what it printed stops at the limit."""
    from judge.core.collector import OUTPUT_LIMIT

    tests = run(OUTPUT_PAST_ITS_CAP, where)
    failed = [t for t in tests.values() if t.outcome == "failed"]
    assert failed, {name: t.outcome for name, t in tests.items()}
    for test in failed:
        assert test.message.startswith("output truncated: the test printed more than the 1 MiB"), test.message
        assert len(test.stdout) <= OUTPUT_LIMIT, len(test.stdout)


FUNCTIONS_WITH_EVERY_REPLY = REFERENCE + '''

import gc as _gc

_sent = [0]


def _announce(reply):  # new names with every reply: stand-ins the tests' side would keep until the run ends
    _sent[0] += 1
    base = _sent[0] * 100_000
    reply["bound"] = {f"f{base + i}": {"~": "ref", "side": "learner", "id": base + i, "kind": "function"}
                      for i in range(6_000)}


for _connection in _gc.get_objects():
    if type(_connection).__name__ == "PipeConnection":
        _connection.on_send = _announce
'''


@pytest.mark.parametrize("where", NATIVE_LEVELS)
def test_a_learner_side_that_announces_function_after_function_is_stopped(where):
    """The tests' side keeps a stand-in for each function of the learner's module it hears of: a learner side
    that announced thousands of new ones with every reply held 960 MB of root's test process (red team round 8).
    Past 10,000 the call fails, and the learner process is replaced (and its announcements dropped)."""
    tests = run(FUNCTIONS_WITH_EVERY_REPLY, where)
    stopped = [t for t in tests.values() if "announced more than 10,000 functions of its module" in t.message]
    assert stopped, {name: (t.outcome, t.message[:80]) for name, t in tests.items()}
    assert all(t.outcome == "failed" for t in stopped)


# A lent object keeps what it is given (Meter.add appends before it adds): a learner that hands it 30 MiB again and
# again made root's test process hold what it sent (1.2 GB of pp-1f1b-emulated's stash in three tests, red team
# round 9); each message is decoded there before anything else can look at it.
FLOODS_THE_METER = hostile(use_meter="""
def use_meter(meter, xs):
    big = "x" * 30_000_000
    while True:
        try:
            meter.add(big)
        except TypeError:
            pass
""")


@pytest.mark.parametrize("where", NATIVE_LEVELS)
def test_a_learner_that_floods_a_lent_object_is_stopped_within_a_tests_budget(where):
    """Past 64 MiB sent to the tests in one test, the message is refused before it is decoded and the learner's
    side replaced: the test fails saying so, and root's test process stays bounded."""
    code = f"""
import resource, sys
sys.path.insert(0, {str(ROOT)!r})
from tests.test_boundary import FLOODS_THE_METER, run
tests = run(FLOODS_THE_METER, {where!r}, per_test=20.0)  # CPU time to send 64 MiB on a busy machine
print(repr(tests["test_a_lent_object_stays_here"].message))
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    message, peaks = done.stdout.splitlines()[-2:]
    assert "more than 64 MiB sent to the tests during one test" in message, message
    tests_process_kib = int(peaks.split()[0])  # the tests run in this process; the learner's are its children
    # bounded: what crosses, and its copies while it is read and decoded (one run peaked at 0.76 GB, freed memory
    # kept by the allocator); without the budget the same flood grew until the test's CPU limit (1.2 GB in three
    # tests of 5 s each in the red team's measure, here 20 s)
    assert tests_process_kib < 1_500_000, peaks


ESCAPES = "\x1b]0;all passed\x07\x1b[2J\x1b[32m4/4 passed\x1b[0m\x9b2J\u202e4 fo 0\u202c"
CONTROL_SOURCES = {
    "raises at import": f"raise ValueError({ESCAPES!r})\n" + REFERENCE,
    "crashes while starting": f"import os, sys\nsys.__stderr__.write({ESCAPES!r} + '\\n')\nsys.__stderr__.flush()\n"
                              "os._exit(3)\n" + REFERENCE,
    "names its frames": hostile(echo=f"""
def echo(x):
    where = os.path.join(os.path.dirname(os.path.abspath(__file__)), {ESCAPES!r} + ".py")
    code = compile("def inner():\\n    raise ValueError('x')\\n", where, "exec")
    scope = {{}}
    exec(code, scope)
    inner = scope["inner"]
    inner.__code__ = inner.__code__.replace(co_name={ESCAPES!r})
    inner()
"""),
}


@pytest.mark.parametrize("where, kind", [(where, kind) for where in [*NATIVE_LEVELS, "in-process"]
                                         for kind in CONTROL_SOURCES
                                         if not (where == "in-process" and kind == "crashes while starting")])
def test_the_learners_control_characters_reach_no_field_of_the_result(where, kind):
    """Escape codes the learner writes (a message at import, stderr before a crash, a frame's file and
    function name) are shown as pictures in the Result itself, so in every report (feedback files and the
    class report held them raw); bidirectional overrides as escapes."""
    with tempfile.TemporaryDirectory(prefix="test-boundary-") as root:
        if where == "in-process":
            start = functools.partial(InProcessLearner, root=root)
        else:
            sandbox = levels.choose(where)

            def start(spec, side):
                return ProcessLearner(spec, sandbox, side)

        result = judge_source(PROBLEM, CONTROL_SOURCES[kind], learner=functools.partial(standin.session, start=start))
    strings = list(_strings(result.to_dict()))
    assert result.status in ("error", "failed"), result.status
    assert any("4/4 passed" in text for text in strings), strings  # the learner's words are there, as pictures
    raw = [text for text in strings if re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text)]
    assert not raw, [text.encode("unicode_escape").decode()[:300] for text in raw]


def _strings(value):
    """Every string in a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
