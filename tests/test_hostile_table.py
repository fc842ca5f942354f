"""docs/hostile-input.md's table and the hostile fixtures stay in sync (native column = golden)."""

from __future__ import annotations

import json

from tests.conftest import ROOT, SOLUTIONS


def hostile_table() -> dict[str, dict[str, str]]:
    """The rows of the broken-code table in docs/hostile-input.md, by fixture name."""
    rows = {}
    text = (ROOT / "docs" / "hostile-input.md").read_text()
    section = text.split("## Broken code, natively and in the browser", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0].startswith("`"):
            fixture, _, native, browser, same, _ = cells
            rows[fixture.strip("`")] = {"native": native, "browser": browser, "same": same}
    return rows


def test_every_fixture_has_a_row_and_every_row_a_fixture():
    assert sorted(hostile_table()) == sorted(p.stem for p in SOLUTIONS.glob("*.py"))


def test_native_column_matches_the_golden_results():
    for fixture, row in hostile_table().items():
        golden = json.loads((ROOT / "tests" / "golden" / f"{fixture}.json").read_text())
        assert golden["status"] == row["native"], f"{fixture}: docs say {row['native']}, golden says {golden['status']}"
