"""BigCodeBench's rows (task_id, complete_prompt, code_prompt, test, entry_point), as bigcodebench 0.2.5 judges
them by default: its `test` module's TestCases class only, the sample's program calibrated (code_prompt +
"\\n    pass\\n" before it, so that imports and constants a model left out are there), BigCodeBench's harness,
240 s a sample, address space and data 30 GiB and stack 10 MiB, in its environment, and the relaxed sandbox
posture its tasks need (subprocess, sockets, shutil: docs/security.md)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.producer.inputs.testfiles import test_names
from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.models import Problem

#: BigCodeBench 0.2.5's memory limits (bigcodebench/evaluate.py, eval/utils.py), in bytes; its time limit,
#: 240 s, is its harness's (worker/judging/kinds/suite.py).
BIGCODEBENCH_LIMITS = {"memory_bytes": 30 << 30, "data_bytes": 30 << 30, "stack_bytes": 10 << 20}


class _BigCodeBenchRecord(BaseModel):
    task_id: str = Field(min_length=1)
    complete_prompt: str
    code_prompt: str
    test: str
    entry_point: str = "task_func"


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    bcb = _BigCodeBenchRecord.model_validate(record)
    return Problem(
        task_id=bcb.task_id,
        prompt=bcb.complete_prompt,
        entry_point=bcb.entry_point,
        tests=SuiteTests(
            code=bcb.test,
            classes=["TestCases"],
            names=test_names(bcb.test, "unittest", ["TestCases"]),
            harness="bigcodebench",
            calibration=bcb.code_prompt + "\n    pass\n",
            relaxed=True,
            environment="bigcodebench",
            **BIGCODEBENCH_LIMITS,
        ),
    )


SHAPE = Shape(
    "BigCodeBench's (task_id, complete_prompt, code_prompt, test, entry_point)",
    31,
    lambda record: "code_prompt" in record and "complete_prompt" in record and "test" in record,
    problem,
)
