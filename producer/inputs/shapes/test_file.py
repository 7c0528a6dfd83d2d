"""codeexec's own test-file shape (task_id, test_file, optional framework, test_classes, prompt, setup,
timeout_s): a unittest module, or a pytest file (told apart by its TestCase classes where it does not say)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.producer.inputs.testfiles import parse, test_cases, test_names
from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.models import Problem


class _TestFileRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    test_file: str = Field(min_length=1)
    framework: Literal["unittest", "pytest"] | None = None
    test_classes: list[str] | None = Field(None, min_length=1)
    prompt: str = ""
    setup: str = ""
    timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False)


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    own = _TestFileRecord.model_validate(record)
    framework = own.framework or ("unittest" if test_cases(parse(own.test_file)) else "pytest")
    return Problem(
        task_id=own.task_id,
        prompt=own.prompt,
        setup=own.setup,
        tests=SuiteTests(
            framework=framework,
            code=own.test_file,
            classes=own.test_classes,
            names=test_names(own.test_file, framework, own.test_classes),
            time_limit_s=own.timeout_s,
        ),
    )


SHAPE = Shape(
    "codeexec's test file (task_id, test_file, optional framework, test_classes, prompt, setup, timeout_s)",
    30,
    lambda record: "test_file" in record,
    problem,
)
