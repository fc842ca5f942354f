"""Points: what each test and each problem is worth, and what a Result earned.

A problem declares ``points`` (what it is worth) and ``scoring`` in problem.toml; a test may carry a
weight with the ``@pytest.mark.points(W)`` marker (default weight 1). A test is worth its weight
scaled so that the problem's tests add up to the problem's points (without declared points, a
problem is worth the sum of its weights: one point per unmarked test). Scoring policies:

- ``proportional`` (default): the points of the tests that passed;
- ``all-or-nothing``: the problem's points when every test passed, else 0.

A run that produced no test results (timeout, crash, tampering) earns 0. Runs in both engines.

:func:`score_result` scores a Result on the tests it ran. :func:`rescore` scores it against a
canonical Result (the reference solution's, with every test), which is what class grading uses:
a test file that did not load in the learner's run then still counts for its full weight.
"""

from __future__ import annotations

from numbers import Real

from .result import Result

PROPORTIONAL, ALL_OR_NOTHING = "proportional", "all-or-nothing"
POLICIES = (PROPORTIONAL, ALL_OR_NOTHING)
MARKER = "points"
MARKER_HELP = "points(weight): the test's weight for scoring (default 1)"


def marker_weight(args: tuple, kwargs: dict) -> float:
    """The weight given by ``@pytest.mark.points(W)``; ValueError when it is not one number >= 0."""
    values = list(args) + list(kwargs.values())
    if len(values) != 1 or isinstance(values[0], bool) or not isinstance(values[0], Real) or values[0] < 0:
        raise ValueError(f"@pytest.mark.points takes one number >= 0, got {values!r}")
    return float(values[0])


def score_result(result: Result, weights: dict[str, float], points: float | None, policy: str) -> Result:
    """Set the points of ``result`` and of its tests from the tests' ``weights`` (by test id)."""
    for test in result.tests:
        weights.setdefault(test.id, 1.0)
    return _apply(result, {t.id: weights[t.id] for t in result.tests}, points, policy)


def rescore(result: Result, canonical: Result, points: float | None, policy: str) -> Result:
    """Score ``result`` against every test of ``canonical`` (a tests missing from ``result`` earns 0)."""
    weights = {t.id: t.max_points for t in canonical.tests}
    return _apply(result, weights, points if points is not None else sum(weights.values()), policy)


def _apply(result: Result, weights: dict[str, float], points: float | None, policy: str) -> Result:
    total_weight = sum(weights.values())
    worth = float(points) if points is not None else total_weight
    scale = worth / total_weight if total_weight else 0.0
    ran = result.status != "timeout" and bool(result.tests)
    earned_all = result.status == "passed" and ran
    earned = 0.0
    for test in result.tests:
        test.max_points = _round(weights.get(test.id, 0.0) * scale)
        if policy == ALL_OR_NOTHING:
            test.points = test.max_points if earned_all else 0.0
        else:
            test.points = test.max_points if ran and test.outcome == "passed" else 0.0
        earned += weights.get(test.id, 0.0) * scale if test.points else 0.0
    result.max_points = _round(worth)
    result.points = _round(worth if policy == ALL_OR_NOTHING and earned_all else
                           (earned if policy == PROPORTIONAL and ran else 0.0))
    return result


def _round(value: float) -> float:
    return round(value + 0.0, 4)
