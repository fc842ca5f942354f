"""Dump torch's DualPipeV orders to a JSON fixture and compare pp-dualpipe's reference with them.

Not a test (pytest collects only ``test_*.py``): torch is no dependency of this project and does not
run in Pyodide. Run it by hand in a throwaway virtual environment that has torch, for example

    python -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch==2.13.0+cpu
    PYTHONPATH=. /tmp/torchvenv/bin/python tests/problems/dualpipev_torch_check.py --write

``--write`` rewrites ``tests/problems/fixtures/dualpipev_torch_orders.json``; without it the script
only compares. ``tests/problems/test_pp_dualpipe.py`` compares the reference with the committed
fixture on every run of the suite.

How the orders are obtained: ``torch.distributed.pipelining.ScheduleDualPipeV`` is built for real
(its ``__init__`` runs, including its own validation and the lowering to send/recv actions) from
stand-in stage objects that carry only the attributes the constructor reads, so no process group
is needed. ``pipeline_order[rank]`` is its per-rank list of compute actions.

Encoding in the fixture (one string per rank, actions separated by spaces):
``F<mb>s<stage>``, ``I<mb>s<stage>``, ``W<mb>s<stage>``, ``B<mb>s<stage>`` (full backward), and an
overlapped pair ``F<mb>s<stage>&B<mb>s<stage>`` (forward first, as torch lists its sub-actions).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "dualpipev_torch_orders.json"
REFERENCE = ROOT / "problems" / "pp-dualpipe" / "reference" / "dualpipe.py"


def grid() -> list[tuple[int, int]]:
    """(p, m): p = 1..8, m = 2p .. 2p + 6 and a few larger m."""
    out = []
    for p in range(1, 9):
        ms = set(range(2 * p, 2 * p + 7)) | {3 * p + 1, 4 * p, 5 * p + 3, 6 * p + 1}
        if p <= 4:
            ms |= {24, 33}
        out += [(p, m) for m in sorted(ms)]
    return out


class _StandInStage:
    """The attributes ScheduleDualPipeV's constructor reads from a pipeline stage, and nothing else."""

    def __init__(self, stage_index: int, num_stages: int, group_rank: int, group_size: int):
        self.stage_index = stage_index
        self.num_stages = num_stages
        self.group_rank = group_rank
        self.group_size = group_size
        self.submod = None  # not an nn.Module: the torch.compile check skips it
        self.is_first = stage_index == 0
        self.is_last = stage_index == num_stages - 1
        self.stage_index_to_group_rank: dict[int, int] = {}


def torch_orders(p: int, m: int) -> list[str]:
    from torch.distributed.pipelining.schedules import ScheduleDualPipeV

    stages = [_StandInStage(s, 2 * p, 0, p) for s in (0, 2 * p - 1)]
    sched = ScheduleDualPipeV(stages, n_microbatches=m, loss_fn=None)
    return [" ".join(_encode(a) for a in sched.pipeline_order[r] if a is not None) for r in range(p)]


def _encode(action) -> str:
    if action.sub_actions is not None:
        assert action.computation_type.value == "OVERLAP_F_B", action
        return "&".join(_encode(a) for a in action.sub_actions)
    kind = action.computation_type.value
    assert kind in ("F", "B", "I", "W"), action
    return f"{kind}{action.microbatch_index}s{action.stage_index}"


def encode_reference(sched) -> list[str]:
    def one(a) -> str:
        if isinstance(a[0], (tuple, list)):
            return "&".join(one(x) for x in a)
        kind, mb, stage = a
        return f"{kind}{mb}s{stage}"

    return [" ".join(one(a) for a in row) for row in sched]


def load_reference():
    spec = importlib.util.spec_from_file_location("_pp_dualpipe_reference", REFERENCE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the JSON fixture from torch")
    args = parser.parse_args()
    import torch

    orders = {f"{p},{m}": torch_orders(p, m) for p, m in grid()}
    rejected = {}
    for p in range(1, 9):
        try:
            torch_orders(p, 2 * p - 1)
        except ValueError as exc:
            rejected[f"{p},{2 * p - 1}"] = str(exc)
        else:
            print(f"torch accepted p={p}, m={2 * p - 1}", file=sys.stderr)
    if args.write:
        FIXTURE.parent.mkdir(parents=True, exist_ok=True)
        data = {"torch_version": torch.__version__, "source": "torch.distributed.pipelining.ScheduleDualPipeV.pipeline_order",
                "encoding": "per rank, space-separated: F<mb>s<stage>, I.., W.., B.. (full backward), "
                            "pair F<mb>s<stage>&B<mb>s<stage>",
                "orders": orders, "rejected": rejected}
        FIXTURE.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
        print(f"wrote {len(orders)} orders (torch {torch.__version__}) to {FIXTURE.relative_to(ROOT)}")
    ref = load_reference()
    bad = []
    for key, want in orders.items():
        p, m = map(int, key.split(","))
        if encode_reference(ref.dualpipev_schedule(p, m)) != want:
            bad.append(key)
    for key in rejected:
        p, m = map(int, key.split(","))
        try:
            ref.dualpipev_schedule(p, m)
            bad.append(f"{key} (reference accepts what torch rejects)")
        except ValueError:
            pass
    print(f"torch {torch.__version__}: {len(orders) - len([b for b in bad if '(' not in b])} of {len(orders)} (p, m) "
          f"match the reference; {len(rejected)} m = 2p - 1 rejected by both" + (f"; MISMATCH: {bad}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
