"""A run sample by sample, for the HTML report: each task's mix of outcomes, its most common reasons
for timing out or erring, and for test files, how often each of its tests failed. Unlike the report
(producer/results/report.py), which reads per-task counters, this reads every stored result, so it takes time in
proportion to the samples (~3 µs each)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from codeexec.producer.results.persample import Recorded
from codeexec.protocol.result import Outcome

FAILING = (Outcome.TIMEOUT.value, Outcome.ERROR.value)  # what the report's "timeouts and errors" counts
COMMON = 3  # reasons kept per task
_LINE = re.compile(r" \(line \d+\)")  # the candidate's line: each sample's own, so not part of the reason


class TaskOutcomes(BaseModel):
    outcomes: dict[str, int] = Field(description="Exit code -> samples of the task that ended so.")
    reasons: list[tuple[str, int]] = Field(
        default_factory=list, description="The most common details of its timeouts and errors, with their counts."
    )
    failed_tests: dict[str, int] = Field(
        default_factory=dict, description="Test files: each of its tests that failed or errored -> in how many samples."
    )

    @property
    def failing(self) -> int:
        return sum(self.outcomes.get(outcome, 0) for outcome in FAILING)


def breakdown(run: Recorded, tasks: Iterable[str]) -> dict[str, TaskOutcomes]:
    """Each task's outcomes and common reasons, from its stored results (one read per task)."""
    found: dict[str, TaskOutcomes] = {}
    for task_id, values in run.result_fields(tasks).items():
        outcomes: Counter[str] = Counter()
        reasons: Counter[str] = Counter()
        failed: Counter[str] = Counter()
        for stored in values:  # a StoredResult's fields: only a few of them are wanted
            outcomes[stored["exit_code"]] += 1
            if stored["exit_code"] in FAILING:
                reasons[_LINE.sub("", stored.get("detail", "")) or stored["exit_code"]] += 1
            failed.update(test["name"] for test in stored.get("tests", []) if test["outcome"] in ("fail", "error"))
        found[task_id] = TaskOutcomes(
            outcomes=dict(outcomes), reasons=reasons.most_common(COMMON), failed_tests=dict(failed.most_common())
        )
    return found
