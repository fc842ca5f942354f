"""Sandbox levels (judge/sandbox/levels.py): what a learner process can reach at each one, on this machine.

A probe learner module tries to read the grader's files wherever they lie (the problems folder, the
installed judge's bundled problems, the tests' work directory, the parent's working directory
through /proc) and to reach out (processes, the network). Under bubblewrap it reaches none of them.
The user level is exercised end to end by the Gradescope bundle (tests/test_export.py), which needs
a Python an unprivileged user can run; here, that it refuses loudly when the user cannot.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest

from judge.core.problem import load_problem
from judge.sandbox import levels, standin
from judge.sandbox.process import ProcessLearner
from tests.conftest import FIXTURE_PROBLEMS, FROM_A_TERMINAL, PROBLEMS, ROOT, run_cli

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None and os.environ.get("CI") != "true",
                                 reason="bubblewrap is not installed (in CI a missing bwrap is a failure)")

PROBE = '''
import os, socket


def reach(paths):
    found = {}
    for path in paths:
        try:
            with open(path, "rb") as handle:
                found[path] = "read " + str(len(handle.read()))
        except OSError as exc:
            found[path] = type(exc).__name__
    return found


def parent_cwd():
    try:
        return os.readlink(f"/proc/{os.getppid()}/cwd")
    except OSError as exc:
        return type(exc).__name__


def listing(folder):
    try:
        return sorted(os.listdir(folder))
    except OSError as exc:
        return type(exc).__name__


def spawn():
    try:
        import _posixsubprocess  # noqa: F401 - the guard refuses it; under bubblewrap nothing is there to run
        return "imported"
    except ImportError as exc:
        return str(exc)


def connect():
    try:
        socket.create_connection(("1.1.1.1", 80), timeout=2)
        return "connected"
    except OSError as exc:
        return type(exc).__name__


def write(path):
    try:
        with open(path, "a") as handle:
            handle.write("# appended by the learner\\n")
        return "written"
    except OSError as exc:
        return type(exc).__name__
'''


def probe_side(level: str, **options):
    """A started test side on the probe module, its learner process at ``level``."""
    sandbox = levels.choose(level, **options)
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    side = standin.session(problem, PROBE + "\n\ndef add(a, b):\n    return a + b\n", Path("."),
                           start=lambda spec, side: ProcessLearner(spec, sandbox, side))
    assert side.start() == ""
    return side


SECRETS = [
    str(PROBLEMS / "pp-schedule" / "reference" / "pp_sim.py"),
    str(PROBLEMS / "pp-simulate" / "tests" / "secret" / "simulate_oracle.py"),
    str(ROOT / "judge" / "sandbox" / "standin.py"),
    str(Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" / "pytest"
        / "__init__.py"),
]


@needs_bwrap
def test_under_bubblewrap_the_learner_reaches_none_of_the_graders_files(tmp_path):
    workdir_secret = tmp_path / "tests" / "secret" / "test_x.py"  # where a test process keeps its copies
    workdir_secret.parent.mkdir(parents=True)
    workdir_secret.write_text("SECRET = 1\n")
    side = probe_side("bubblewrap", grading=True, grader_paths=[str(PROBLEMS)])
    try:
        found = side.module.reach([*SECRETS, str(workdir_secret), "/etc/passwd"])
        assert found == dict.fromkeys([*SECRETS, str(workdir_secret), "/etc/passwd"], "FileNotFoundError"), found
        # the parent it sees is the sandbox's own first process, inside it: not the grader's folder
        assert side.module.parent_cwd() in ("FileNotFoundError", "PermissionError", "/", "/work")
        assert side.module.listing("/") == ["bin", "dev", "judge", "lib", "lib64", "proc", "root", "tmp", "usr",
                                            "work"] or "work" in side.module.listing("/")
        # the judge's learner-side modules and their byte code (compiled when the runtime folder was made)
        assert side.module.listing("/judge/runtime/judge") == ["__init__.py", "__pycache__", "core", "sandbox"]
        assert sorted(side.module.listing("/judge/runtime/judge/core")) == ["__init__.py", "__pycache__", "codec.py",
                                                                           "protocol.py"]
        assert {name.split(".")[0] for name in side.module.listing("/judge/runtime/judge/core/__pycache__")} == {
            "__init__", "codec", "protocol"}
        assert side.module.listing("/proc")[:0] == [] and all(not p.isdigit() or int(p) < 10
                                                              for p in side.module.listing("/proc"))
        assert side.module.connect() == "OSError" or side.module.connect().endswith("Error")
        assert "does not allow importing _posixsubprocess" in side.module.spawn()
        assert side.module.write(SECRETS[0]) in ("PermissionError", "FileNotFoundError", "OSError")
    finally:
        side.stop()
    assert "appended by the learner" not in Path(SECRETS[0]).read_text()


@needs_bwrap
def test_bubblewrap_hides_installed_packages_and_shows_numpy_alone():
    side = probe_side("bubblewrap")
    try:
        # where this run's packages are (pytest's folder: a virtual environment's, or the Python's own) and the
        # Python's own: a tmpfs over each, or not mounted at all (a virtual environment outside /usr)
        base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})["purelib"]
        installed = {str(Path(pytest.__file__).resolve().parents[1]), os.path.realpath(base)}
        for folder in sorted(f for f in installed if os.path.isdir(f)):
            assert side.module.listing(folder) in ([], "FileNotFoundError"), folder  # pytest, the judge: gone
        assert "numpy" in side.module.listing("/judge/site")
        assert "pytest" not in side.module.listing("/judge/site")
    finally:
        side.stop()


def test_plain_reaches_everything_and_grading_says_so():
    side = probe_side("plain")
    try:
        assert side.module.reach(SECRETS[:1])[SECRETS[0]].startswith("read ")  # the hole the warning names
    finally:
        side.stop()
    sandbox = levels.choose("plain", grading=True)
    assert sandbox.warning == levels.PLAIN_WARNING and "can read the grader's files" in sandbox.warning
    assert levels.choose("plain", grading=False).warning == ""  # practice: the learner's own code, no warning


@pytest.mark.skipif(os.geteuid() != 0, reason="the user level needs root")
def test_the_user_level_refuses_a_python_the_user_cannot_run():
    """Here the judge's Python sits in root's private home (/root is 0700): the set-up check says so."""
    if os.access(sys.executable, os.X_OK) and _runnable_by_nobody(sys.executable):
        pytest.skip("this machine's Python is runnable by nobody; tests/test_export.py covers the user level")
    with pytest.raises(levels.SandboxError) as caught:
        levels.choose("user", user="nobody")
    message = str(caught.value)
    assert f"the user nobody cannot run {os.path.realpath(sys.executable)}" in message
    assert "use a Python the learner process can run" in message


def _runnable_by_nobody(path: str) -> bool:
    folder = Path(os.path.realpath(path))
    return all(part.stat().st_mode & 0o005 == 0o005 for part in [folder, *folder.parents] if part != Path("/"))


def test_unknown_levels_and_users_are_usage_errors():
    with pytest.raises(levels.SandboxError, match="expected one of auto, bubblewrap, user, plain"):
        levels.choose("docker")
    if os.geteuid() == 0:
        with pytest.raises(levels.SandboxError, match="no user 'no-such-user-x'"):
            levels.choose("user", user="no-such-user-x")
        with pytest.raises(levels.SandboxError, match="is root"):
            levels.choose("user", user="root")


@pytest.mark.skipif(os.geteuid() != 0, reason="as root, auto must not fall back to running learner code as root")
def test_auto_as_root_never_grades_unsandboxed(monkeypatch):
    monkeypatch.setattr(levels.shutil, "which", lambda name: None)  # as if bubblewrap were not installed
    levels._choose.cache_clear()
    try:
        if _runnable_by_nobody(sys.executable):
            pytest.skip("nobody can run this Python: auto would take the user level")
        with pytest.raises(levels.SandboxError, match="learner code must not run as root"):
            levels.choose("auto", grading=True)
        assert levels.choose("auto", grading=False).level == "plain"  # practice: the learner's own machine
    finally:
        levels._choose.cache_clear()


def test_grade_prints_the_level_and_the_plain_warning(tmp_path):
    subs = tmp_path / "subs" / "ada" / "fx-add"
    subs.mkdir(parents=True)
    shutil.copy(FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py", subs / "adder.py")
    done = run_cli("grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"), "--problems",
                   str(FIXTURE_PROBLEMS / "fx-add"), "--sandbox", "plain")
    assert done.returncode == 0, done.stderr
    assert "Sandbox: plain (no sandbox: the learner's code runs as the grader and can read the grader's files)" \
        in done.stderr
    assert "warning: the learner's code runs without a sandbox" in done.stderr


@needs_bwrap
def test_the_memory_limit_applies_to_the_learner_process():
    memory = '''
def hog():
    blocks = []
    try:
        while True:
            blocks.append(bytearray(50 * 2**20))
    except MemoryError:
        return len(blocks)
'''
    sandbox = levels.choose("bubblewrap")
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    spec_memory = []

    def start(spec, side):
        spec.memory_limit = 256
        spec_memory.append(spec.memory_limit)
        return ProcessLearner(spec, sandbox, side)

    side = standin.session(problem, memory, Path("."), start=start)
    assert side.start() == ""
    try:
        blocks = side.module.hog()
        assert 2 <= blocks <= 256 // 50 + 256 // 50 + 2, blocks  # the limit is headroom over the interpreter
    finally:
        side.stop()
    assert spec_memory == [256]


def test_the_runtime_folder_holds_nothing_of_the_graders():
    folder = Path(levels.runtime_folder())
    files = sorted(str(p.relative_to(folder)) for p in (folder / "judge").rglob("*")
                   if p.is_file() and p.parent.name != "__pycache__")
    assert files == sorted(f"judge/{name}" for name in levels._RUNTIME_FILES)
    compiled = sorted(str(p.relative_to(folder)).replace("/__pycache__", "").split(".")[0] + ".py"
                      for p in (folder / "judge").rglob("__pycache__/*.pyc"))
    assert compiled == files, "byte code of the runtime's modules, and of nothing else"
    assert {p.name for p in (folder / "site").iterdir()} <= {"numpy", "numpy.libs"}
    for entry in (folder / "site").iterdir():  # a link to the package, or a copy of it where others cannot reach it
        original = Path(levels._package_folders()[entry.name])
        if not entry.is_symlink():
            copied = {str(p.relative_to(entry)) for p in entry.rglob("*") if p.is_file()}
            assert copied == {str(p.relative_to(original)) for p in original.rglob("*") if p.is_file()}
    assert oct(folder.stat().st_mode & 0o777) == "0o755"


def test_the_runtime_is_compiled_beside_its_modules_whatever_pycache_prefix_says(tmp_path, monkeypatch):
    """The learner's Python runs with -I (no PYTHONPYCACHEPREFIX): it finds byte code only beside the
    modules, so that is where the runtime's is written, even where the grader sets a prefix."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "prefix"))
    folder = Path(levels.runtime_folder.__wrapped__())  # a new one: the process's own is shared by the tests
    try:
        beside = sorted(p.name.split(".")[0] for p in (folder / "judge" / "core" / "__pycache__").glob("*.pyc"))
        assert beside == ["__init__", "codec", "protocol"]
        assert not (tmp_path / "prefix").exists(), "byte code written under the prefix, where no learner looks"
        run = subprocess.run([sys.executable, "-I", "-S", "-B", "-v", "-c",
                              f"import sys; sys.path[:0] = [{str(folder)!r}]; import judge.core.codec"],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr[-2000:]
        assert f"code object from '{folder}/judge/core/__pycache__/codec." in run.stderr, "compiled again"
    finally:
        shutil.rmtree(folder, ignore_errors=True)



def test_the_level_probed_ahead_is_the_level_chosen_and_its_errors_come_with_it():
    """``python -m judge`` probes the level on a thread of its own while it warms up: the same level as
    :func:`levels.choose`, and the same error, raised where the level is needed."""
    assert levels.choose_ahead("plain").result() == levels.choose("plain")
    assert levels.choose_ahead("auto").result() == levels.choose("auto")
    pending = levels.choose_ahead("docker")
    with pytest.raises(levels.SandboxError, match="expected one of auto, bubblewrap, user, plain"):
        pending.result()


def test_a_python_closed_to_others_is_known_without_a_probe(monkeypatch):
    base = Path(tempfile.mkdtemp(dir="/tmp"))  # pytest's own tmp_path lies in a folder closed to others
    base.chmod(0o755)
    monkeypatch.setattr(levels, "_has_acl", lambda path: False)
    try:
        _closed_or_not(base / "home", monkeypatch)
    finally:
        shutil.rmtree(base)


def _closed_or_not(private: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (private / "bin").mkdir(parents=True)
    python = private / "bin" / "python3"
    python.write_text("")
    python.chmod(0o755)
    private.chmod(0o700)
    assert levels._closed_to_others(str(python)) == f"{private} is closed to other users"
    private.chmod(0o755)
    assert levels._closed_to_others(str(python)) == ""
    python.chmod(0o750)
    assert levels._closed_to_others(str(python)) == f"{python} is closed to other users"
    monkeypatch.setattr(levels, "_has_acl", lambda path: True)  # an access control list may open it: probe
    assert levels._closed_to_others(str(python)) == ""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None, reason="bubblewrap started by root")
def test_bubblewrap_as_root_skips_the_identity_probe_only_where_no_identity_can_run_python(monkeypatch):
    closed = levels._closed_to_others(os.path.realpath(sys.executable))
    probed: list[bool] = []
    real_probe = levels._probe
    monkeypatch.setattr(levels, "_probe", lambda sandbox, secrets: (probed.append(sandbox.as_identity),
                                                                    real_probe(sandbox, secrets))[1])
    levels._choose.cache_clear()
    try:
        sandbox = levels.choose("bubblewrap")
    finally:
        levels._choose.cache_clear()
    if closed:  # this machine's Python is in root's private home: one probe, as root, and the note says why
        assert probed == [False]
        assert not sandbox.as_identity and closed in sandbox.note
    else:
        assert probed[0] is True


def test_ctrl_c_while_the_level_is_probed_stops_the_run_and_leaves_nothing(tmp_path):
    """The probe runs on a thread while the judge warms up: a Ctrl-C then (sent to the whole process group,
    as a terminal does) ends the run as "interrupted" and leaves no folder of the judge's behind. The judge
    starts with Ctrl-C's default disposition, as from a terminal, even when the suite runs in the background."""
    practice = tmp_path / "practice" / "fx-add"
    practice.mkdir(parents=True)
    shutil.copy(FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py", practice / "adder.py")
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(private_tmp), PYTHONPATH=str(ROOT), NO_COLOR="1")
    run = subprocess.Popen([*FROM_A_TERMINAL, sys.executable, "-m", "judge", str(practice.parent), "--problems",
                            str(FIXTURE_PROBLEMS / "fx-add")], env=env, start_new_session=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not list(private_tmp.glob("judge-probe-*")) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert run.poll() is None, "the run ended before its probe was seen"
        os.killpg(run.pid, signal.SIGINT)
        stdout, stderr = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    # 130, or ended by SIGINT itself (how Python exits when a KeyboardInterrupt reaches its shutdown; seen
    # under load, after "interrupted" was printed): a shell shows 130 for both
    assert run.returncode in (130, -signal.SIGINT), stdout + stderr
    assert "interrupted" in stderr
    assert sorted(p.name for p in private_tmp.iterdir()) == []


def test_a_learner_process_imports_only_what_its_start_needs():
    """Each job starts a learner process: what its runtime imports is paid on every start. The codec
    reads dataclasses only where the learner's code made one, so that module (and inspect, which it
    imports) is not loaded for a learner that uses none (about 30 ms of every start here); fractions
    (and decimal) only when a Fraction arrives or the learner's code imported it (about 10 ms)."""
    sandbox = levels.choose("plain")
    problem = load_problem(FIXTURE_PROBLEMS / "fx-add")
    source = ("import sys\n\n\ndef loaded(names):\n    return [n for n in names if n in sys.modules]\n\n\n"
              "def add(a, b):\n    return a + b\n")
    side = standin.session(problem, source, Path("."), start=lambda spec, side: ProcessLearner(spec, sandbox, side))
    assert side.start() == ""
    try:
        assert side.module.loaded(["dataclasses", "inspect", "fractions", "decimal", "json"]) == ["json"]
        assert side.module.add(Fraction(1, 3), Fraction(1, 6)) == Fraction(1, 2)  # still crosses, both ways
        assert side.module.loaded(["fractions"]) == ["fractions"]
    finally:
        side.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="the user level needs root")
def test_the_user_levels_probe_runs_on_the_main_thread_even_when_chosen_ahead(monkeypatch):
    """The user level enters Landlock and seccomp in a preexec_fn, which CPython's documentation calls unsafe
    beside other threads: chosen ahead, that probe waits for the main thread. Its outcome is choose()'s."""
    from judge.sandbox import confine

    if not confine.offered().names:
        pytest.skip("neither Landlock nor seccomp here: the user level's probe needs no preexec_fn")
    started_on_main: list[bool] = []
    real_run = subprocess.run

    def run(*args, **kwargs):
        started_on_main.append(threading.current_thread() is threading.main_thread())
        return real_run(*args, **kwargs)

    monkeypatch.setattr(levels.subprocess, "run", run)
    levels._choose.cache_clear()
    try:
        pending = levels.choose_ahead("user")
        try:
            ahead: object = pending.result()
        except levels.SandboxError as exc:  # here: this machine's Python is closed to other users
            ahead = str(exc)
        assert started_on_main == [True], started_on_main
        levels._choose.cache_clear()
        try:
            chosen: object = levels.choose("user")
        except levels.SandboxError as exc:
            chosen = str(exc)
        assert ahead == chosen
    finally:
        levels._choose.cache_clear()


def test_the_in_process_guard_confines_the_learners_thread_and_not_the_judges_others(tmp_path):
    """Seen in a run: the native engine's warm-up runs a tiny learner module in the judge's own process
    while the level's probe, on another thread, makes its folder; the guard refused that folder and the
    whole run failed with "the judge does not allow changing files outside the learner's folder"."""
    from judge.sandbox import guard

    learner = tmp_path / "learner"
    learner.mkdir()
    made: list[str] = []
    with guard.confined(str(learner)):
        with pytest.raises(PermissionError, match="outside the learner's folder"):
            os.mkdir(tmp_path / "by-the-learner")
        judges = threading.Thread(target=lambda: made.append(tempfile.mkdtemp(dir=tmp_path)))
        judges.start()
        judges.join()
    assert len(made) == 1 and os.path.isdir(made[0])
    os.mkdir(tmp_path / "after")  # and the block put back what was before


def test_a_learner_process_is_confined_on_every_thread(tmp_path):
    """In a learner process (:mod:`judge.sandbox.child`) the learner's own threads are confined too."""
    learner = tmp_path / "learner"
    learner.mkdir()
    code = ("import os, sys, threading\nfrom judge.sandbox import guard\nguard.confine(sys.argv[1])\n"
            "def write():\n    try:\n        os.mkdir(sys.argv[2])\n        print('made')\n"
            "    except PermissionError as exc:\n        print('refused:', exc)\n"
            "thread = threading.Thread(target=write)\nthread.start()\nthread.join()\n")
    done = subprocess.run([sys.executable, "-c", code, str(learner), str(tmp_path / "outside")], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.startswith("refused: the judge does not allow changing files outside"), done.stdout + done.stderr
    assert not (tmp_path / "outside").exists()


def test_a_job_space_whose_identity_keeps_a_process_still_removes_its_folder(tmp_path, monkeypatch):
    """An identity whose processes survived being killed is never reused (IdentityError); its job's
    folder goes anyway (judge-job-* folders were left behind in /tmp)."""
    from judge.sandbox import identities
    from judge.sandbox.process import JobSpace

    def survived(identity: identities.Identity, then: object = None) -> None:
        raise identities.IdentityError("processes of the sandbox identity 60001 survived being killed: [4242]")

    monkeypatch.setattr(identities, "release", survived)
    folder = tmp_path / "judge-job-x"
    folder.mkdir()
    space = JobSpace(str(folder), (60001, 60001), identities.Identity(60001, 60001, -1))
    with pytest.raises(identities.IdentityError, match="survived"):
        space.close()
    assert not folder.exists()
    assert space.identity is None, "never released twice"


@pytest.mark.parametrize("how", ["in the loop", "apart, no process to spare"])
def test_a_jobs_folders_are_gone_before_its_identity_is_given_back(tmp_path, monkeypatch, how):
    """While a job's folder is there, its uid is nobody else's: a job given it could otherwise read what the
    last learner left. (Removed apart, the remover holds the lock: tests/test_trees.py.)"""
    import fcntl

    from judge.engines import native
    from judge.sandbox import identities, trees

    monkeypatch.setattr(identities, "end_processes", lambda uid: None)  # nothing runs as this uid here
    lock_path = tmp_path / "uid-60123.lock"
    lock = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)
    folder = tmp_path / "judge-job-x"
    (folder / "work").mkdir(parents=True)
    (folder / "work" / "adder.py").write_text("the last learner's code")
    held_while_removed = []
    remove = trees.remove_tree

    def watched(path):
        probe = os.open(lock_path, os.O_RDWR)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held_while_removed.append(False)
        except BlockingIOError:
            held_while_removed.append(True)
        finally:
            os.close(probe)
        remove(path)

    monkeypatch.setattr(trees, "remove_tree", watched)
    if how.startswith("apart"):
        def no_fork():
            raise OSError(11, "Resource temporarily unavailable")
        monkeypatch.setattr(os, "fork", no_fork)
    native._free(identities.Identity(60123, 60123, lock), str(folder), apart=how.startswith("apart"))
    assert held_while_removed == [True] and not folder.exists()
    probe = os.open(lock_path, os.O_RDWR)
    fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)  # given back afterwards
    os.close(probe)


@pytest.mark.skipif(os.geteuid() != 0, reason="the pool's locks are root's")
def test_a_job_waiting_for_a_sandbox_identity_says_so_at_once(capfd, monkeypatch):
    """A named identity (JUDGE_STUDENT_USER) held by another judge: a job waited up to ten minutes without a
    word, then failed. It now says once, at once, what it waits for and how long it will: as the level is
    chosen and as each job takes its identity (the engine's own loop of tries, which is what jobs use)."""
    import fcntl
    import pwd

    from judge.engines import native
    from judge.sandbox import identities

    nobody = pwd.getpwnam("nobody")
    sandbox = levels.Sandbox("user", sys.executable, "", user="nobody")
    monkeypatch.setattr(identities, "WAIT", 0.3)
    holder = os.open(os.path.join(identities._lock_folder(), f"uid-{nobody.pw_uid}.lock"), os.O_RDWR | os.O_CREAT,
                     0o600)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)
        with pytest.raises(levels.IdentitiesBusy):
            levels.acquire_identity(sandbox, wait=0.3)
        first = capfd.readouterr().err
        with pytest.raises(levels.IdentitiesBusy):
            native._Made(parent=os.getpid()).take_identity(sandbox)
        second = capfd.readouterr().err
    finally:
        os.close(holder)
    said = f"waiting for the sandbox identity uid {nobody.pw_uid}, which another judge on this machine is using"
    for err in (first, second):
        assert err.count(said) == 1 and "(up to 0.3 s)" in err, err


def test_a_stale_errno_left_by_an_earlier_call_neither_hides_nor_breaks_landlock(tmp_path):
    """A successful system call leaves ctypes' errno as an earlier failed call set it: CI failed so twice (the
    landlock package's checks read errno, and cached the ABI, so only a fresh process showed it)."""
    code = ("import ctypes, errno, sys\nfrom judge.sandbox import confine\nctypes.set_errno(errno.ENOENT)\n"
            "print(confine.offered().landlock)\nctypes.set_errno(errno.ENOENT)\n"
            "rules = confine.Confinement([sys.base_prefix, '/no/such/path'], sys.argv[1], confine.Offered(True, False))\n"
            "print(rules._ruleset_fd >= 0)\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          timeout=60, check=False)
    assert done.stdout.split() == ["True", "True"], done.stdout + done.stderr


@pytest.mark.parametrize(("refusal", "said"), [("ENOSYS", "built without Landlock"), ("EOPNOTSUPP", "turned off at boot"),
                                               ("EPERM", "Operation not permitted")])
def test_a_kernel_that_refuses_landlock_is_reported_with_its_reason(refusal, said):
    """As in a container whose seccomp profile refuses Landlock's calls: the run says so, and why."""
    code = (f"import errno, pyseccomp\nrules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)\n"
            f"rules.add_rule(pyseccomp.ERRNO(errno.{refusal}), 444)\nrules.load()\n"
            "from judge.sandbox import confine\nprint(confine.offered().landlock)\nprint(confine.offered().missing)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True, timeout=60)
    offered, missing = done.stdout.split("\n", 1)
    assert offered == "False"
    assert said in missing and "chmod -R o-rwx" in missing


def test_a_platforms_grading_never_falls_back_to_no_sandbox(monkeypatch, tmp_path):
    """Red team round 8: GitHub's Ubuntu 24.04 runners restrict the namespaces bubblewrap needs, and the
    Classroom step runs as a user that is not root, so `auto` graded at plain: the learner's code wrote a
    conftest.py that passed every test and printed the secret tests to the job's log. Unattended, `auto`
    refuses instead; an instructor's own `judge grade` still falls back, with its warning."""
    stub = tmp_path / "bwrap"  # bwrap as it fails on GitHub's Ubuntu 24.04 runners
    stub.write_text('#!/bin/sh\necho "bwrap: setting up uid map: Permission denied" >&2\nexit 1\n')
    stub.chmod(0o755)
    monkeypatch.setattr(levels.shutil, "which", lambda name: str(stub) if name == "bwrap" else None)
    monkeypatch.setattr(levels.os, "geteuid", lambda: 1000)
    levels._choose.cache_clear()
    try:
        with pytest.raises(levels.SandboxError, match="a platform's grading never runs learner code unsandboxed") \
                as refused:
            levels.choose("auto", grading=True, unattended=True)
        assert "kernel.apparmor_restrict_unprivileged_userns=0" in str(refused.value)
        assert "the user level is the one expected here" not in str(refused.value), "not where the judge is no root"
        assert levels.choose("auto", grading=True).level == "plain"
        assert levels.choose("plain", grading=True, unattended=True).level == "plain"  # asked for by name
    finally:
        levels._choose.cache_clear()


@pytest.mark.skipif(os.geteuid() != 0, reason="the pool's locks are root's")
def test_a_named_sandbox_user_that_something_else_uses_is_refused_and_left_alone(tmp_path):
    """Red team round 8: every job ends every process of its sandbox user and removes its files in the shared
    temporary folders, so `--sandbox-user nobody` (run.sh's default, which the docs say to try locally) killed
    the machine's own processes of nobody. A named user that runs or owns anything is refused, untouched."""
    from judge.sandbox import identities

    uid = 64990  # outside the judge's pool, no account
    other = subprocess.Popen(["sleep", "60"], user=uid, group=uid, extra_groups=[])
    owned = Path(tempfile.gettempdir()) / f"judge-test-owned-{os.getpid()}"
    owned.write_text("not the judge's")
    os.chown(owned, uid, uid)
    try:
        with pytest.raises(identities.IdentityError, match=r"the sandbox user \(uid 64990\) is in use") as refused:
            identities.acquire(named=(uid, uid), wait=0)
        assert f"process {other.pid} (sleep)" in str(refused.value) and str(owned) in str(refused.value)
        assert other.poll() is None and owned.read_text() == "not the judge's", "nothing of it was touched"
    finally:
        other.kill()
        other.wait()
        owned.unlink()
    identities.release(identities.acquire(named=(uid, uid), wait=0))  # its own again: taken and given back


def _fs_type(path: str) -> str:
    """The file system's type as coreutils' stat sees it (an oracle independent of the judge's mountinfo reading)."""
    return subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize("folder", ["/dev/shm", "/var/tmp"])
def test_grading_warns_when_the_learners_folders_would_be_in_memory(folder):
    """The learner's folder is in the judge's temporary folder; on a tmpfs (/tmp on Debian 13, Fedora, Arch) what
    it writes there is memory no limit counts: a red team's submission held 1.8 GiB with a 1 GiB limit (round 9,
    R1). Grading says so, with the fix; on disk it says nothing."""
    done = subprocess.run([sys.executable, "-c", "from judge.sandbox import levels; "
                           "print(levels.choose('auto', grading=True).warning or 'no warning')"],
                          capture_output=True, text=True, env=dict(os.environ, TMPDIR=folder), cwd=ROOT, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    in_memory = _fs_type(folder) == "tmpfs"
    assert ("is in memory (tmpfs)" in done.stdout and "TMPDIR=/var/tmp" in done.stdout) == in_memory, done.stdout
