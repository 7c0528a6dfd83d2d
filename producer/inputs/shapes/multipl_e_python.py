"""MultiPL-E's Python rows (name, prompt, test): the test calls its own check (test_check() at its end), and runs
as it is, one assertion."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import AssertionTests
from codeexec.protocol.models import Problem


class _MultiPLERecord(BaseModel):
    name: str
    prompt: str = ""
    test: str


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    row = _MultiPLERecord.model_validate(record)
    return Problem(task_id=row.name, prompt=row.prompt, tests=AssertionTests(assertions=[row.test]))


SHAPE = Shape(
    "MultiPL-E's (name, prompt, test)",
    60,
    lambda record: "test" in record and "name" in record and "task_id" not in record,
    problem,
)
