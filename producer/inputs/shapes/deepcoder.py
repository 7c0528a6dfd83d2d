"""DeepCoder's (rllm's) rows (problem, tests): CodeContests' {inputs, outputs} and Codeforces' [{input,
output}] as stdin tests; LeetCode's {functional: a check(candidate) block} as its asserts, with rllm's
prelude."""

from __future__ import annotations

import re
from typing import Any

from codeexec.producer.inputs.asserts import split_check
from codeexec.producer.inputs.competitive import python_value, task_id_of, texts
from codeexec.producer.inputs.leetcode import RLLM_PRELOAD, RLLM_SETUP
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import AssertionTests, StdinTests
from codeexec.protocol.models import Problem


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    tests = record["tests"]
    if isinstance(tests, str):
        tests = python_value(tests, "tests")
    task_id = task_id_of(record, ("task_id", "id"), reading.position)
    if isinstance(tests, dict) and "functional" in tests:  # LeetCode: a check(candidate) block of asserts
        test, entry_point = _check_call(str(tests["functional"]))
        return Problem(
            task_id=task_id,
            tests=AssertionTests(assertions=split_check(test, entry_point)),
            setup=RLLM_SETUP,
            preload=RLLM_PRELOAD,
        )
    if isinstance(tests, dict):  # CodeContests: {inputs: [...], outputs: [...]}
        given, wanted = tests.get("inputs"), tests.get("outputs")
    elif isinstance(tests, list):  # Codeforces: [{input, output}, ...]
        given = [test.get("input") if isinstance(test, dict) else None for test in tests]
        wanted = [test.get("output") if isinstance(test, dict) else None for test in tests]
    else:
        raise ValueError("tests: expected {inputs, outputs}, [{input, output}, ...] or {functional}")
    if not isinstance(given, list) or not isinstance(wanted, list):
        raise ValueError("tests: expected lists of inputs and outputs")
    cases = StdinTests(
        inputs=texts(given, "tests: input"),
        outputs=texts(wanted, "tests: output"),
        extraction="last_python",
    )
    return Problem(task_id=task_id, tests=cases)


_CHECK_CALL = re.compile(r"^check\((?P<entry>[^\n]+)\)\s*\Z", re.MULTILINE)


def _check_call(test: str) -> tuple[str, str]:
    """DeepCoder's LeetCode test: (its check() without the call at its end, what the call passes)."""
    lines = test.rstrip().split("\n")
    found = _CHECK_CALL.match(lines[-1]) if lines else None
    if found is None:
        raise ValueError("tests: functional: expected it to end with check(<entry point>)")
    return "\n".join(lines[:-1]), found["entry"]


SHAPE = Shape("DeepCoder's (problem, tests)", 15, lambda record: "problem" in record and "tests" in record, problem)
