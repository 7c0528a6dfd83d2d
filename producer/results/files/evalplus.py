"""EvalPlus's own results file for a HumanEval+ or MBPP+ run: the eval_results.json that ``evalplus.evaluate``
writes, so that scripts made for EvalPlus read codeexec's results."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from codeexec.producer.inputs import mbppplus
from codeexec.producer.inputs.files import open_text_lines, write_whole
from codeexec.producer.inputs.problems import problems_path
from codeexec.producer.results.files import ResultsFile
from codeexec.producer.results.persample import Recorded, samples_with_results
from codeexec.protocol.kinds import EvalPlusTests
from codeexec.worker.judging.kinds.evalplus import inputs_of
from codeexec.worker.judging.sample_program import program_for


def write(run: Recorded, out: Path, samples_path: Path | None = None, make: bool = False) -> list[str]:
    """Write `out` as EvalPlus 0.3.1 does: {"date", "hash", "eval": {task_id: [one entry per sample, in
    the samples file's order]}}, each entry {task_id, solution, base_status, plus_status,
    base_fail_tests, plus_fail_tests} (the input EvalPlus lists without --test_details: _fail_tests()).
    Samples without a result are left out."""
    meta = run.meta
    problems, found = samples_with_results(run, samples_path)
    evaluated: dict[str, list[dict[str, Any]]] = {}
    for line, stored in found:
        problem = problems[line.task_id]
        assert isinstance(problem.tests, EvalPlusTests)
        statuses = {"base": stored.base_status, "plus": stored.plus_status}
        failing = {
            name: _fail_tests(line.task_id, inputs, stored.first_failures.get(name), statuses[name])
            for name, inputs in inputs_of(problem.tests).items()
        }
        evaluated.setdefault(line.task_id, []).append(
            {
                "task_id": line.task_id,
                "solution": program_for(problem, line.sample) or "",
                "base_status": stored.base_status,
                "plus_status": stored.plus_status,
                "base_fail_tests": failing["base"],
                "plus_fail_tests": failing["plus"],
            }
        )
    document = {"date": time.strftime("%Y-%m-%d %H:%M"), "hash": dataset_hash(meta.problems), "eval": evaluated}
    write_whole(out, json.dumps(document))
    return [f"wrote EvalPlus's results of {sum(map(len, evaluated.values()))} samples to {out}"]


def _fail_tests(task_id: str, inputs: list[list[Any]], first: int | None, status: str | None) -> list[Any]:
    """EvalPlus's list: the input of the check's last detail, its first failing one; for a check that ran
    out of time, the last one that passed before it (none if none did)."""
    if first is None:
        return []
    index = first - 1 if status == "timeout" else first
    if index < 0:
        return []
    return [mbppplus.results_form(task_id, inputs[index])]


def dataset_hash(spec: str) -> str:
    """EvalPlus's "hash" of a dataset: the md5 of the (uncompressed) file."""
    digest = hashlib.md5(usedforsecurity=False)
    for _, raw in open_text_lines(problems_path(spec)):
        digest.update(raw)
    return digest.hexdigest()


FILE = ResultsFile(
    "--evalplus-results",
    "OUT.json",
    "HumanEval+, MBPP+: also write EvalPlus's eval_results.json for the run",
    frozenset({"evalplus"}),
    write,
)
