"""The aggregator: pass@k per task and for the run, from the per-task counts n and c the workers keep moving.

A report is made of a handful of hashes whose size is the number of tasks, never the samples (Counts, read by
producer/run.py's Run.counts()), so it answers in milliseconds however large the sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from codeexec.producer.results.intervals import bootstrap_interval
from codeexec.producer.results.passk import pass_at_k
from codeexec.protocol import keys
from codeexec.protocol.result import Outcome
from codeexec.protocol.run import RunMeta
from codeexec.worker.judging.kinds import KINDS


class TaskReport(BaseModel):
    n: int = Field(description="Samples with a result that counts (all but infra_error).")
    c: int = Field(description="Samples that passed.")
    expected: int = Field(description="Samples submitted for the task.")
    pass_at_k: dict[str, float]
    c_base: int | None = Field(None, description="HumanEval+: samples that passed the base tests.")
    base_pass_at_k: dict[str, float] | None = None


class RunReport(BaseModel):
    run: str
    complete: bool
    pass_at_k: dict[str, float] = Field(
        description="Mean over tasks, for each k every task has n >= k for. HumanEval+: on the base and plus tests."
    )
    base_pass_at_k: dict[str, float] | None = Field(
        None, description="HumanEval+ only: pass@k on the base tests (HumanEval's), as EvalPlus reports it."
    )
    pass_at_k_ci95: dict[str, tuple[float, float]] = Field(
        default_factory=dict,
        description="k -> the 95 % percentile-bootstrap interval of pass@k, resampling tasks "
        "(producer/results/intervals.py); what `report`, the HTML page and the API give.",
    )
    n_samples: int = Field(description="Samples submitted.")
    n_done: int = Field(description="Samples with a recorded result.")
    outcomes: dict[str, int]
    limits: dict[str, str] = Field(
        default_factory=dict,
        description="The time limits of each kind of test the run's problems have, as that kind says them "
        "(worker/judging/kinds/): what its tests are called -> its limits (and how it judges, where it says).",
    )
    hash_seed: int
    isolation: str = Field(description="How the candidates' processes started: fork or fresh.")
    protections: dict[str, dict[str, int]] = Field(
        default_factory=dict,
        description="host -> what its candidates ran under (worker/process/protections.py, one word per protection) -> "
        "samples.",
    )
    judged: dict[str, int] = Field(
        default_factory=dict,
        description="Tests of the recorded samples by how they are judged: 'host-compared' (the host compares the "
        "value the candidate's process sent) or 'in-process' (the assertion ran there).",
    )
    workers: dict[str, int] = Field(
        default_factory=dict, description="'<host> <pid>' of each worker process -> results it recorded."
    )
    first_result: float | None = Field(None, description="When the first result was recorded (unix time, Redis's).")
    last_result: float | None = Field(None, description="When the latest result was recorded.")
    samples_per_s: float | None = Field(
        None, description="Results recorded, over the time from submission to the latest."
    )
    left_out: dict[str, str] = Field(default_factory=dict, description="k -> why pass@k is not reported.")
    notes: list[str] = Field(default_factory=list)
    meta: RunMeta = Field(description="The run as submitted: its files and their hashes, settings, codeexec's version.")
    tasks: dict[str, TaskReport]


@dataclass(frozen=True)
class Counts:
    """What the record script keeps moving as results land: per task, n (results that count), c (passed)
    and c_base (passed the base check); per run, the counters of keys.stats (outcomes, protections,
    workers, times) and the workers' notes."""

    expected: dict[str, int]
    n: dict[str, int]
    c: dict[str, int]
    c_base: dict[str, int]
    stats: dict[str, str]
    notes: set[str]


def build_report(meta: RunMeta, counts: Counts, ks: Sequence[int] | None = None, intervals: bool = False) -> RunReport:
    """The report of the run `meta` is of, from its counts, of pass@k for each of `ks` (else the run's: its
    options' k, or those its samples allow); `intervals`: with pass@k's bootstrap interval (~0.2 s per k for
    1,000 tasks, where the rest takes milliseconds)."""
    run, options = meta.run, meta.options
    ks = list(ks or options.ks(min(counts.expected.values(), default=0)))
    kinds = [KINDS[name] for name in (meta.kinds if meta.kinds is not None else ["assertions"]) if name in KINDS]
    base = any(kind.base_check for kind in kinds)
    stats, worker_notes = counts.stats, counts.notes

    tasks: dict[str, TaskReport] = {}
    for task_id in sorted(counts.expected, key=_natural):
        task_n, task_c, task_base = (table.get(task_id, 0) for table in (counts.n, counts.c, counts.c_base))
        tasks[task_id] = TaskReport(
            n=task_n,
            c=task_c,
            expected=counts.expected[task_id],
            pass_at_k={str(k): pass_at_k(task_n, task_c, k) for k in ks if task_n >= k},
            c_base=task_base if base else None,
            base_pass_at_k={str(k): pass_at_k(task_n, task_base, k) for k in ks if task_n >= k} if base else None,
        )

    run_pass: dict[str, float] = {}
    run_base: dict[str, float] = {}
    run_ci: dict[str, tuple[float, float]] = {}
    left_out: dict[str, str] = {}
    for k in ks:
        short = [task_id for task_id, task in tasks.items() if task.n < k]
        if short:
            least = min(tasks[task_id].n for task_id in short)
            left_out[str(k)] = f"{len(short)} of {len(tasks)} tasks have fewer than {k} samples (fewest: {least})"
        elif tasks:
            per_task = [task.pass_at_k[str(k)] for task in tasks.values()]
            run_pass[str(k)] = sum(per_task) / len(tasks)
            if intervals:
                run_ci[str(k)] = bootstrap_interval(per_task)
            if base:
                run_base[str(k)] = sum((task.base_pass_at_k or {})[str(k)] for task in tasks.values()) / len(tasks)

    outcomes = {outcome.value: int(stats.get(keys.outcome_field(outcome.value), 0)) for outcome in Outcome}
    done = int(stats.get(keys.DONE, 0))
    notes = []
    if outcomes[Outcome.INFRA_ERROR]:
        notes.append(
            f"{outcomes[Outcome.INFRA_ERROR]} sample(s) could not be run by the machine (infra_error, after "
            "retries) and are left out of n: see the per-sample output"
        )
    if done < meta.n_samples:
        why = "cancelled" if meta.status == "cancelled" else "incomplete"
        notes.append(f"{why}: {done} of {meta.n_samples} samples have a result")
    notes.extend(sorted(worker_notes))
    protections: dict[str, dict[str, int]] = {}
    workers: dict[str, int] = {}
    for name, count in stats.items():
        if name.startswith(keys.PROTECTIONS):
            host, _, under = name.removeprefix(keys.PROTECTIONS).partition(" ")
            protections.setdefault(host, {})[under] = int(count)
        elif name.startswith(keys.WORKER):
            workers[name.removeprefix(keys.WORKER)] = int(count)
    first, last = (float(stats[field]) if field in stats else None for field in (keys.FIRST_RESULT, keys.LAST_RESULT))
    return RunReport(
        run=run,
        complete=done >= meta.n_samples,
        pass_at_k=run_pass,
        base_pass_at_k=run_base if base else None,
        pass_at_k_ci95=run_ci,
        n_samples=meta.n_samples,
        n_done=done,
        outcomes=outcomes,
        limits={kind.title: kind.limits(meta) for kind in kinds},
        hash_seed=options.hash_seed,
        isolation=options.isolation,
        protections=protections,
        judged={
            "host-compared": int(stats.get(keys.JUDGED_HOST, 0)),
            "in-process": int(stats.get(keys.JUDGED_IN_PROCESS, 0)),
        },
        workers=dict(sorted(workers.items())),
        first_result=first,
        last_result=last,
        samples_per_s=done / (last - meta.created) if last is not None and last > meta.created else None,
        left_out=left_out,
        notes=notes,
        meta=meta,
        tasks=tasks,
    )


def _natural(task_id: str) -> tuple[str, int, str]:
    """HumanEval/2 before HumanEval/10."""
    head, _, tail = task_id.rpartition("/")
    return (head, int(tail), "") if tail.isdigit() else (task_id, -1, task_id)
