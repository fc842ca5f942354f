"""The learner's side of the trust boundary, and how it is started.

Natively every run is two processes: the tests (pytest, the canonical tests, their helpers and
oracles, the judge) in the test process, and the learner's module in a learner process of its own,
sandboxed as far as the machine allows (:mod:`.levels`), which holds only the learner's file, the
problem's support modules and the few modules below that serve them. The tests reach it through a
stand-in module (:mod:`.standin`) and the codec (:mod:`judge.core.codec`). In the browser the
learner's side runs in the same interpreter (:mod:`.inprocess`), through the same codec.

- :mod:`.learner`   the learner's endpoint (runs in the learner process, or in-process)
- :mod:`.child`     the learner process's main: limits, the guard, the message loop
- :mod:`.standin`   the test side's endpoint: the stand-in module, lent objects
- :mod:`.levels`    the sandbox levels (bubblewrap, an unprivileged user, plain), probed once
- :mod:`.process`   starting, limiting and stopping a learner process (native)
- :mod:`.inprocess` the learner's side in the test's own interpreter (the browser)

This file imports nothing: the learner process loads it with only the standard library around.
"""
