"""MBPP's rows: the original (task_id, test_list, test_setup_code, challenge_test_list) and the sanitized set
(test_imports), each test an assertion (a run with --mbpp-challenge adds the challenge tests)."""

from __future__ import annotations

from typing import Any

from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import AssertionTests
from codeexec.protocol.models import Problem


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    tests = list(record["test_list"]) + (list(record.get("challenge_test_list") or []) if reading.challenge else [])
    # test_setup_code builds test data from the candidate's classes: it runs after the candidate,
    # before each assertion. test_imports are plain imports: they run before the candidate.
    after = record.get("test_setup_code") or ""
    return Problem(
        task_id=f"Mbpp/{record['task_id']}" if isinstance(record.get("task_id"), int) else record.get("task_id"),
        tests=AssertionTests(assertions=[f"{after}\n{test}" if after else test for test in tests]),
        setup="\n".join(record.get("test_imports") or []),
    )


SHAPE = Shape(
    "MBPP's (task_id, test_list, optional test_setup_code, challenge_test_list; or test_imports)",
    40,
    lambda record: "test_list" in record,
    problem,
)
