"""What a kind of test is to codeexec: its model (protocol/kinds.py), its judge, and what the producer's reports
ask of it. Each kind is one module of worker/judging/kinds/, whose KIND is a Kind; the table there finds them.

A judge is given a sample's program (worker/judging/sample_program.py), its problem's tests and the Context of
the sample's run, and returns the sample's RunResult. A kind also says how many of a problem's tests the
host decides (host_compared: a result's share judged in the host, not in the candidate's process), the first
test the candidate's process decides (in_process, which a run with --strict-verdicts refuses; None where the
host decides them all), and how a report describes its time limits in a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from codeexec.protocol.kinds import TestSet
from codeexec.protocol.result import RunResult
from codeexec.protocol.run import RunMeta
from codeexec.worker.judging.context import Context

Tests = TypeVar("Tests", bound=TestSet)


def _host_decides_all(tests: TestSet) -> int | None:
    return None


@dataclass(frozen=True)
class Kind(Generic[Tests]):
    """A kind of test: `model`, the test set it judges (its `kind` is the kind's name); `judge`; `host_compared`
    and `in_process` (above); `title`, what a report calls its tests; `limits`, its time limits in a run as a
    report says them; `base_check`, whether its results count a base check apart (EvalPlus's base tests: a
    second pass@k)."""

    model: type[Tests]
    judge: Callable[[str, Tests, Context], RunResult]
    host_compared: Callable[[Tests], int]
    title: str
    limits: Callable[[RunMeta], str]
    in_process: Callable[[Tests], int | None] = _host_decides_all
    base_check: bool = False

    @property
    def name(self) -> str:
        """Its name: its model's `kind`."""
        return str(self.model.model_fields["kind"].default)
