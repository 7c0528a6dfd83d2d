"""Two runs compared: pass@k of each on the tasks they share, the difference with a paired bootstrap
interval, and the tasks one solves and the other does not (producer/results/intervals.py says the rules)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from codeexec.producer.results.intervals import bootstrap_interval, differs
from codeexec.producer.results.passk import pass_at_k
from codeexec.producer.results.report import RunReport


class Difference(BaseModel):
    a: float = Field(description="pass@k of run A over the shared tasks.")
    b: float = Field(description="pass@k of run B over the shared tasks.")
    diff: float = Field(description="b - a.")
    ci95: tuple[float, float] = Field(description="95 % paired bootstrap interval of diff, over the shared tasks.")


class Comparison(BaseModel):
    a: str
    b: str
    tasks_compared: int = Field(description="Tasks in both runs; only these enter the figures.")
    pass_at_k: dict[str, Difference]
    gained: list[str] = Field(description="Shared tasks whose pass@1 rose by more than noise (intervals.differs()).")
    lost: list[str] = Field(description="Shared tasks whose pass@1 fell by more than noise.")
    only_in_a: list[str]
    only_in_b: list[str]
    left_out: dict[str, str] = Field(default_factory=dict, description="k -> why it is not compared.")


def compare(report_a: RunReport, report_b: RunReport, ks: Sequence[int]) -> Comparison:
    """Compare run B with run A (the differences are B - A)."""
    tasks_a, tasks_b = report_a.tasks, report_b.tasks
    shared = [task_id for task_id in tasks_a if task_id in tasks_b]
    figures: dict[str, Difference] = {}
    left_out: dict[str, str] = {}
    for k in ks:
        short = [task_id for task_id in shared if min(tasks_a[task_id].n, tasks_b[task_id].n) < k]
        if not shared:
            left_out[str(k)] = "no task is in both runs"
            continue
        if short:
            left_out[str(k)] = f"{len(short)} shared task(s) have fewer than {k} samples in a run"
            continue
        per_a = [pass_at_k(tasks_a[task_id].n, tasks_a[task_id].c, k) for task_id in shared]
        per_b = [pass_at_k(tasks_b[task_id].n, tasks_b[task_id].c, k) for task_id in shared]
        diffs = [b - a for a, b in zip(per_a, per_b, strict=True)]
        mean_a, mean_b = sum(per_a) / len(shared), sum(per_b) / len(shared)
        figures[str(k)] = Difference(a=mean_a, b=mean_b, diff=mean_b - mean_a, ci95=bootstrap_interval(diffs))
    changed = {
        task_id: tasks_b[task_id].c / tasks_b[task_id].n - tasks_a[task_id].c / tasks_a[task_id].n
        for task_id in shared
        if differs(tasks_a[task_id].c, tasks_a[task_id].n, tasks_b[task_id].c, tasks_b[task_id].n)
    }
    return Comparison(
        a=report_a.run,
        b=report_b.run,
        tasks_compared=len(shared),
        pass_at_k=figures,
        gained=[task_id for task_id, change in changed.items() if change > 0],
        lost=[task_id for task_id, change in changed.items() if change < 0],
        only_in_a=[task_id for task_id in tasks_a if task_id not in tasks_b],
        only_in_b=[task_id for task_id in tasks_b if task_id not in tasks_a],
        left_out=left_out,
    )
