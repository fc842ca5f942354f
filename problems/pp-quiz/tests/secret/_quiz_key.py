"""Answer key for the pp-quiz hidden tests: salted hashes of the normalised answers, and hints.

Only the hidden tests (never shipped to learners) hold it. A numeric answer is compared after
rounding to 4 decimals; a choice answer after strip() and upper(). The form each answer must have
(a letter, a number, an int) is the public helper quiz_forms's.
"""

from __future__ import annotations

import hashlib
import numbers

from quiz_forms import CHOICE, INTEGER, NUMBER

# question -> (kind, hash of the normalised right answer, general hint)
KEY: dict[str, tuple[str, str, str]] = {
    "q1": (NUMBER, "2ae78027857241d06cfa",
           "count time slots. With F and B equally long, each phase of GPipe lasts m + p - 1 slots and each "
           "stage is busy m of them; the bubble fraction is idle / TOTAL."),
    "q2": (CHOICE, "9d5d6f97caf5a6888875",
           "draw both timelines for p = 4, m = 4 and compare the ramp up before the last stage starts and the "
           "ramp down after it finishes. Reordering work inside a stage does not shorten those ramps."),
    "q3": (CHOICE, "b5ef5d3405db99b74bbd",
           "on stage 0 count forwards started minus backwards finished. When does stage 0 run its first "
           "backward in each schedule?"),
    "q4": (INTEGER, "0b368fd03f23ddcb1e7a",
           "in 1F1B stage s runs p - s - 1 warm-up forwards, then one more forward before its first backward; "
           "after that every new forward is matched by a backward."),
    "q5": (NUMBER, "73b6e524aef441532781",
           "relative to the ideal time means idle / BUSY: the numerator is the p - 1 slots of the ramp, the "
           "denominator the m slots of real work (not the total m + p - 1)."),
    "q6": (INTEGER, "04eecca3152861d3288c",
           "solve (p - 1) / (m + p - 1) <= 0.2 for the smallest integer m. 'At most' includes equality."),
    "q7": (NUMBER, "4e8a1705e9044222d31f",
           "with v chunks per rank each chunk's F and B take 1/v of a stage's time, and the ramp is made of "
           "p - 1 chunk steps instead of p - 1 stage steps. The question asks about idle TIME, not its share."),
    "q8": (CHOICE, "1b69b7d28be04f49d02d",
           "each rank still holds the same layers in total. Count how often one micro-batch crosses from rank "
           "r to rank r + 1 when each rank holds v chunks."),
    "q9": (NUMBER, "f629762716363adbadf7",
           "the forward sends one activation tensor of shape (s, b, h); multiply the element count by the bytes "
           "per element and divide by 2**20."),
    "q10": (CHOICE, "82e84da0ded057e1c49b",
            "the backward of a layer computes two kinds of gradients. Which one does the previous stage need "
            "right away, and which one could wait to fill a bubble?"),
    "q11": (CHOICE, "a265d72cf0c410af63be",
            "a blocking send returns only once the receiver has posted the matching receive. In the 1F1B steady "
            "state, what are stage s and stage s + 1 each trying to do at the same moment?"),
    "q12": (CHOICE, "cc53474231c5668cc75d",
            "think about where micro-batches enter the pipeline in DualPipe, what each rank therefore has to "
            "store, and what it overlaps with what."),
}

# question -> {normalised wrong answer: why it is a tempting mistake}
MISCONCEPTIONS: dict[str, dict[str, str]] = {
    "q1": {"number:0.8750": "7/8 is (p - 1) / m, the bubble relative to the IDEAL time, not its share of the total",
           "number:0.5000": "8/16 counts p slots of bubble instead of p - 1"},
    "q2": {"choice:A": "1F1B saves activation memory, not time: its ramps are as long as GPipe's",
           "choice:D": "the steady state has no bubble in either schedule; the bubble is in the ramps"},
    "q3": {"choice:A": "GPipe runs all m forwards before any backward, so stage 0 holds all m of them"},
    "q4": {"number:16.0000": "that is GPipe's peak (all m); 1F1B starts backwards early",
           "number:3.0000": "off by one: there is one more forward after the p - s - 1 warm-up forwards",
           "number:1.0000": "that is the LAST stage; stage 0 holds the most"},
    "q5": {"number:0.2000": "3/15 is the share of the TOTAL time; relative to the ideal time divide by m"},
    "q6": {"number:13.0000": "one too many: check whether one micro-batch fewer already reaches exactly 20 %; "
                             "'at most' includes equality",
           "number:11.0000": "with m = 11 the bubble is 3/14, about 0.214, still above 0.2"},
    "q7": {"number:1.0000": "interleaving does shrink the ramps: each chunk step is 1/v as long",
           "number:1.7273": "that is the ratio of the bubble SHARES of the total time (3/11 to 3/19 for p = 4, "
                            "m = 8), which shrinks less than the idle time itself because the total shrinks too"},
    "q8": {"choice:D": "interleaving is not free: a micro-batch hops between ranks v times as often",
           "choice:A": "the layers per rank do not change, only how they are grouped"},
    "q9": {"number:32.0000": "only the forward direction was asked (the gradient comes back in the backward pass)",
           "number:8.0000": "bf16 has 2 bytes per element",
           "number:16777216.0000": "the question asks for MiB, not bytes"},
    "q10": {"choice:C": "that is activation recomputation (checkpointing), not zero bubble"},
    "q11": {"choice:B": "running out of memory is a crash, not a deadlock",
            "choice:A": "the bubble is idle time, but the stages do finish: a deadlock means waiting forever"},
    "q12": {"choice:B": "DualPipe is still one synchronous pipeline over the same data"},
}


def normalise(answer: object) -> str:
    """The canonical text of an answer: "choice:<LETTER>" or "number:<value to 4 decimals>"."""
    if isinstance(answer, str):
        return "choice:" + answer.strip().upper()
    if isinstance(answer, numbers.Real) and not isinstance(answer, bool):
        return "number:" + f"{float(answer):.4f}"
    raise TypeError(f"expected a letter or a number, got {type(answer).__name__}: {answer!r}")


def digest(question: str, normalised: str) -> str:
    """Salted hash of a normalised answer, as stored in :data:`KEY`."""
    return hashlib.sha256(f"pp-quiz/{question}/{normalised}".encode()).hexdigest()[:20]


def is_right(question: str, answer: object) -> bool:
    """True when ``answer`` is the right answer to ``question``."""
    return digest(question, normalise(answer)) == KEY[question][1]
