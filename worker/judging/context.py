"""What a judge (worker/judging/kinds.py) is given beside a program and its tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from codeexec.worker.models import Problem, RunMeta, Truth


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
