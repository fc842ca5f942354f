"""The user level (platforms and containers, where bubblewrap cannot run) holds what bubblewrap holds.

The attacks of tests/fixtures/attacks/user/ are what a student at scale tries against it: copying a
classmate graded beside them or a folder a timed-out run left behind, reading a world-readable copy
of the course elsewhere on the machine, killing everything it can signal, a daemon that outlives the
run, symbolic links planted wherever root might open or chown a file (aimed at a root-owned file and
at the secret tests), and a reply built to exhaust the tests' process. Each is graded with
``judge grade -j 2`` beside honest classmates, at the user level (a Python an unprivileged identity
can run: the Gradescope bundle's virtual environment, made from Debian's Python as Gradescope's
set-up makes it) and under bubblewrap; then the same through the bundle's run_autograder, as
Gradescope runs it. Every attack earns nothing (each returns a wrong answer unless its attack works),
every honest classmate keeps full marks, no secret test text reaches any output, the root-owned file
keeps its owner and content, and nothing of a job survives: no process of a sandbox identity, no
``judge-job-*`` folder, also after a time-out and after an interrupted run.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from judge.sandbox import confine, identities, levels, trees
from tests.conftest import FIXTURE_PROBLEMS, FROM_A_TERMINAL, ROOT, rendered_markdown
from tests.test_export import (  # noqa: F401  (session fixtures shared with the export tests)
    clean_env,
    gradescope,
    run_autograder,
    wheelhouse,
    world_readable_root,
)
from tests.test_temporary_folder import HOG

ATTACKS = ROOT / "tests" / "fixtures" / "attacks" / "user"
USER_ATTACKS = sorted(p.stem for p in ATTACKS.glob("*.py"))
HONEST = (FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py").read_text()
ROOT_CANARY = Path("/tmp/pp-judge-root-canary")
POOL = range(identities.POOL_FIRST, identities.POOL_FIRST + identities.POOL_SIZE)

# one worker for the module (pytest-xdist): its runs are the only ones that use the pool's identities;
# slow: its fixtures build the Gradescope bundle's environment and each sweep judges every attack
pytestmark = [pytest.mark.xdist_group("user-level"), pytest.mark.slow]
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the user level needs the judge to run as root")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None and os.environ.get("CI") != "true",
                                 reason="bubblewrap is not installed (in CI a missing bwrap is a failure)")


@pytest.fixture
def marked_problems(tmp_path):
    """A copy of fx-add whose secret test carries a marker, and a world-readable copy of it elsewhere."""
    marker = f"SECRET-MARKER-{uuid.uuid4().hex}"
    problems = tmp_path / "problems"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", problems / "fx-add")
    secret = problems / "fx-add" / "tests" / "secret" / "test_big.py"
    secret.write_text(secret.read_text() + f"\n# {marker}\n")
    elsewhere = Path("/var/tmp") / f"pp-course-copy-{uuid.uuid4().hex[:8]}"
    shutil.copytree(problems, elsewhere / "problems")
    for path in [elsewhere, *elsewhere.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    ROOT_CANARY.write_text("root's own file\n")
    ROOT_CANARY.chmod(0o644)
    yield problems, marker
    shutil.rmtree(elsewhere, ignore_errors=True)
    ROOT_CANARY.unlink(missing_ok=True)


@contextlib.contextmanager
def idle_pool() -> Iterator[set[int]]:
    """The pool's uids no job holds now (their locks taken for the while, as a judge takes them): only
    those must have nothing left. Another judge on this machine (a benchmark, a second test session)
    holds the uids its jobs run as, and its learners' processes are not this test's leftovers."""
    folder = identities._lock_folder()
    held: dict[int, int] = {}
    try:
        for uid in POOL:
            fd = os.open(os.path.join(folder, f"uid-{uid}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held[uid] = fd
            except BlockingIOError:
                os.close(fd)
        yield set(held)
    finally:
        for fd in held.values():
            os.close(fd)


@pytest.fixture(autouse=True)
def _clear_pool_leftovers():
    """After each test (which has asserted on them already): what a sandbox identity left behind is
    removed, so one test's failure does not become the next test's."""
    yield
    with idle_pool() as idle:
        for task in _pool_tasks(idle):
            with contextlib.suppress(OSError, ValueError):
                os.kill(int(task.split()[1]), signal.SIGKILL)
        for item in _pool_ipc(idle):
            kind, ident = item.split()[1:3]
            subprocess.run(["ipcrm", {"shm": "-m", "msg": "-q", "sem": "-s"}[kind], ident], capture_output=True,
                           check=False)
        for path in _pool_files(idle):
            with contextlib.suppress(OSError):
                shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.unlink(path)


@pytest.fixture
def private_tmp():
    """The graded runs' temporary folder (TMPDIR): passable by the identities, and the judge's alone, so
    that what a run leaves behind is found whatever else runs on the machine."""
    folder = Path(tempfile.mkdtemp(prefix="pp-user-level-"))
    folder.chmod(0o711)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def submissions(folder: Path, names: list[str]) -> Path:
    for name in names:
        entry = folder / name / "fx-add" / "adder.py"
        entry.parent.mkdir(parents=True)
        entry.write_text(HONEST if name.startswith("honest") else (ATTACKS / f"{name}.py").read_text())
    return folder


def grade_with(python: str, subs: Path, out: Path, problems: Path, level: str,
               tmp: Path, **env: str) -> dict[str, dict[str, str]]:
    done = subprocess.run([python, "-m", "judge", "grade", str(subs), "-o", str(out), "--problems", str(problems),
                           "--sandbox", level, "-j", "2"], capture_output=True, text=True, timeout=900,
                          env=clean_env(TMPDIR=str(tmp), **env), cwd=ROOT, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert f"Sandbox: {level}" in done.stderr
    with (out / "grades.csv").open() as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def _pool_tasks(pool: Iterable[int] = POOL) -> list[str]:
    """Every live thread of a sandbox identity, read task by task: a process whose main thread has
    exited shows ``State: Z`` in /proc/<pid>/status though its other threads still run."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            tasks = os.listdir(f"/proc/{name}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                fields = dict(line.split(":", 1) for line in Path(f"/proc/{name}/task/{task}/status").read_text(
                    errors="replace").splitlines() if ":" in line)
            except OSError:
                continue
            uids = {int(u) for u in fields.get("Uid", "").split()}
            if uids & set(pool) and not fields.get("State", "").strip().startswith("Z"):
                found.append(f"pid {name} (thread {task}) of uid {sorted(uids & set(pool))[0]}")
    return found


def _pool_ipc(pool: Iterable[int] = POOL) -> list[str]:
    """SysV shared memory, message queues and semaphores a sandbox identity owns (no path, no process)."""
    found = []
    for kind in ("shm", "msg", "sem"):
        try:
            header, *rows = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except OSError:
            continue
        column = header.split().index("uid")
        found += [f"SysV {kind} {row.split()[1]} of uid {row.split()[column]}" for row in rows
                  if int(row.split()[column]) in set(pool)]
    return found


#: the POSIX message queue tests/fixtures/attacks/user/ipc_leftovers.py makes (no listing of queues without
#: an mqueue mount, which this machine and the platforms' containers do not have: it is looked up by name)
POSIX_QUEUE = b"/pp-judge-learner"


def _posix_queues() -> list[str]:
    """The attack's POSIX message queue if it outlived its job (removed here, so one run's finding does not
    become the next one's)."""
    import ctypes

    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    descriptor = rt.mq_open(POSIX_QUEUE, os.O_RDONLY)
    if descriptor < 0:
        return []
    rt.mq_close(descriptor)
    rt.mq_unlink(POSIX_QUEUE)
    return [f"POSIX message queue {POSIX_QUEUE.decode()}"]


def _pool_files(pool: Iterable[int] = POOL) -> list[str]:
    """Files a sandbox identity left in the machine's shared temporary folders."""
    found, uids = [], set(pool)
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            try:
                if os.lstat(os.path.join(folder, name)).st_uid in uids:
                    found.append(os.path.join(folder, name))
            except OSError:
                continue
    return found


def nothing_left_behind(tmp: Path) -> list[str]:
    """Processes (any live thread) of any idle sandbox identity, what they own outside any process (SysV IPC,
    the attack's POSIX message queue, files in the shared temporary folders), and the judge's folders (jobs,
    tests, learners, its runtime), that outlived the run whose temporary folder is ``tmp``."""
    with idle_pool() as idle:
        left = [f"pid {pid} of uid {uid}" for uid in sorted(idle) for pid in identities.processes_of(uid)]
        left += [task for task in _pool_tasks(idle) if task.split(" (")[0] not in {x.split(" of")[0] for x in left}]
        left += _pool_ipc(idle) + _pool_files(idle) + _posix_queues()
    return left + [str(p) for p in tmp.glob("judge-*")]


#: what the rendered Markdown (or the report's HTML) would hold had markup_at_import's message been taken as markup
LEARNER_MARKUP = "<img src="


def assert_held(rows: dict[str, dict[str, str]], out: Path, marker: str, tmp: Path) -> None:
    earned = {name: rows[name]["total"] for name in USER_ATTACKS if float(rows[name]["total"]) > 0}
    assert earned == {}, f"these attacks earned points: {earned}"
    assert {name: rows[name]["total"] for name in rows if name.startswith("honest")} == {
        "honest-1": "4", "honest-2": "4", "honest-3": "4"}, "an honest classmate graded beside the attacks lost marks"
    leaked = [str(p) for p in out.rglob("*") if p.is_file() and marker in p.read_text(errors="replace")]
    assert leaked == [], f"the secret test reached {leaked}"
    escaped = [str(p) for p in out.rglob("*") if p.is_file() and b"\x1b" in p.read_bytes()]
    assert escaped == [], f"the learner's escape codes reached {escaped}"
    marked_up = [str(p) for p in (out / "feedback").glob("*.md") if LEARNER_MARKUP in rendered_markdown(p.read_text())]
    assert marked_up == [], f"the learner's markup renders in {marked_up}"
    assert LEARNER_MARKUP not in (out / "report.html").read_text()
    info = ROOT_CANARY.lstat()
    assert (info.st_uid, ROOT_CANARY.is_symlink(), ROOT_CANARY.read_text()) == (0, False, "root's own file\n")
    assert nothing_left_behind(tmp) == []


@pytest.fixture(scope="session")
def user_python(gradescope):  # noqa: F811
    """The Gradescope bundle's Python (a virtual environment of Debian's Python with the judge): one an
    unprivileged identity can run, as on the platforms."""
    _, root, user = gradescope
    if not user:
        pytest.skip("no Python here that an unprivileged user can run (Debian's python3) or not root")
    return str(root / "pp-judge-venv" / "bin" / "python")


@needs_root
def test_the_user_level_is_confined_where_the_kernel_allows_and_says_what_it_lacks(user_python):
    done = subprocess.run([user_python, "-c", "from judge.sandbox import levels; s = levels.choose('user', "
                           "grading=True); print(s.summary); print(s.note)"], capture_output=True, text=True,
                          env=clean_env(), cwd="/", timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    offered = confine.offered()
    assert ("Landlock" in done.stdout) == offered.landlock and ("seccomp" in done.stdout) == offered.seccomp
    assert "an unprivileged identity of its own per job" in done.stdout
    if not offered.landlock:
        assert "Landlock is not available" in done.stdout


@needs_root
def test_at_the_user_level_no_attack_earns_and_classmates_keep_full_marks(user_python, marked_problems, tmp_path,
                                                                       private_tmp):
    problems, marker = marked_problems
    subs = submissions(tmp_path / "subs", [*USER_ATTACKS, "honest-1", "honest-2", "honest-3"])
    rows = grade_with(user_python, subs, tmp_path / "out", problems, "user", private_tmp)
    assert_held(rows, tmp_path / "out", marker, private_tmp)


#: what the level without Landlock cannot hold, said so in docs/hostile-input.md ("as good as the files'
#: permissions"): the world-readable copy of the course the marked_problems fixture makes on purpose, and
#: memory past the limit in the machine's own /dev/shm (a tmpfs every user may write)
WITHOUT_LANDLOCK_KNOWN = {"world_readable_copy", "memory_in_tmpfs"}


@needs_root
def test_without_landlock_no_attack_earns_and_classmates_keep_full_marks(user_python, marked_problems, tmp_path,
                                                                       private_tmp):
    """JUDGE_CONFINE=seccomp: the user level on a kernel without Landlock. A submissions folder others
    can read, as a grader's unpacked LMS download usually is (umask 022), is refused with the fix
    (the judge's command line in /proc names it to the learner's code); made private, it is graded."""
    problems, marker = marked_problems
    shared = Path(tempfile.mkdtemp(prefix="pp-subs-", dir="/var/tmp"))
    try:
        shared.chmod(0o755)
        names = [n for n in USER_ATTACKS if n not in WITHOUT_LANDLOCK_KNOWN]
        subs = submissions(shared / "subs", [*names, "honest-1", "honest-2", "honest-3"])
        for path in [subs, *subs.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        out = tmp_path / "out"
        command = [user_python, "-m", "judge", "grade", str(subs), "-o", str(out), "--problems", str(problems),
                   "--sandbox", "user", "-j", "2"]
        env = clean_env(TMPDIR=str(private_tmp), JUDGE_CONFINE="seccomp")
        refused = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env, cwd=ROOT, check=False)
        assert refused.returncode not in (0, 1) and not out.exists(), refused.stdout + refused.stderr
        assert f"chmod -R o-rwx {subs}" in refused.stderr and "Landlock" in refused.stderr, refused.stderr
        subprocess.run(["chmod", "-R", "o-rwx", str(subs)], check=True)
        done = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, cwd=ROOT, check=False)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        assert "Landlock is not available" in done.stderr
        with (out / "grades.csv").open() as handle:
            rows = {row["student"]: row for row in csv.DictReader(handle)}
        earned = {name: rows[name]["total"] for name in names if float(rows[name]["total"]) > 0}
        assert earned == {}, f"these attacks earned points without Landlock: {earned}"
        assert {n: rows[n]["total"] for n in rows if n.startswith("honest")} == {
            "honest-1": "4", "honest-2": "4", "honest-3": "4"}
        assert nothing_left_behind(private_tmp) == []
    finally:
        shutil.rmtree(shared, ignore_errors=True)


#: what earns without Landlock and seccomp (docs/hostile-input.md, "user, without Landlock or seccomp"): memory
#: in the machine's own /dev/shm, work in children the kernel reaps by itself (their CPU time adds to no
#: process's), memory in files with no name (up to the open files limit times the file size limit)
WITHOUT_CONFINEMENT_KNOWN = WITHOUT_LANDLOCK_KNOWN | {"cpu_in_reaped_children", "memfd_hoard"}


@needs_root
def test_without_landlock_or_seccomp_only_the_documented_holes_earn(user_python, marked_problems, tmp_path,
                                                                   private_tmp):
    """JUDGE_CONFINE=none: the user level with file permissions only (a kernel or a container without either).
    The attacks the documentation names may earn; no other does, the honest classmates keep full marks, the
    run says what is missing and what follows, and nothing of any job is left."""
    problems, _ = marked_problems
    subs = submissions(tmp_path / "subs", [*USER_ATTACKS, "honest-1", "honest-2", "honest-3"])
    subprocess.run(["chmod", "-R", "o-rwx", str(subs)], check=True)
    out = tmp_path / "out"
    done = subprocess.run([user_python, "-m", "judge", "grade", str(subs), "-o", str(out), "--problems", str(problems),
                           "--sandbox", "user", "-j", "2"], capture_output=True, text=True, timeout=900,
                          env=clean_env(TMPDIR=str(private_tmp), JUDGE_CONFINE="none"), cwd=ROOT, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert "seccomp is not available" in done.stderr and "CPU-time limit" in done.stderr, done.stderr
    with (out / "grades.csv").open() as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    earned = {name for name in USER_ATTACKS if float(rows[name]["total"]) > 0}
    assert earned <= WITHOUT_CONFINEMENT_KNOWN, f"undocumented attacks earned without confinement: {earned}"
    assert {n: rows[n]["total"] for n in rows if n.startswith("honest")} == {
        "honest-1": "4", "honest-2": "4", "honest-3": "4"}
    assert nothing_left_behind(private_tmp) == []


#: a red team's submission (2026-12-06): empty folders until its CPU limit stops it; removing them took the judge
#: about 2 s, in the loop that watches every other job, since in a process of its own (judge/sandbox/trees.py)
MANY_ENTRIES = """import os, time

os.mkdir("d")
os.chdir("d")
n = 0
while True:
    for _ in range(1000):
        os.mkdir(str(n))
        n += 1


def add(a, b):
    return 0
"""


@needs_root
@pytest.mark.parametrize("level", ["user", "bubblewrap", "plain"])
def test_a_folder_filled_with_entries_until_the_limit_is_removed_and_classmates_keep_full_marks(
        user_python, tmp_path, private_tmp, level):
    """Judged first beside three classmates (-j 2), stopped at its (1 s) limit, judged again alone: its folders go,
    the classmates keep their marks, nothing of it is left. (Only folders in its own: safe at the plain level.)"""
    if level == "bubblewrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    subs = submissions(tmp_path / "subs", ["honest-1", "honest-2", "honest-3"])
    attack = subs / "a-many_entries" / "fx-add" / "adder.py"
    attack.parent.mkdir(parents=True)
    attack.write_text(MANY_ENTRIES)
    done = subprocess.run([user_python if level == "user" else sys.executable, "-m", "judge", "grade", str(subs),
                           "-o", str(tmp_path / "out"), "--problems", str(FIXTURE_PROBLEMS), "--sandbox", level,
                           "-j", "2", "--timeout", "1"], capture_output=True, text=True, timeout=600,
                          env=clean_env(TMPDIR=str(private_tmp)), cwd=ROOT, check=False)
    assert done.returncode in (0, 1), done.stdout + done.stderr
    with (tmp_path / "out" / "grades.csv").open() as handle:
        rows = {row["student"]: row["total"] for row in csv.DictReader(handle)}
    [result] = json.loads((tmp_path / "out" / "results" / "a-many_entries.json").read_text())["results"]
    assert result["status"] == "timeout", result["message"]  # stopped with its folder full, not by itself
    assert rows == {"a-many_entries": "0", "honest-1": "4", "honest-2": "4", "honest-3": "4"}, done.stderr
    assert nothing_left_behind(private_tmp) == []


@needs_root
def test_a_daemon_whose_main_thread_exited_does_not_outlive_its_job(user_python, tmp_path, private_tmp):
    """zombie_leader graded first, then honest classmates one at a time (-j 1): each is given the uid
    the attack's job had, which its surviving thread would SIGKILL."""
    subs = submissions(tmp_path / "subs", ["honest-1", "honest-2", "honest-3"])
    attack = tmp_path / "subs" / "a-zombie_leader" / "fx-add" / "adder.py"
    attack.parent.mkdir(parents=True)
    attack.write_text((ATTACKS / "zombie_leader.py").read_text())
    done = subprocess.run([user_python, "-m", "judge", "grade", str(subs), "-o", str(tmp_path / "out"), "--problems",
                           str(FIXTURE_PROBLEMS), "--sandbox", "user", "-j", "1"], capture_output=True, text=True,
                          timeout=600, env=clean_env(TMPDIR=str(private_tmp)), cwd=ROOT, check=False)
    with idle_pool() as idle:
        survivors = _pool_tasks(idle)
    for pid in {int(t.split()[1]) for t in survivors}:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)  # the test's own clean-up: it must not haunt later tests
    with (tmp_path / "out" / "grades.csv").open() as handle:
        rows = {row["student"]: row["total"] for row in csv.DictReader(handle)}
    assert (rows, survivors) == ({"a-zombie_leader": "0", "honest-1": "4", "honest-2": "4", "honest-3": "4"}, []), \
        done.stderr


@needs_root
@needs_bwrap
def test_under_bubblewrap_no_attack_earns_and_classmates_keep_full_marks(marked_problems, tmp_path, private_tmp):
    problems, marker = marked_problems
    subs = submissions(tmp_path / "subs", [*USER_ATTACKS, "honest-1", "honest-2", "honest-3"])
    rows = grade_with(sys.executable, subs, tmp_path / "out", problems, "bubblewrap", private_tmp)
    assert_held(rows, tmp_path / "out", marker, private_tmp)


@pytest.mark.slow  # builds and runs the Gradescope bundle end to end
@needs_root
@pytest.mark.parametrize("attack", ["plant_symlinks", "daemon", "kill_everyone", "interrupt_the_grader",
                                    "zombie_leader", "remove_own_folder", "deep_dirs", "kernel_settings",
                                    "memory_in_tmpfs", "output_past_the_cap", "markup_at_import"])
def test_the_gradescope_bundle_at_the_user_level_keeps_its_score(gradescope, attack, private_tmp):  # noqa: F811
    _, root, user = gradescope
    if not user:
        pytest.skip("no Python here that an unprivileged user can run (Debian's python3) or not root")
    ROOT_CANARY.write_text("root's own file\n")
    try:
        data = run_autograder(root, user, {"adder.py": (ATTACKS / f"{attack}.py").read_bytes()},
                              JUDGE_SANDBOX="user", TMPDIR=str(private_tmp))
        assert data["score"] == 0
        page = rendered_markdown(data["output"] + "".join("\n\n" + t["output"] for t in data["tests"]))
        assert LEARNER_MARKUP not in page and "\x1b" not in json.dumps(data, ensure_ascii=False), page
        results = root / "results" / "results.json"
        assert results.stat().st_uid == 0 and not results.is_symlink()
        assert ROOT_CANARY.lstat().st_uid == 0 and ROOT_CANARY.read_text() == "root's own file\n"
    finally:
        ROOT_CANARY.unlink(missing_ok=True)
    honest = run_autograder(root, user, {"adder.py": HONEST.encode()}, JUDGE_SANDBOX="user", TMPDIR=str(private_tmp))
    assert honest["score"] == 4.0, honest  # graded right after: nothing of the attack's run survived into it
    assert nothing_left_behind(private_tmp) == []


def _looping(tmp: Path) -> bool:
    """Whether a process of the pool working in ``tmp`` has used half a second of CPU time (the looper)."""
    for uid in POOL:
        for pid in identities.processes_of(uid):
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if cwd.startswith(str(tmp)) and (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") > 0.5:
                return True
    return False


def stop_and_wait(started: subprocess.Popen, stop: signal.Signals) -> str:
    """Send ``stop`` to a running judge and wait for it to end: its standard error."""
    started.send_signal(stop)
    try:
        return started.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        started.kill()
        stderr = started.communicate()[1]
        pytest.fail(f"judge grade did not end within 60 s of {stop.name}; it wrote:\n{stderr[-3000:]}")


@needs_root
def test_a_timed_out_or_interrupted_run_leaves_nothing_behind(user_python, tmp_path, private_tmp):
    loop = ("import os, sys\nsys.modules['judge.sandbox.guard'].release()\ntry:\n    if os.fork() == 0:\n"
            "        os.setsid()\nexcept OSError:\n    pass  # seccomp refuses new processes where it is offered\n"
            "while True:\n    pass\n\ndef add(a, b):\n    return a + b\n")
    subs = tmp_path / "subs" / "looper" / "fx-add" / "adder.py"
    subs.parent.mkdir(parents=True)
    subs.write_text(loop)
    command = [user_python, "-m", "judge", "grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"),
               "--problems", str(FIXTURE_PROBLEMS), "--sandbox", "user", "--timeout", "1"]
    env = clean_env(TMPDIR=str(private_tmp))
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, cwd=ROOT, check=False)
    assert "looper" in (tmp_path / "out" / "grades.csv").read_text(), done.stderr
    assert nothing_left_behind(private_tmp) == [], "a time-out left processes or folders behind"
    started = subprocess.Popen([*FROM_A_TERMINAL, *command[:-2], "--timeout", "60", "--force"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    deadline = time.monotonic() + 120
    while not _looping(private_tmp) and time.monotonic() < deadline:
        time.sleep(0.1)  # until the looper's code runs (not another test's probe of the pool, nor a reference)
    assert _looping(private_tmp), "the looper's process never ran"
    stderr = stop_and_wait(started, signal.SIGINT)
    assert started.returncode == 130 and "interrupted" in stderr, (started.returncode, stderr[-3000:])
    assert nothing_left_behind(private_tmp) == [], "an interrupted run left processes or folders behind"


@needs_root
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_a_run_stopped_as_platforms_and_terminals_stop_it_leaves_nothing_behind(user_python, tmp_path, private_tmp,
                                                                                 stop):
    """SIGTERM is how a container, a CI job or a platform's time limit stops the judge; SIGHUP what a closed
    terminal sends. Either ends the run as Ctrl-C does: its jobs' processes and folders, and the judge's
    runtime folder, are gone (before, the judge died at once and left them)."""
    entry = tmp_path / "subs" / "looper" / "fx-add" / "adder.py"
    entry.parent.mkdir(parents=True)
    entry.write_text("def add(a, b):\n    while True:\n        pass\n")
    command = [user_python, "-m", "judge", "grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"),
               "--problems", str(FIXTURE_PROBLEMS), "--sandbox", "user", "--timeout", "60"]
    started = subprocess.Popen([*FROM_A_TERMINAL, *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=clean_env(TMPDIR=str(private_tmp)), cwd=ROOT)
    deadline = time.monotonic() + 120
    while not _looping(private_tmp) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _looping(private_tmp), "the looper's process never ran"
    stderr = stop_and_wait(started, stop)
    assert started.returncode == 130 and "interrupted" in stderr, (started.returncode, stderr[-3000:])
    assert nothing_left_behind(private_tmp) == [], f"a run stopped by {stop.name} left processes or folders behind"


@needs_root
def test_a_named_sandbox_user_grades_several_problems_with_several_jobs_asked_for(user_python, tmp_path, private_tmp):
    """A named user (``--sandbox-user``, as Gradescope's run_autograder gives) is one identity: with -j 2 the
    second job waited for it inside the loop that would have ended the first, 600 s, and then failed. Every
    Gradescope submission of two or more problems got no result at the user level (red team round 9, N1)."""
    problems = tmp_path / "problems"
    for pid in ("fx-add", "fx-two"):
        shutil.copytree(FIXTURE_PROBLEMS / "fx-add", problems / pid)
    toml = problems / "fx-two" / "problem.toml"
    toml.write_text(toml.read_text().replace('id = "fx-add"', 'id = "fx-two"'))
    for pid in ("fx-add", "fx-two"):
        (tmp_path / "subs" / "ann" / pid).mkdir(parents=True)
        (tmp_path / "subs" / "ann" / pid / "adder.py").write_text(HONEST)
    with throwaway_user() as user:  # not nobody: every job ends all its processes, another test's too
        command = [user_python, "-m", "judge", "grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"),
                   "--problems", str(problems), "--sandbox", "user", "--sandbox-user", user, "-j", "2"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=ROOT, check=False,
                                  env=clean_env(TMPDIR=str(private_tmp)))
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"judge grade waited for the named user's identity: {exc.stderr}")
    assert done.returncode == 0, done.stderr[-3000:]
    with (tmp_path / "out" / "grades.csv").open() as handle:
        [row] = csv.DictReader(handle)
    assert (row["fx-add"], row["fx-two"]) == ("4", "4"), row


@needs_root
def test_a_judge_killed_by_sigkill_leaves_no_test_process_judging_on_and_the_next_judge_removes_its_folders(
        user_python, tmp_path, private_tmp):
    """SIGKILL (the OOM killer, a platform's hard stop) gives the judge no clean-up. Its test processes went on
    judging as root with no CPU limit, and ended every process of their uid, which the next judge had taken for
    another student (red team round 9, A1). They now die with the judge, and so do their learner processes.
    Its folders stay, the learner's code in them, for the next learner given that uid to read where Landlock is
    missing: the next judge removes them before its first job."""
    entry = tmp_path / "subs" / "looper" / "fx-add" / "adder.py"
    entry.parent.mkdir(parents=True)
    entry.write_text("def add(a, b):\n    while True:\n        pass\n")
    command = [user_python, "-m", "judge", "grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"),
               "--problems", str(FIXTURE_PROBLEMS), "--sandbox", "user", "--timeout", "60"]
    started = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=clean_env(TMPDIR=str(private_tmp)), cwd=ROOT, start_new_session=True)
    deadline = time.monotonic() + 120
    while not _looping(private_tmp) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _looping(private_tmp), "the looper's process never ran"
    family = _descendants(started.pid)
    assert any(_owner(pid) == 0 for pid in family) and any(_owner(pid) in POOL for pid in family), family
    started.kill()
    started.wait()
    deadline = time.monotonic() + 10
    while [pid for pid in family if _alive(pid)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in family if _alive(pid)] == [], "processes of the killed judge's jobs are still running"
    left = sorted(p.name for p in private_tmp.iterdir() if p.name.startswith("judge-"))
    assert any(name.startswith("judge-job-") for name in left), left  # what the next judge must clear
    assert list(private_tmp.glob("judge-job-*/*/work/adder.py")), "the looper's code was not where it is expected"
    honest = tmp_path / "practice" / "fx-add" / "adder.py"
    honest.parent.mkdir(parents=True)
    honest.write_text((FIXTURE_PROBLEMS / "fx-add" / "reference" / "adder.py").read_text())
    done = subprocess.run([user_python, "-m", "judge", str(tmp_path / "practice"), "--problems", str(FIXTURE_PROBLEMS),
                           "--sandbox", "user"], capture_output=True, text=True, timeout=300,
                          env=clean_env(TMPDIR=str(private_tmp)), cwd=ROOT, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(p.name for p in private_tmp.iterdir() if p.name.startswith("judge-")) == []


@contextlib.contextmanager
def throwaway_user() -> Iterator[str]:
    """A system user of its own for one test, removed afterwards: a named sandbox user is the judge's alone."""
    name = f"pp-judge-{uuid.uuid4().hex[:8]}"
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    try:
        yield name
    finally:
        subprocess.run(["userdel", name], check=False)


def _descendants(root: int) -> list[int]:
    """Every live process below ``root``."""
    parents = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, IndexError):
                parents[int(name)] = int(Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = children
    return found


def _owner(pid: int) -> int:
    with contextlib.suppress(OSError):
        return os.stat(f"/proc/{pid}").st_uid
    return -1


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended: it waits only to be reaped)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@needs_root
def test_an_interrupted_run_with_a_job_prepared_ahead_leaves_nothing_behind(user_python, tmp_path, private_tmp):
    """At -j 1 on a machine of two cores or more the next job is prepared ahead (its learner process
    started, its module imported) while one runs: a Ctrl-C then ends both."""
    for name, source in (("looper", "def add(a, b):\n    while True:\n        pass\n"),
                         ("next", "import time\n\ntime.sleep(600)\n\n\ndef add(a, b):\n    return a + b\n")):
        entry = tmp_path / "subs" / name / "fx-add" / "adder.py"
        entry.parent.mkdir(parents=True)
        entry.write_text(source)
    command = [user_python, "-m", "judge", "grade", str(tmp_path / "subs"), "-o", str(tmp_path / "out"),
               "--problems", str(FIXTURE_PROBLEMS), "--sandbox", "user", "--timeout", "60", "-j", "1"]
    started = subprocess.Popen([*FROM_A_TERMINAL, *command], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=clean_env(TMPDIR=str(private_tmp)), cwd=ROOT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # both learners' processes up: the looper's, and the one prepared ahead
        busy = [uid for uid in POOL if identities.processes_of(uid)]
        if len(busy) >= 2 or started.poll() is not None:
            break
        time.sleep(0.1)
    assert len(busy) >= 2, f"no job was prepared ahead: learner processes of {busy}"
    stop_and_wait(started, signal.SIGINT)
    assert nothing_left_behind(private_tmp) == [], "an interrupted run left processes or folders behind"


@needs_root
def test_the_pool_gives_each_concurrent_job_its_own_identity_and_ends_its_processes():
    sandbox = levels.Sandbox("user", sys.executable, levels.runtime_folder())
    first, second = levels.acquire_identity(sandbox), levels.acquire_identity(sandbox)
    assert first is not None and second is not None and first.uid != second.uid
    assert first.uid in POOL and second.uid in POOL
    sleeper = subprocess.Popen(["sleep", "600"], user=first.uid, group=first.gid, extra_groups=[],
                               start_new_session=True)
    try:
        assert identities.processes_of(first.uid) == [sleeper.pid]
        identities.release(first)
        assert sleeper.wait(timeout=10) == -signal.SIGKILL and identities.processes_of(first.uid) == []
    finally:
        identities.release(second)
        if sleeper.poll() is None:
            sleeper.kill()


CONFINED_PROBE = r'''
import errno, os, shutil, subprocess, sys, tempfile
from judge.sandbox import confine, identities, levels

sandbox = levels.choose("user", grading=True)
identity = levels.acquire_identity(sandbox)
folder = tempfile.mkdtemp(prefix="judge-job-", dir=os.path.dirname(sandbox.runtime))
os.chmod(folder, 0o711)
rules = confine.Confinement(sandbox.readable, folder, confine.offered())
work = os.path.join(folder, "work")
os.mkdir(work)
os.chown(work, identity.uid, identity.gid)
probe = """
import ctypes, os, socket, sys
def attempt(what, act):
    try:
        act()
        print(what, "allowed")
    except OSError as exc:
        print(what, "refused", exc.errno)
attempt("read", lambda: open(sys.argv[1]).read())
attempt("socket", lambda: socket.socket())
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", "refused" if libc.ptrace(0, 0, 0, 0) != 0 else "allowed")
attempt("write-own", lambda: open("mine.txt", "w").write("x"))
sync = {"x86_64": 162, "aarch64": 81}[os.uname().machine]  # pidfd_open is 434 on both
for name, call in (("inotify", lambda: libc.inotify_init1(0)), ("pidfd", lambda: libc.syscall(434, 1, 0)),
                   ("sync", lambda: libc.syscall(sync))):
    print(name, "refused" if call() < 0 and ctypes.get_errno() == 1 else "allowed")
"""
done = subprocess.run([sandbox.python, "-I", "-S", "-c", probe, sys.argv[1]], capture_output=True, text=True,
                      user=identity.uid, group=identity.gid, extra_groups=[], preexec_fn=rules.enter, cwd=work)
identities.release(identity)
shutil.rmtree(folder)  # the probe's own job folder (one was left in the temporary folder by every run)
print(done.stdout + done.stderr)
'''


@needs_root
def test_landlock_and_seccomp_refuse_what_the_user_level_never_needs(user_python, marked_problems):
    if not (confine.offered().landlock and confine.offered().seccomp):
        pytest.fail("this machine's kernel offers Landlock and seccomp: the test must see them work")
    problems, _ = marked_problems
    world_readable = next(Path("/var/tmp").glob("pp-course-copy-*")) / "problems" / "fx-add" / "tests" / "public"
    target = next(world_readable.glob("*.py"))
    done = subprocess.run([user_python, "-c", CONFINED_PROBE, str(target)], capture_output=True, text=True,
                          env=clean_env(), cwd="/", timeout=120, check=False)
    lines = set(done.stdout.split("\n"))
    assert {"read refused 13", "socket refused 1", "ptrace refused", "write-own allowed", "inotify refused",
            "pidfd refused", "sync refused"} <= lines, done.stdout


@needs_root
@pytest.mark.parametrize("level, confine", [("user", "seccomp"), ("user", ""), ("bubblewrap", "")],
                         ids=["user-without-landlock", "user", "bubblewrap"])
def test_fake_abandoned_folders_in_a_shared_temporary_folder_remove_nothing_of_root(user_python, marked_problems,
                                                                                  tmp_path, level, confine):
    """The next judge removes the judge folders whose judge is gone (``trees.remove_abandoned``). In a temporary
    folder every user may write (``/tmp`` on the platforms), a learner makes folders that look abandoned, with
    links to the root-owned canary and to classmates' job folders, and links named like judge folders: the
    next judge removes none of them and nothing they point at, and the classmates keep full marks. With Landlock
    (and under bubblewrap, whose /tmp is the learner's own) the learner cannot write there at all."""
    problems, _ = marked_problems
    shared = Path(tempfile.mkdtemp(prefix="pp-shared-tmp-", dir="/var/tmp"))
    shared.chmod(0o1777)  # sticky and world-writable, as /tmp is
    ROOT_CANARY.write_text("root's own file\n")
    try:
        subs = submissions(tmp_path / "subs", ["fake_abandoned_folders", "honest-1", "honest-2"])
        env = {"JUDGE_CONFINE": confine} if confine else {}
        rows = grade_with(user_python, subs, tmp_path / "out", problems, level, shared, **env)
        assert {name: row["total"] for name, row in rows.items()} == {
            "fake_abandoned_folders": "0", "honest-1": "4", "honest-2": "4"}
        # whatever it planted went with its identity's files at the end of its job (and a pool identity's files
        # go again when a judge takes it); the sweep's own defence is shown on the same things left by a user
        # outside the pool, beside a root folder whose judge is gone
        assert [p for p in shared.glob("judge-*") if p.is_symlink() or p.lstat().st_uid != 0] == []
        planted = _plant_fake_judge_folders(shared, 65534)
        gone = shared / "judge-job-gone"
        gone.mkdir(mode=0o711)
        (gone / trees.ALIVE).touch()  # a dead judge's job folder: its lock file, held by no one
        again = submissions(tmp_path / "again", ["honest-3"])
        rows = grade_with(user_python, again, tmp_path / "out-again", problems, level, shared, **env)
        assert rows["honest-3"]["total"] == "4"
        assert ROOT_CANARY.lstat().st_uid == 0 and ROOT_CANARY.read_text() == "root's own file\n"
        assert all(os.path.lexists(p) for p in planted), "the sweep removed a folder or link it did not make"
        assert not gone.exists(), "the dead judge's folder was not removed"
        assert [p.name for p in shared.glob("judge-*") if not p.is_symlink() and p.lstat().st_uid == 0] == []
    finally:
        ROOT_CANARY.unlink(missing_ok=True)
        subprocess.run(["rm", "-rf", "--", str(shared)], check=False)


def _plant_fake_judge_folders(parent: Path, uid: int) -> list[Path]:
    """What a learner's code would leave, as ``uid``'s: a folder that looks abandoned (the lock file, no one
    holding it) with links to the root canary, and a link named like a judge folder to the canary."""
    fake = parent / "judge-fake"
    fake.mkdir()
    (fake / trees.ALIVE).touch()
    (fake / "victim").symlink_to(ROOT_CANARY)
    (parent / "judge-link").symlink_to(ROOT_CANARY)
    made = [fake, fake / trees.ALIVE, fake / "victim", parent / "judge-link"]
    for path in made:
        os.lchown(path, uid, uid)
    return made


@needs_root
def test_classmates_judged_while_a_learner_holds_the_temporary_folder_full_keep_full_marks(user_python, tmp_path):
    """tests/test_temporary_folder.py's attack at the user level: a learner fills the run's temporary folder (a
    small file system of its own) and holds it while two classmates are judged beside it: they keep 4 of 4."""
    problems = tmp_path / "problems"
    shutil.copytree(FIXTURE_PROBLEMS / "fx-add", problems / "fx-add")
    for name, code in (("aa-hog", HOG), ("honest-1", HONEST), ("honest-2", HONEST + "\n# two\n")):
        (tmp_path / "subs" / name / "fx-add").mkdir(parents=True)
        (tmp_path / "subs" / name / "fx-add" / "adder.py").write_text(code)
    small = Path(tempfile.mkdtemp(prefix="pp-user-level-small-"))  # the identities pass its parents (not tmp_path's)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0711", "tmpfs", str(small)], check=True)
    try:
        rows = grade_with(user_python, tmp_path / "subs", tmp_path / "out", problems, "user", small)
        assert {name: row["total"] for name, row in rows.items()} == {"aa-hog": "0", "honest-1": "4", "honest-2": "4"}
        assert nothing_left_behind(small) == []
    finally:
        subprocess.run(["umount", "-l", str(small)], check=False)
        small.rmdir()
