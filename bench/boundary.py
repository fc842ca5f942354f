"""Boundary benchmark: what the trust boundary costs, per value, per call and per problem.

Side by side in one run:

- the codec: encoding and decoding (to JSON text and back) of the values the problems pass, in
  microseconds, against ``json.dumps`` / ``json.loads`` of the same plain structure;
- a call across the boundary (``add(i, 1)`` on the learner's module) at every sandbox level that
  works here (a learner process under bubblewrap, as the unprivileged user, plain) and in one
  interpreter (the browser's transport), against the same call made directly;
- per problem: the messages its reference's run exchanges (calls, generator steps, calls back into
  lent objects) and the share of the run's time they cost (messages x the call's round trip).

    python -m bench.boundary [--problems DIR] [--calls N] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench import report  # noqa: E402
from judge.core import codec, protocol  # noqa: E402
from judge.core.problem import Problem, discover_problems, load_problem  # noqa: E402
from judge.core.runner import judge_source  # noqa: E402
from judge.sandbox import levels, standin  # noqa: E402
from judge.sandbox.inprocess import InProcessLearner  # noqa: E402
from judge.sandbox.process import ProcessLearner  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "problems" / "fx-add"
ADD = "def add(a, b):\n    return a + b\n"
VALUES: dict[str, Any] = {
    "an int": 7,
    "a 1F1B schedule, p = 8, m = 16 (8 lists of 32 (str, int) tuples)":
        [[("F", i) for i in range(16)] + [("B", i) for i in range(16)] for _ in range(8)],
    "a dict of 64 str -> float": {f"k{i}": i / 3 for i in range(64)},
    "a Fraction": Fraction(3, 7),
    "a 64 x 64 float64 array": np.arange(64 * 64, dtype=np.float64).reshape(64, 64),
}


def _per_call_us(run: Callable[[], Any], repeats: int) -> float:
    """The median of 5 timings of ``repeats`` calls, in microseconds per call."""
    times = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeats):
            run()
        times.append((time.perf_counter() - started) / repeats * 1e6)
    return statistics.median(times)


def _plain_twin(value: Any) -> Any:
    """The same structure as plain JSON (what json alone would cost: no tags, no types kept)."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Fraction):
        return [value.numerator, value.denominator]
    if isinstance(value, (list, tuple)):
        return [_plain_twin(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain_twin(v) for k, v in value.items()}
    return value


def _encode(encoder: codec.Encoder, value: Any) -> str:
    return codec.dumps(encoder.encode(value))


def _json_round_trip(value: Any) -> Any:
    return json.loads(json.dumps(value))


def measure_codec(repeats: int = 200) -> list[dict[str, Any]]:
    rows = []
    for label, value in VALUES.items():
        encoder, decoder = codec.Encoder(), codec.Decoder()
        text, twin = _encode(encoder, value), _plain_twin(value)
        rows.append({"value": label, "bytes": len(text), "json_bytes": len(json.dumps(twin)),
                     "encode_us": round(_per_call_us(functools.partial(_encode, encoder, value), repeats), 1),
                     "decode_us": round(_per_call_us(functools.partial(decoder.loads, text), repeats), 1),
                     "json_us": round(_per_call_us(functools.partial(_json_round_trip, twin), repeats), 1)})
    return rows


Starter = Callable[[standin.LearnerSpec, standin.TestSide], standin.Learner]


def _starters(root: str) -> tuple[dict[str, Starter], dict[str, str]]:
    """How a learner is started at each level that works on this machine, and in one interpreter (its
    folder under ``root``); the levels that do not work here, with why."""
    found: dict[str, Starter] = {}
    unavailable: dict[str, str] = {}
    for level in ("bubblewrap", "user", "plain"):
        try:
            sandbox = levels.choose(level)
        except levels.SandboxError as exc:
            unavailable[level] = str(exc)
            continue
        found[f"learner process ({level})"] = functools.partial(_process, sandbox=sandbox)
    found["one interpreter (the browser's transport)"] = functools.partial(InProcessLearner, root=root)
    return found, unavailable


def _process(spec: standin.LearnerSpec, side: standin.TestSide, sandbox: levels.Sandbox) -> standin.Learner:
    return ProcessLearner(spec, sandbox, side)


def measure_calls(calls: int) -> tuple[list[dict[str, Any]], dict[str, str]]:
    problem = load_problem(FIXTURE)
    namespace: dict[str, Any] = {}
    exec(ADD, namespace)  # noqa: S102 - the benchmark's own two lines
    direct = namespace["add"]
    rows = [{"how": "a direct call (no boundary)",
             "us_per_call": round(_per_call_us(functools.partial(direct, 1, 2), calls), 2)}]
    with tempfile.TemporaryDirectory(prefix="bench-boundary-") as root:
        starters, unavailable = _starters(root)
        for label, start in starters.items():
            side = standin.session(problem, ADD, FIXTURE, start=start)
            started = time.perf_counter()
            side.start()
            start_ms = (time.perf_counter() - started) * 1e3
            add = side.module.add
            rows.append({"how": label, "us_per_call": round(_per_call_us(functools.partial(add, 1, 2), calls), 1),
                         "start_ms": round(start_ms, 1)})
            side.stop()
    return rows, unavailable


class _Counter:
    """Counts the messages a side sends (requests and replies) while installed."""

    def __init__(self) -> None:
        self.sent: collections.Counter[str] = collections.Counter()
        self._send = protocol.PipeConnection.send

    def __enter__(self) -> _Counter:
        counter, original = self, self._send

        def send(connection: protocol.PipeConnection, message: dict[str, Any]) -> None:
            counter.sent[str(message.get("op", "reply"))] += 1
            original(connection, message)

        protocol.PipeConnection.send = send  # type: ignore[method-assign, assignment]
        return self

    def __exit__(self, *exc: object) -> None:
        protocol.PipeConnection.send = self._send  # type: ignore[method-assign]


def measure_problems(problems: list[Problem], round_trip_us: float, sandbox: levels.Sandbox) -> list[dict[str, Any]]:
    rows = []
    for problem in problems:
        assert problem.reference_path is not None
        source = problem.reference_path.read_text(encoding="utf-8")
        learner = functools.partial(standin.session, start=functools.partial(_process, sandbox=sandbox))
        with _Counter() as counter:
            started = time.perf_counter()
            result = judge_source(problem, source, learner=learner, include_secret=True)
            seconds = time.perf_counter() - started
        requests = sum(counter.sent.values())  # one message of the test side's per round trip, either way
        cost = requests * round_trip_us / 1e6
        rows.append({"problem": problem.id, "status": result.status, "tests": result.total,
                     "round_trips": requests, "by_op": dict(counter.sent), "run_s": round(seconds, 3),
                     "boundary_s": round(cost, 3), "share": round(cost / seconds, 3) if seconds else 0.0})
    return rows


def measure(problems_dir: Path, calls: int) -> dict[str, Any]:
    found, errors = discover_problems(problems_dir)
    if errors:
        raise SystemExit("; ".join(map(str, errors)))
    call_rows, unavailable = measure_calls(calls)
    process_rows = [r for r in call_rows if r["how"].startswith("learner process")]
    sandbox = levels.choose("auto")
    chosen = next((r for r in process_rows if f"({sandbox.level})" in r["how"]), process_rows[0])
    return {"codec": measure_codec(), "calls": call_rows, "unavailable": unavailable, "sandbox": sandbox.level,
            "problems": measure_problems(found, chosen["us_per_call"], sandbox)}


def print_table(data: dict[str, Any]) -> None:
    print("Codec: one value to JSON text and back (microseconds), against json alone on the same plain structure")
    for row in data["codec"]:
        print(f"  {row['value']:<66} encode {row['encode_us']:8.1f}  decode {row['decode_us']:8.1f}"
              f"  json {row['json_us']:8.1f}  ({row['bytes']} bytes, json {row['json_bytes']})")
    print("A call across the boundary: add(1, 2)")
    for row in data["calls"]:
        start = f"  (start {row['start_ms']:.0f} ms)" if "start_ms" in row else ""
        print(f"  {row['how']:<44} {row['us_per_call']:8.2f} us per call{start}")
    for level, why in data["unavailable"].items():
        print(f"  learner process ({level}): not measured here: {why[:110]}")
    print(f"Per problem (reference, public and secret tests, sandbox {data['sandbox']}): round trips and their share")
    for row in data["problems"]:
        print(f"  {row['problem']:<18} {row['tests']:4d} tests  {row['round_trips']:6d} round trips  run "
              f"{row['run_s']:6.2f} s  boundary ~{row['boundary_s']:5.2f} s ({row['share']:.0%})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", type=Path, default=ROOT / "problems")
    parser.add_argument("--calls", type=int, default=2000, help="calls per timing (5 timings, median)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    report(measure(args.problems, args.calls), print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
