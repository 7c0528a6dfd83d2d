"""Problems in other languages than Python, in the shapes their benchmarks publish (SHAPES): each is a
ProgramTests problem (protocol/models.py), judged as its benchmark's harness judges it
(worker/judging/programs.py, worker/languages/).

- MultiPL-E's rows (name, language, prompt, tests, stop_tokens; the Hugging Face nuprl/MultiPL-E rows, and
  the same in its completions files): a completion's program is prompt + completion + "\\n" + tests, the
  completion cut at the first stop token;
- MBXP's (mxeval's: task_id MBCPP/1, language, prompt, test): prompt + completion + test;
- HumanEval-X's (CodeGeeX's: task_id CPP/0, prompt, declaration, test): as CodeGeeX assembles them.

A row's language must be one codeexec runs, and its toolchain must be on this machine where the workers
are this machine's (worker/languages/: `codeexec doctor` lists them); else the file's line is named with
the package to install, and nothing is enqueued.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from codeexec.protocol.models import Problem, ProgramTests
from codeexec.protocol.settings import get_settings
from codeexec.worker.languages import LANGUAGES, language_of, name_of

SHAPES = (
    "MultiPL-E's (name, language, prompt, tests, stop_tokens), MBXP's (task_id, language, prompt, test) or "
    "HumanEval-X's (task_id such as CPP/0, prompt, declaration, test)"
)
#: What a language field may say of Python: those rows are read as Python's shapes are.
PYTHON = {"python", "python3", "py"}
#: HumanEval-X's task id prefixes, and the languages they name.
HUMANEVAL_X = {"CPP": "cpp", "Java": "java", "JavaScript": "javascript", "Go": "go", "Rust": "rust"}
_HUMANEVAL_X_ID = re.compile(r"^(?P<prefix>[A-Za-z]+)/\d+$")


class _MultiPLE(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    language: str
    prompt: str
    tests: str
    stop_tokens: list[str] = []


class _MBXP(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    language: str
    prompt: str
    test: str


class _HumanEvalX(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    prompt: str
    declaration: str = ""
    test: str


def shape_of(record: dict[str, Any]) -> str | None:
    """Which benchmark's row this is, if it is one of another language than Python's."""
    language = record.get("language")
    if isinstance(language, str) and language.strip().lower() in PYTHON:
        return None
    if "tests" in record and "name" in record and isinstance(language, str):
        return "multipl-e"
    task_id = record.get("task_id")
    found = _HUMANEVAL_X_ID.match(task_id) if isinstance(task_id, str) else None
    if found and found["prefix"] in HUMANEVAL_X and "declaration" in record and not isinstance(language, str):
        return "humaneval-x"
    if isinstance(language, str):
        return "mbxp"
    return None


def problem(record: dict[str, Any], shape: str) -> Problem:
    """The problem of a row of `shape`; ValueError says what is wrong (a language codeexec does not run,
    a toolchain this machine lacks)."""
    if shape == "multipl-e":
        row = _MultiPLE.model_validate(record)
        tests = ProgramTests(
            language=_language(row.language, shape),
            tests=row.tests,
            stop_tokens=row.stop_tokens,
            benchmark=shape,
        )
        return Problem(task_id=row.name, prompt=row.prompt, tests=tests)
    if shape == "mbxp":
        mbxp = _MBXP.model_validate(record)
        language = _language(mbxp.language, "mxeval")
        tests = ProgramTests(language=language, tests=mbxp.test, joiner="", benchmark="mxeval")
        return Problem(task_id=mbxp.task_id, prompt=mbxp.prompt, tests=tests)
    row_x = _HumanEvalX.model_validate(record)
    found = _HUMANEVAL_X_ID.match(row_x.task_id)
    assert found is not None
    language = HUMANEVAL_X[found["prefix"]]
    tests = ProgramTests(language=_language(language, shape), tests=row_x.test, benchmark=shape)
    return Problem(task_id=row_x.task_id, prompt=row_x.prompt, tests=tests)


def _language(given: str, benchmark: str) -> str:
    """codeexec's name of the language a row names; ValueError where codeexec does not run it, or where
    the workers are this machine's (no CODEEXEC_REDIS_URL) and it lacks the toolchain. Workers elsewhere
    say so of theirs (an infra_error naming the package)."""
    name = name_of(given)
    if name is None:
        known = ", ".join(sorted(LANGUAGES))
        raise ValueError(f"language {given!r}: codeexec does not run it (it runs Python and {known})")
    language = language_of(name, benchmark)
    if language.refused:
        raise ValueError(f"language {given!r} of {benchmark}: {language.refused}")
    if get_settings().redis_url is None:
        found = language.toolchain()
        if isinstance(found, str):
            raise ValueError(f"language {given!r}: {found}")
    return name
