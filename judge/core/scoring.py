"""Points: what each objective, test and problem is worth, and what a Result earned.

A problem declares ``points`` (what it is worth), ``scoring`` and, usually, its learning objectives
(``[[objectives]]`` in problem.toml, :class:`judge.core.problem.Objective`): each objective carries
points, and every test belongs to one. Within an objective a test weighs its
``@pytest.mark.points(W)`` weight (default 1). An objective earns its points in proportion to the
weight of its tests that passed (or all of them only when all passed, with ``scoring =
"all-or-nothing"`` on the objective); one that ``requires`` others is scaled by the share of their
points they earned, so argument checks count only as far as the function is right on valid input,
and code that raises for every input earns nothing for raising. A test's points are its share of
its objective's. Problem-level policies:

- ``proportional`` (default): the objectives' points as above;
- ``all-or-nothing``: the problem's points when every test passed, else 0.

A problem without objectives is one objective of all its tests (the points are the tests'). A
skipped test is not passed. A run that produced no test results (timeout, crash) earns 0. Runs in
both engines.

A run scores over what it can earn: an objective none of whose tests is in the run (the secret
tests were left out: the browser, ``--public-only``, GitHub Classroom's default export) does not
count. It is left out of the Result's objectives, the others' points are scaled up to add up to
the problem's points, and a requirement on it is dropped, so a reference solution earns full
points on the public tests alone. A run whose tests did not all load (a test file that failed
to import) is scored over every objective instead: missing tests never make a problem easier.

:func:`score_result` scores a Result on the tests it ran. :func:`rescore` scores it against a
canonical Result (the reference solution's, with every test), which is what class grading uses:
a test that did not run in the learner's run (its file did not load) still counts, as failed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Real
from typing import TYPE_CHECKING

from ..lang import language, say
from .kinds import ObjectiveKind, Policy
from .result import ObjectiveResult, Result, TestResult

if TYPE_CHECKING:
    from .problem import Problem

PROPORTIONAL: Policy = "proportional"
ALL_OR_NOTHING: Policy = "all-or-nothing"
MARKER = "points"
MARKER_HELP = "points(weight): the test's weight for scoring (default 1)"
OBJECTIVE_MARKER = "objective"
OBJECTIVE_MARKER_HELP = "objective(id): the learning objective the test belongs to (default: problem.toml's patterns)"
NOTE_CAP = 160  # characters of an objective's note


def marker_weight(args: tuple, kwargs: dict) -> float:
    """The weight given by ``@pytest.mark.points(W)``; ValueError when it is not one number >= 0."""
    values = list(args) + list(kwargs.values())
    if len(values) != 1 or isinstance(values[0], bool) or not isinstance(values[0], Real) or values[0] < 0:
        raise ValueError(f"@pytest.mark.points takes one number >= 0, got {values!r}")
    return float(values[0])


@dataclass
class _Objective:
    id: str
    title: str
    points: float
    kind: ObjectiveKind = "concept"
    requires: list[str] = field(default_factory=list)
    scoring: Policy = PROPORTIONAL


@dataclass
class _Plan:
    """What every test weighs and which objective it is in; the objectives in scoring order."""

    tests: dict[str, tuple[float, str]]  # test id -> (weight, objective id)
    objectives: list[_Objective]
    declared: bool  # False: the problem declares no objectives (one implicit objective)


def score_result(result: Result, weights: dict[str, float], problem: Problem) -> Result:
    """Set the points of ``result``, its objectives and its tests (weights by test id, default 1)."""
    for test in result.tests:
        weights.setdefault(test.id, 1.0)
    tests = {t.id: (weights[t.id], t.objective) for t in result.tests}
    if problem.objectives:
        objectives = [_Objective(o.id, o.title_in(language()), o.points, o.kind, list(o.requires), o.scoring)
                      for o in problem.objectives]
        plan = _Plan(tests, objectives, True)
        if result.status in ("passed", "failed"):  # every collected test ran: score over what it can earn
            plan = counted_plan(plan)
        return _apply(result, plan, problem.scoring)
    return _apply(result, _implicit(tests, problem.points), problem.scoring)


def rescore(result: Result, canonical: Result, problem: Problem) -> Result:
    """Score ``result`` against every test and objective of ``canonical`` (a test missing from ``result``
    earns nothing, and still counts). Titles and notes are in the learner's language
    (:func:`judge.lang.language`: call it inside :func:`judge.lang.tests_language`)."""
    tests = {t.id: (t.max_points, t.objective) for t in canonical.tests}
    if canonical.objectives:
        titles = {o.id: o.title for o in canonical.objectives} | {o.id: o.title_in(language())
                                                                  for o in problem.objectives}
        objectives = [_Objective(o.id, titles[o.id], o.max_points, o.kind, list(o.requires), o.scoring)
                      for o in canonical.objectives]
        for test in result.tests:
            if test.id in tests:
                test.objective = tests[test.id][1]
        return _apply(result, counted_plan(_Plan(tests, objectives, True)), problem.scoring)
    points = problem.points if problem.points is not None else sum(w for w, _ in tests.values())
    return _apply(result, _implicit(tests, points), problem.scoring)


def counted_plan(plan: _Plan) -> _Plan:
    """``plan`` without the objectives that have no test in it, the others scaled to the same total points,
    their requirements on the left-out ones dropped (unchanged when every objective has a test, or none has)."""
    owners = {owner for _, owner in plan.tests.values()}
    kept = [o for o in plan.objectives if o.id in owners]
    if len(kept) == len(plan.objectives) or not kept:
        return plan
    whole, part = sum(o.points for o in plan.objectives), sum(o.points for o in kept)
    scale = whole / part if part else 0.0
    ids = {o.id for o in kept}
    scaled = [_Objective(o.id, o.title, o.points * scale, o.kind, [r for r in o.requires if r in ids], o.scoring)
              for o in kept]
    return _Plan(plan.tests, scaled, plan.declared)


def uncounted(result: Result, problem: Problem) -> list[str]:
    """The ids of ``problem``'s objectives that ``result`` was not scored on (no test of theirs in its run)."""
    scored = {o.id for o in result.objectives}
    return [o.id for o in problem.objectives if o.id not in scored] if result.objectives else []


def _implicit(tests: dict[str, tuple[float, str]], points: float | None) -> _Plan:
    total = sum(w for w, _ in tests.values())
    worth = float(points) if points is not None else total
    return _Plan({i: (w, "") for i, (w, _) in tests.items()}, [_Objective("", "", worth)], False)


def _apply(result: Result, plan: _Plan, policy: Policy) -> Result:
    ran = result.status != "timeout" and bool(result.tests)
    everything = result.status == "passed" and ran
    by_objective: dict[str, list[str]] = {}
    for ident, (_, owner) in plan.tests.items():
        by_objective.setdefault(owner, []).append(ident)
    outcomes = {t.id: t.outcome for t in result.tests}
    earned: dict[str, float] = {}
    scored: list[ObjectiveResult] = []
    for objective in _in_order(plan.objectives):
        members = by_objective.get(objective.id, [])
        total = sum(plan.tests[i][0] for i in members)
        passed = sum(plan.tests[i][0] for i in members if outcomes.get(i) == "passed")
        fraction = (passed / total if objective.scoring == PROPORTIONAL else float(passed == total)) \
            if ran and total else 0.0
        factor = _factor(objective, plan.objectives, earned)
        if policy == ALL_OR_NOTHING:
            fraction, factor = float(everything), 1.0
        earned[objective.id] = objective.points * fraction * factor
        whole = everything if policy == ALL_OR_NOTHING else (objective.scoring == PROPORTIONAL or passed == total)
        _score_tests(result.tests, set(members), objective.points, plan, total, factor,
                     ran and whole, policy == ALL_OR_NOTHING)
        scored.append(ObjectiveResult(
            id=objective.id, title=objective.title, points=_round(earned[objective.id]),
            max_points=_round(objective.points), passed=sum(outcomes.get(i) == "passed" for i in members),
            total=len(members), kind=objective.kind, requires=list(objective.requires), scoring=objective.scoring,
            note=_note(result, objective, members, factor, plan.objectives, earned)))
    for test in result.tests:
        if test.id not in plan.tests:
            test.max_points = test.points = 0.0
    result.objectives = _declared_order(scored, plan.objectives) if plan.declared else []
    result.max_points = _round(sum(o.points for o in plan.objectives))
    result.points = _round(sum(earned.values()))
    return result


def _score_tests(tests: list[TestResult], members: set[str], points: float, plan: _Plan, total: float,
                 factor: float, may_count: bool, whole_problem: bool) -> None:
    """Each test's share of its objective's points, and what it earned: its share (scaled by the
    objective's requirements) when it passed and its objective or problem counts it."""
    for test in tests:
        if test.id in members:
            test.max_points = _round(points * plan.tests[test.id][0] / total) if total else 0.0
            passed = whole_problem or test.outcome == "passed"
            test.points = _round(test.max_points * factor) if may_count and passed else 0.0


def _factor(objective: _Objective, objectives: list[_Objective], earned: dict[str, float]) -> float:
    """The share of their points that the objectives ``objective`` requires earned (1 without any)."""
    if not objective.requires:
        return 1.0
    worth = sum(o.points for o in objectives if o.id in objective.requires)
    return sum(earned.get(r, 0.0) for r in objective.requires) / worth if worth else 0.0


def _note(result: Result, objective: _Objective, members: list[str], factor: float,
          objectives: list[_Objective], earned: dict[str, float]) -> str:
    """Why points were lost: the first failing public test's first line (never a secret test's), a
    run that did not finish, or what the objective waits for (each required objective shown as right
    or with the share of it earned)."""
    wanted = set(members)
    failing = [t for t in result.tests if t.id in wanted and t.outcome != "passed"]
    public = next((t for t in failing if t.visibility != "secret"), None)
    if public is not None:
        first = (public.message or public.outcome).strip().splitlines()
        return _cut(first[0] if first else public.outcome)
    if failing:  # a secret test's message is shown only where secret tests are (judge grade's feedback)
        return say("a secret test did not pass", zh="有一个隐藏测试没有通过")
    if members and not (result.tests and result.status != "timeout"):
        return _cut((result.message or result.status).strip().splitlines()[0] if (result.message or result.status)
                    else say("no test ran", zh="没有测试运行"))
    if factor < 1.0:
        return _cut(waiting_note([o.title for o in objectives if o.id in objective.requires
                                  and earned.get(o.id, 0.0) < o.points - 1e-9]))
    return ""


def waiting_note(waiting: list[str]) -> str:
    """The note of an objective whose tests pass but which counts only as far as ``waiting`` (the titles
    of the objectives it requires that are not right yet) are: the page says the same (web/js/results.js)."""
    # the judge's words in a Result come with their translations here: both engines make them, and the
    # browser's Python has no message catalog (docs/i18n.md)
    return say("right; it counts in full once {objectives} is right",
               zh="正确；等 {objectives} 也正确后才全部计分").format(objectives=say(", ", zh="、").join(waiting))


def _cut(text: str) -> str:
    return text if len(text) <= NOTE_CAP else text[:NOTE_CAP - 1] + "…"


def _in_order(objectives: list[_Objective]) -> list[_Objective]:
    """The objectives with each one after those it requires (the declared order otherwise)."""
    placed: list[_Objective] = []
    remaining = list(objectives)
    while remaining:
        ready = [o for o in remaining if all(r in {p.id for p in placed} for r in o.requires)
                 or not set(o.requires) & {r.id for r in remaining}]
        if not ready:  # a cycle (refused when problem.toml loads): score in the declared order
            ready = remaining[:1]
        placed.append(ready[0])
        remaining.remove(ready[0])
    return placed


def _declared_order(scored: list[ObjectiveResult], objectives: list[_Objective]) -> list[ObjectiveResult]:
    position = {o.id: i for i, o in enumerate(objectives)}
    return sorted(scored, key=lambda o: position[o.id])


def _round(value: float) -> float:
    return round(value + 0.0, 4)
