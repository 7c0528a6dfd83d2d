"""MapCoder's APPS selection (id, test_list: [{input, output: [...]}], starter_code)."""

from __future__ import annotations

from typing import Any

from codeexec.producer.inputs.competitive import task_id_of
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import StdinTests
from codeexec.protocol.models import Problem


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    """MapCoder's APPS-150: every test a stdin one (its call-based problems read their arguments from
    stdin, as MapCoder asks), each with a list of right outputs, of which codeexec takes the first."""
    inputs, outputs = [], []
    for number, test in enumerate(record["test_list"], start=1):
        given, wanted = test.get("input"), test.get("output")
        if not isinstance(given, str) or not isinstance(wanted, list) or not wanted:
            raise ValueError(f"test_list: test {number}: expected {{input: text, output: [value, ...]}}")
        inputs.append(given)
        outputs.append(wanted[0] if isinstance(wanted[0], str) else str(wanted[0]))
    cases = StdinTests(inputs=inputs, outputs=outputs, extraction="last_python")
    return Problem(task_id=task_id_of(record, ("id", "task_id", "name"), reading.position), tests=cases)


def _fits(record: dict[str, Any]) -> bool:
    tests = record.get("test_list")
    return isinstance(tests, list) and bool(tests) and isinstance(tests[0], dict)  # MBPP's test_list holds strings


SHAPE = Shape("MapCoder's APPS (id, test_list, starter_code)", 16, _fits, problem)
