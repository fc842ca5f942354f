"""The judge's closed vocabularies: every word a Result, a problem or a score may hold, as a type.

Each is a ``Literal`` (mypy rejects a typo where one is expected) and a tuple of its values, derived
from it, for the checks made at run time (a problem.toml's field, a Result read from JSON). The words
are the Result's JSON as it is (``judge/core/schema/result.schema.json``); translating one is the
reports' business (they mark these words with ``N_``), never this module's. Runs in both engines.
"""

from __future__ import annotations

from typing import Literal, get_args

#: a Result's status: every test passed, some failed, the code could not be judged, the time limit hit
Status = Literal["passed", "failed", "error", "timeout"]
#: one test's outcome (``error``: in setup or teardown, a file that did not load, a test never finished)
Outcome = Literal["passed", "failed", "error", "skipped"]
#: who sees a test: the learner (``public``) or only the grader (``secret``)
Visibility = Literal["public", "secret"]
#: where the learner's code ran: a learner process at one of ``judge.sandbox.levels.Level``, or the
#: browser's one interpreter
SandboxLevel = Literal["bubblewrap", "user", "plain", "browser"]
#: how an objective (or a whole problem) turns the tests that passed into points (``judge.core.scoring``)
Policy = Literal["proportional", "all-or-nothing"]
#: what an objective teaches: the idea itself, argument checks, or return-type details
ObjectiveKind = Literal["concept", "checks", "types"]

STATUSES: tuple[Status, ...] = get_args(Status)
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)
VISIBILITIES: tuple[Visibility, ...] = get_args(Visibility)
SANDBOXES: tuple[SandboxLevel, ...] = get_args(SandboxLevel)
POLICIES: tuple[Policy, ...] = get_args(Policy)
OBJECTIVE_KINDS: tuple[ObjectiveKind, ...] = get_args(ObjectiveKind)
