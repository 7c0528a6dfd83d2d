"""codeexec's own competitive-programming shape (task_id, cases: {kind: "stdin" or "call", inputs, outputs,
entry_point, mode, checker, time_limit_s, memory_bytes, extraction}), optional setup."""

from __future__ import annotations

from typing import Any

from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.models import Problem


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    return Problem.model_validate(record)


SHAPE = Shape("codeexec's (task_id, cases)", 10, lambda record: "cases" in record, problem)
