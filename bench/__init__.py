"""Benchmarks: ratios measured side by side in one run (absolute times on shared machines are noisy)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


def report(data: dict[str, Any], print_table: Callable[[dict[str, Any]], None], json_path: Path | None) -> None:
    """Print a benchmark's table and, when asked, write its figures as JSON (making the folder)."""
    print_table(data)
    if json_path:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(data, indent=2) + "\n")
