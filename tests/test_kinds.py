"""The closed types of judge.core.kinds are the Result schema's words, and the sandbox's levels are among them."""

from __future__ import annotations

import json

import pytest

from judge.core import kinds
from judge.core.result import Result
from judge.sandbox.levels import LEVELS
from tests.conftest import ROOT

SCHEMA = json.loads((ROOT / "judge" / "core" / "schema" / "result.schema.json").read_text())
TEST = SCHEMA["$defs"]["test"]["properties"]
OBJECTIVE = SCHEMA["$defs"]["objective"]["properties"]


@pytest.mark.parametrize(("words", "enum"), [
    (kinds.STATUSES, SCHEMA["properties"]["status"]["enum"]),
    (kinds.OUTCOMES, TEST["outcome"]["enum"]),
    (kinds.VISIBILITIES, TEST["visibility"]["enum"]),
    (("", *kinds.SANDBOXES), SCHEMA["properties"]["sandbox"]["enum"]),
    (kinds.OBJECTIVE_KINDS, OBJECTIVE["kind"]["enum"]),
    (kinds.POLICIES, OBJECTIVE["scoring"]["enum"]),
], ids=["status", "outcome", "visibility", "sandbox", "objective kind", "policy"])
def test_a_closed_type_holds_the_schemas_words(words, enum):
    assert sorted(words) == sorted(enum)


def test_every_sandbox_level_is_a_word_a_result_may_record():
    assert set(LEVELS) <= set(kinds.SANDBOXES)


def test_a_result_of_each_status_reads_back_from_its_json():
    for status in kinds.STATUSES:
        result = Result.unjudged("p", status, "why")
        assert Result.from_dict(json.loads(result.to_json())).status == status
