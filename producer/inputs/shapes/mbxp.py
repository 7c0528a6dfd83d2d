"""MBXP's rows (mxeval's: task_id MBCPP/1, language, prompt, test): a completion's program is prompt + completion
+ test, judged as mxeval judges it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from codeexec.producer.inputs.programs import another_language, language_named
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import ProgramTests
from codeexec.protocol.models import Problem


class _MBXP(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    language: str
    prompt: str
    test: str


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    mbxp = _MBXP.model_validate(record)
    language = language_named(mbxp.language, "mxeval")
    tests = ProgramTests(language=language, tests=mbxp.test, joiner="", benchmark="mxeval")
    return Problem(task_id=mbxp.task_id, prompt=mbxp.prompt, tests=tests)


SHAPE = Shape("MBXP's (task_id, language, prompt, test)", 22, another_language, problem)
