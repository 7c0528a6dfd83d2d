"""ClassEval's rows (task_id, skeleton, test, test_classes): its test module's `test_classes`, with the relaxed
sandbox posture (two tasks use socket and urllib)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.producer.inputs.testfiles import test_names
from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.models import Problem


class _ClassEvalRecord(BaseModel):
    task_id: str = Field(min_length=1)
    skeleton: str = ""
    test: str
    test_classes: list[str] = Field(min_length=1)


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    classeval = _ClassEvalRecord.model_validate(record)
    # ClassEval_97 lists " Words2NumbersTestMain": ClassEval's own getattr() fails on it and counts that
    # class an error for every sample; the class it means is run here.
    classes = [name.strip() for name in classeval.test_classes]
    return Problem(
        task_id=classeval.task_id,
        prompt=classeval.skeleton,
        tests=SuiteTests(
            code=classeval.test,
            classes=classes,
            names=test_names(classeval.test, "unittest", classes),
            relaxed=True,
        ),
    )


SHAPE = Shape(
    "ClassEval's (task_id, test, test_classes)",
    32,
    lambda record: "test_classes" in record and "test" in record,
    problem,
)
