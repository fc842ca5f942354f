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


# The Chinese versions of the hints and of the common mistakes (the hidden test picks by the learner's language).
HINTS_ZH: dict[str, str] = {
    "q1": "数时间格。F 和 B 一样长时，GPipe 的每个阶段持续 m + p - 1 格，每个 stage 忙碌其中 m 格；"
          "气泡占比是 空闲 / 总时间（TOTAL）。",
    "q2": "画出 p = 4、m = 4 时两种调度的时间线，比较最后一个 stage 开始之前的爬升和它结束之后的回落。"
          "在一个 stage 内部重新排列工作并不会缩短这些爬升和回落。",
    "q3": "在 stage 0 上数已开始的前向减去已完成的反向。在每种调度中，stage 0 什么时候运行它的第一个反向？",
    "q4": "在 1F1B 中，stage s 先运行 p - s - 1 个预热前向，然后在第一个反向之前再运行一个前向；"
          "此后每个新的前向都对应一个反向。",
    "q5": "相对于理想时间指的是 空闲 / 忙碌（BUSY）：分子是爬升的 p - 1 格，分母是真正工作的 m 格"
          "（不是总数 m + p - 1）。",
    "q6": "对最小的整数 m 解 (p - 1) / (m + p - 1) <= 0.2。“至多”包括相等。",
    "q7": "每个 rank 有 v 个模型块时，每个模型块的 F 和 B 各占一个 stage 时间的 1/v，爬升由 p - 1 个模型块步"
          "而不是 p - 1 个 stage 步组成。题目问的是空闲时间（TIME），不是它的占比。",
    "q8": "每个 rank 持有的层总数不变。数一数当每个 rank 持有 v 个模型块时，一个微批次从 rank r 到 rank r + 1 "
          "要经过多少次。",
    "q9": "前向发送一个形状为 (s, b, h) 的激活张量；把元素个数乘以每个元素的字节数，再除以 2**20。",
    "q10": "一层的反向计算两种梯度。前一个 stage 马上需要哪一种，哪一种可以等待，用来填补气泡？",
    "q11": "阻塞的发送只有在接收方发起了匹配的接收之后才返回。在 1F1B 的稳定阶段，stage s 和 stage s + 1 "
           "在同一时刻各自想做什么？",
    "q12": "想一想在 DualPipe 中微批次从哪里进入流水线，因此每个 rank 需要存储什么，以及什么与什么重叠。",
}

MISCONCEPTIONS_ZH: dict[str, dict[str, str]] = {
    "q1": {"number:0.8750": "7/8 是 (p - 1) / m，即气泡与理想（IDEAL）时间之比，不是它在总时间中的占比",
           "number:0.5000": "8/16 把气泡算成了 p 格，而不是 p - 1 格"},
    "q2": {"choice:A": "1F1B 节省的是激活显存，不是时间：它的爬升和回落与 GPipe 的一样长",
           "choice:D": "两种调度的稳定阶段都没有气泡；气泡在爬升和回落中"},
    "q3": {"choice:A": "GPipe 在任何反向之前先运行全部 m 个前向，所以 stage 0 持有全部 m 个"},
    "q4": {"number:16.0000": "那是 GPipe 的峰值（全部 m 个）；1F1B 更早开始反向",
           "number:3.0000": "差了一个：在 p - s - 1 个预热前向之后还有一个前向",
           "number:1.0000": "那是最后一个 stage；stage 0 持有的最多"},
    "q5": {"number:0.2000": "3/15 是在总时间（TOTAL）中的占比；相对于理想时间要除以 m"},
    "q6": {"number:13.0000": "多了一个：检查少一个微批次是否已经恰好达到 20 %；“至多”包括相等",
           "number:11.0000": "m = 11 时气泡是 3/14，约 0.214，仍然高于 0.2"},
    "q7": {"number:1.0000": "交错确实会缩短爬升和回落：每个模型块步只有 1/v 那么长",
           "number:1.7273": "那是气泡在总时间中占比（SHARES）之比（p = 4、m = 8 时为 3/11 比 3/19），它缩小得比"
                            "空闲时间本身少，因为总时间也缩短了"},
    "q8": {"choice:D": "交错并不是免费的：一个微批次在 rank 之间跳转的次数是原来的 v 倍",
           "choice:A": "每个 rank 的层数不变，变的只是它们的分组方式"},
    "q9": {"number:32.0000": "题目只问了前向方向（梯度在反向时传回）",
           "number:8.0000": "bf16 每个元素占 2 个字节",
           "number:16777216.0000": "题目问的是 MiB，不是字节"},
    "q10": {"choice:C": "那是激活重计算（checkpointing），不是零气泡"},
    "q11": {"choice:B": "显存耗尽是崩溃，不是死锁",
            "choice:A": "气泡是空闲时间，但各 stage 确实会结束：死锁意味着永远等待"},
    "q12": {"choice:B": "DualPipe 仍然是同一批数据上的一条同步流水线"},
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
