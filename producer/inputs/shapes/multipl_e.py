"""MultiPL-E's rows in another language than Python (name, language, prompt, tests, stop_tokens; the Hugging Face
nuprl/MultiPL-E rows, and the same in its completions files): a completion's program is prompt + completion +
"\\n" + tests, the completion cut at the first stop token (protocol/kinds.py, ProgramTests)."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from codeexec.producer.inputs.programs import another_language, language_named
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import ProgramTests
from codeexec.protocol.models import Problem


class _MultiPLE(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    language: str
    prompt: str
    tests: str = Field(validation_alias=AliasChoices("tests", "test"))  # test: the copies DeepSeek's, Reflexion's
    stop_tokens: list[str] = []


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    row = _MultiPLE.model_validate(record)
    tests = ProgramTests(
        language=language_named(row.language, "multipl-e"),
        tests=row.tests,
        stop_tokens=row.stop_tokens,
        benchmark="multipl-e",
    )
    return Problem(task_id=row.name, prompt=row.prompt, tests=tests)


def _fits(record: dict[str, Any]) -> bool:
    return another_language(record) and ("tests" in record or "test" in record) and "name" in record


SHAPE = Shape("MultiPL-E's (name, language, prompt, tests, stop_tokens)", 20, _fits, problem)
