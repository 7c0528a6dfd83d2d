"""MultiPL-E's own results files for a run of programs in other languages: a `<name>.results.json` per problem,
as its evaluation writes them, so that its scripts (pass_k.py) read codeexec's results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from codeexec.producer.inputs.files import InputError, write_whole
from codeexec.producer.results.files import ResultsFile
from codeexec.producer.results.persample import Recorded, samples_with_results
from codeexec.protocol.kinds import ProgramTests
from codeexec.protocol.models import Problem
from codeexec.protocol.result import Outcome, StoredResult
from codeexec.worker.judging.sample_program import program_for
from codeexec.worker.languages import LANGUAGES

#: MultiPL-E's statuses (evaluation/src/eval_*.py) by codeexec's outcome; its pass@k counts OK alone.
STATUSES = {Outcome.PASS: "OK", Outcome.SYNTAX_ERROR: "SyntaxError", Outcome.TIMEOUT: "Timeout"}
#: What MultiPL-E keeps of a program's stdout and stderr.
_KEPT = 2048


def status(stored: StoredResult) -> str:
    """MultiPL-E's status of a result: OK, SyntaxError, Timeout, or Exception (anything else that failed)."""
    return STATUSES.get(stored.exit_code, "Exception")


def write(run: Recorded, out: Path, samples_path: Path | None = None, make: bool = False) -> list[str]:
    """Write `out`/<task_id>.results.json for each problem as MultiPL-E's evaluation does (evaluation/src/main.py):
    the problem's fields (name, language, prompt, tests, stop_tokens) and its results in the samples' order,
    {program, stdout, stderr, exit_code, status} each (exit_code -1 where it ran out of time; stdout and
    stderr cut to 2,048 characters; MultiPL-E's timestamp is left out)."""
    problems, found = samples_with_results(run, samples_path)
    documents: dict[str, dict[str, Any]] = {}
    for line, stored in found:
        problem = problems[line.task_id]
        document = documents.setdefault(line.task_id, _problem_fields(problem))
        end = stored.script
        document["results"].append(
            {
                "program": program_for(problem, line.sample) or "",
                "stdout": end.stdout[:_KEPT] if end else "",
                "stderr": (end.stderr if end else stored.detail)[:_KEPT],
                "exit_code": -1 if stored.exit_code is Outcome.TIMEOUT or end is None else end.status,
                "status": status(stored),
            }
        )
    for task_id, document in documents.items():
        if "/" in task_id or task_id in (".", ".."):
            raise InputError(f"task id {task_id!r} cannot name a file of {out}")
        write_whole(out / f"{task_id}.results.json", json.dumps(document, indent=2))
    written = sum(len(document["results"]) for document in documents.values())
    return [f"wrote MultiPL-E's results of {written} samples to {out}"]


def _problem_fields(problem: Problem) -> dict[str, Any]:
    tests = problem.tests
    assert isinstance(tests, ProgramTests)
    language = LANGUAGES[tests.language].aliases[0]  # MultiPL-E's name of it
    return {"name": problem.task_id, "language": language, "prompt": problem.prompt, "tests": tests.tests,
            "stop_tokens": tests.stop_tokens, "results": []}  # fmt: skip


FILE = ResultsFile(
    "--multiple-results",
    "DIR",
    "programs in other languages: also write MultiPL-E's <name>.results.json of each problem into DIR",
    frozenset({"program"}),
    write,
)
