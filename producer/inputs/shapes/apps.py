"""APPS's and TACO's rows (input_output: {inputs, outputs, fn_name?}): stdin tests, or call-based ones where
it names a function, its expected values unwrapped as rllm's taco_to_lcb_format unwraps them."""

from __future__ import annotations

from typing import Any

from codeexec.producer.inputs.competitive import from_json, task_id_of, texts
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import CallTests, StdinTests
from codeexec.protocol.models import Problem


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    spec = record["input_output"]
    if isinstance(spec, str):
        spec = from_json(spec, "input_output")
    if (
        not isinstance(spec, dict)
        or not isinstance(spec.get("inputs"), list)
        or not isinstance(spec.get("outputs"), list)
    ):
        raise ValueError("input_output: expected {inputs: [...], outputs: [...], fn_name?}")
    task_id = task_id_of(record, ("problem_id", "task_id", "id", "name"), reading.position)
    name = spec.get("fn_name")
    if name:
        # As rllm's taco_to_lcb_format takes them: APPS wraps a call's expected value in a list.
        outputs = [output[0] if isinstance(output, list) and len(output) == 1 else output for output in spec["outputs"]]
        inputs = spec["inputs"]
        wrong = next((n for n, given in enumerate(inputs, start=1) if not isinstance(given, list)), None)
        if wrong is not None:
            raise ValueError(f"input_output: input {wrong}: a call's arguments must be a list")
        cases = CallTests(inputs=inputs, outputs=outputs, entry_point=str(name), extraction="last_python")
    else:
        cases = StdinTests(
            inputs=texts(spec["inputs"], "input"),
            outputs=texts(spec["outputs"], "output"),
            extraction="last_python",
        )
    return Problem(task_id=task_id, tests=cases)


SHAPE = Shape("APPS's or TACO's (input_output)", 14, lambda record: "input_output" in record, problem)
