"""Self-test quiz on pipeline parallelism: answer each question by returning a short value.

Multiple-choice questions: return one capital letter, e.g. "B". Number questions: return an int or
a float; an exact expression such as 1 / 3 is best, a rounded value must be right to 4 decimals.
Questions that say "Return an integer." take an int only (5, not 5.0).
"""

from __future__ import annotations


def q1() -> float | None:
    """With p = 8 stages and m = 8 micro-batches, what fraction of the total time is bubble
    (idle) under GPipe? Every F and every B takes the same time (a B as long as an F), on every
    stage. Return a number.
    """
    return None  # your answer here


def q2() -> str | None:
    """Same p = 8 and m = 8, but with 1F1B instead of GPipe. Compared with GPipe, 1F1B's
    bubble fraction is:

    A. about half of GPipe's, because backwards start earlier
    B. the same as GPipe's
    C. larger, because forwards and backwards alternate
    D. zero once the pipeline reaches its steady state
    """
    return None  # your answer here


def q3() -> str | None:
    """With m > p, which schedule holds fewer micro-batches' activations on stage 0 at its peak?

    A. GPipe
    B. 1F1B
    C. both hold the same number
    D. it depends on how long F and B take
    """
    return None  # your answer here


def q4() -> int | None:
    """Under 1F1B with p = 4 and m = 16, how many micro-batches' activations does stage 0
    (the first stage) hold at its peak? Return an integer.
    """
    return None  # your answer here


def q5() -> float | None:
    """With p = 4 and m = 12 under 1F1B, how large is the bubble relative to the ideal
    (bubble-free) time, i.e. idle time divided by busy time? Return a number.
    """
    return None  # your answer here


def q6() -> int | None:
    """With p = 4 stages under 1F1B you want the bubble to be at most 20 % of the total time.
    What is the smallest number of micro-batches m that achieves it? Return an integer.
    """
    return None  # your answer here


def q7() -> float | None:
    """Interleaved 1F1B with v = 2 model chunks per rank (same p, same m, same layers per rank).
    By what factor does the bubble (idle) TIME shrink compared with plain 1F1B? Return a number,
    e.g. 3 if it became a third.
    """
    return None  # your answer here


def q8() -> str | None:
    """What is the main price of interleaving with v chunks per rank?

    A. every rank stores v times as many parameters
    B. it needs v times as many GPUs
    C. v times as much point-to-point communication per micro-batch
    D. nothing, it is free
    """
    return None  # your answer here


def q9() -> float | None:
    """One micro-batch has s = 2048 tokens, micro-batch size b = 1, hidden size h = 4096, in bf16
    (2 bytes per element). In the forward pass, how many MiB (2**20 bytes) does stage 0 send to
    stage 1 for this micro-batch? Return a number.
    """
    return None  # your answer here


def q10() -> str | None:
    """What does ZB-H1 (zero bubble) split the backward pass into?

    A. the backward for input gradients (B) and the backward for weight gradients (W)
    B. two halves of the micro-batch, processed on different ranks
    C. a recomputation of the forward followed by the backward
    D. the attention backward and the MLP backward, run on different stages
    """
    return None  # your answer here


def q11() -> str | None:
    """Why can a blocking send deadlock in 1F1B?

    A. the bubble makes the last stage wait for the first one forever
    B. the activations of all micro-batches do not fit in memory
    C. in the steady state, stage s sends an activation to stage s + 1 while stage s + 1 sends a
       gradient to stage s; if both sends block until the other side receives, neither ever
       reaches its receive
    D. the gradient all-reduce at the end of the step needs every rank
    """
    return None  # your answer here


def q12() -> str | None:
    """What does DualPipe (DeepSeek-V3) do?

    A. splits every layer across two GPUs to halve the stage time
    B. trains two independent pipelines on different data and averages their weights
       asynchronously
    C. recomputes every activation so that no activations need to be stored
    D. feeds micro-batches from both ends of the pipeline at once and overlaps a forward chunk
       with a backward chunk so communication hides behind computation, at the price of keeping
       two copies of the parameters
    """
    return None  # your answer here
