"""codeexec's own shape (task_id, assertions: a list of strings, optional prompt, setup, timeout_s,
entry_point), or any of a Problem's (its tests of one kind: protocol/models.py). Tried last: a record of no
other shape is told it has no assertions."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.models import Problem


class _CodeexecRecord(BaseModel):
    """codeexec's own shape: a Problem, with its assertions (EvalPlus's shape has inputs instead)."""

    model_config = ConfigDict(extra="allow")  # the Problem's own fields: Problem checks them

    assertions: list[str] = Field(min_length=1)
    timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False, strict=True, description="Its time limit.")


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    _CodeexecRecord.model_validate(record)  # first: a record of none of the shapes is told it has no assertions
    return Problem.model_validate(record)


SHAPE = Shape(
    "codeexec's (task_id, assertions: a list of strings, optional prompt, setup, timeout_s, entry_point)",
    100,
    lambda record: True,
    problem,
)
