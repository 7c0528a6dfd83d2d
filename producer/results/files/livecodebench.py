"""LiveCodeBench's own results file for a run: the ``*_eval_all.json`` that its runner writes, so that
scripts made for LiveCodeBench (and its published files) read codeexec's results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeexec.producer.inputs.files import write_whole
from codeexec.producer.results.files import ResultsFile
from codeexec.producer.results.persample import Recorded, samples_with_results
from codeexec.protocol.result import Outcome, StoredResult
from codeexec.worker.judging.sample_program import program_for

#: LiveCodeBench's error codes (lcb_runner/evaluation/testing_util.py) by the letter of the first failing
#: test's verdict (Verdict.letter): a wrong answer -2, a time limit -3, anything else that went wrong -4.
_CODES = {"W": (-2, "Wrong Answer"), "T": (-3, "Time Limit Exceeded")}
_RUNTIME = (-4, "Runtime Error")


def write(run: Recorded, out: Path, samples_path: Path | None = None, make: bool = False) -> list[str]:
    """Write `out` as LiveCodeBench's runner does: a list of one row per problem, sorted by question_id,
    each {question_id, code_list, output_list, graded_list, pass@1, metadata} (metadata: one JSON string per
    sample, {"error_code", "error_message", ...} for a failure, {"execution time"} for a pass). Samples
    without a result are left out."""
    problems, found = samples_with_results(run, samples_path)
    rows: dict[str, dict[str, Any]] = {}
    for line, stored in found:
        row = rows.setdefault(
            line.task_id,
            {"question_id": line.task_id, "code_list": [], "output_list": [], "graded_list": [], "metadata": []},
        )
        row["code_list"].append(program_for(problems[line.task_id], line.sample) or "")
        row["output_list"].append(line.sample.text)
        row["graded_list"].append(stored.exit_code is Outcome.PASS)
        row["metadata"].append(json.dumps(_metadata(stored)))
    for row in rows.values():
        row["pass@1"] = row["graded_list"].count(True) / len(row["graded_list"])
    document = [rows[task_id] for task_id in sorted(rows)]
    write_whole(out, json.dumps(document, indent=4))
    return [f"wrote LiveCodeBench's results of {sum(len(row['graded_list']) for row in document)} samples to {out}"]


def _metadata(stored: StoredResult) -> dict[str, Any]:
    if stored.exit_code is Outcome.PASS:
        return {"execution time": stored.charged_s}
    if stored.exit_code is Outcome.INFRA_ERROR:
        return {"error_code": -5, "error_message": "TestRunnerError", "detail": stored.detail}
    first = stored.first_failures.get("tests")
    letter = stored.verdicts[first] if first is not None and first < len(stored.verdicts) else ""
    if stored.exit_code is Outcome.TIMEOUT:  # its time limit, or the sample's budget
        letter = "T"
    code, message = _CODES.get(letter, _RUNTIME)
    return {"error_code": code, "error_message": message, "detail": stored.detail}


FILE = ResultsFile(
    "--lcb-results",
    "OUT.json",
    "also write LiveCodeBench's *_eval_all.json for the run",
    frozenset({"stdin", "call"}),
    write,
)
