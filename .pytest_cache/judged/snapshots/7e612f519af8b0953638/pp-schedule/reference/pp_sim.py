"""Pipeline schedules: the per-stage order of forwards and backwards for GPipe and 1F1B."""

from __future__ import annotations

KINDS = ("gpipe", "1f1b")


def schedule(kind: str, p: int, m: int) -> list[list[tuple[str, int]]]:
    """Return, for each stage s = 0..p-1, the ordered list of ("F", i) / ("B", i) it runs.

    kind is "gpipe" or "1f1b", p >= 1 the number of stages, m >= 1 the number of micro-batches.
    Raises ValueError for any other kind, or when p or m is not an int >= 1.
    """
    _validate(kind, p, m)
    if kind == "gpipe":
        return [_gpipe_stage(m) for _ in range(p)]
    return [_one_f_one_b_stage(p, m, s) for s in range(p)]


def _validate(kind: object, p: object, m: object) -> None:
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    for name, value in (("p", p), ("m", m)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an int >= 1, got {value!r} of type {type(value).__name__}")
        if value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value}")


def _gpipe_stage(m: int) -> list[tuple[str, int]]:
    """All m forwards, then all m backwards in ascending micro-batch order."""
    return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]


def _one_f_one_b_stage(p: int, m: int, s: int) -> list[tuple[str, int]]:
    """Warm-up forwards, then one forward / one backward pairs, then the remaining backwards."""
    warmup = min(p - s - 1, m)
    ops: list[tuple[str, int]] = [("F", i) for i in range(warmup)]
    for k in range(m - warmup):
        ops.append(("F", warmup + k))
        ops.append(("B", k))
    ops.extend(("B", i) for i in range(m - warmup, m))
    return ops
