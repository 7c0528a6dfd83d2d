"""CodeContests' rows (public_tests, private_tests, generated_tests: {input, output} each): stdin tests, with the
problem's own time limit ({seconds, nanos}) and memory limit."""

from __future__ import annotations

from typing import Any

from codeexec.producer.inputs.competitive import task_id_of, texts
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import StdinTests
from codeexec.protocol.models import Problem


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    inputs: list[str] = []
    outputs: list[str] = []
    for field in ("public_tests", "private_tests", "generated_tests"):
        tests = record.get(field) or {"input": [], "output": []}
        if (
            not isinstance(tests, dict)
            or not isinstance(tests.get("input"), list)
            or not isinstance(tests.get("output"), list)
        ):
            raise ValueError(f"{field}: expected {{input: [...], output: [...]}}")
        if len(tests["input"]) != len(tests["output"]):
            raise ValueError(f"{field}: {len(tests['input'])} inputs but {len(tests['output'])} outputs")
        inputs += texts(tests["input"], f"{field} input")
        outputs += texts(tests["output"], f"{field} output")
    memory = record.get("memory_limit_bytes")
    cases = StdinTests(
        inputs=inputs,
        outputs=outputs,
        time_limit_s=_seconds(record.get("time_limit")),
        memory_bytes=int(memory) if memory else None,
        extraction="last_python",
    )
    return Problem(task_id=task_id_of(record, ("name", "task_id"), reading.position), tests=cases)


def _seconds(limit: Any) -> float | None:
    """CodeContests' time_limit: {seconds, nanos} (the dataset's), or a number of seconds; None or 0: none."""
    if limit in (None, 0, {}):
        return None
    if isinstance(limit, dict):
        return float(limit.get("seconds") or 0) + float(limit.get("nanos") or 0) / 1e9 or None
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0:
        return float(limit)
    raise ValueError("time_limit: expected {seconds, nanos} or a positive number of seconds")


SHAPE = Shape(
    "CodeContests' (public_tests, private_tests, generated_tests)",
    12,
    lambda record: "public_tests" in record or "private_tests" in record or "generated_tests" in record,
    problem,
)
