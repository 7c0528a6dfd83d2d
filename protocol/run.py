"""A run, as the producer stores it and the workers read it: the options it was asked for (RunOptions), the
record of what it was made of (RunMeta), and the jobs its samples are cut into (Job)."""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_core import PydanticCustomError

from codeexec.protocol.kinds import JudgeMode
from codeexec.protocol.models import SampleKind

#: The k a report gives where a run asks for none: those of them every task has samples for.
DEFAULT_K = (1, 10, 100)

#: The run priorities that have names (worker/queue/schedule.py serves higher ones first).
PRIORITIES = {"high": 10, "normal": 0, "low": -10}


def priority_name(priority: int) -> str:
    """ "high", "normal", "low", or the number."""
    return next((name for name, value in PRIORITIES.items() if value == priority), str(priority))


#: MBPP's conventional splits, by task id (Austin et al. 2021): 1-10 are few-shot prompts, 11-510 the test set
#: people report, 511-600 validation, 601-974 training (producer/inputs/problems.py narrows a run to one).
Split = Literal["all", "prompt", "test", "validation", "train"]
MBPP_SPLITS = dict(zip(get_args(Split), (None, (1, 10), (11, 510), (511, 600), (601, 974)), strict=True))


def _flag(name: str = "", metavar: str = "") -> dict[str, Any]:
    """A field's command-line flag, where it is not its name's, and what its value is called in its usage
    (producer/entry/flags.py)."""
    return {"flag": name, "metavar": metavar}


def _expected(what: str) -> PydanticCustomError:
    return PydanticCustomError("run_option", "expected {what}", {"what": what})


class RunOptions(BaseModel):
    """Every option a run takes, in one place: the command line's flags are made from these fields (each
    field's flag is `--` and its name, or the `flag` it names: producer/entry/flags.py), the Python API takes
    them as keyword arguments (codeexec.submit(..., timeout_s=5)), the service sets its own; each entry point
    builds one and passes it whole. A run stores the options it was submitted with, its defaults filled in
    (RunMeta.options). A field's description is its flag's help."""

    model_config = ConfigDict(extra="forbid")

    k: list[int] | None = Field(
        None,
        description="pass@k to report, comma-separated (default: 1, 10 and 100, each where every task has that "
        "many samples)",
        json_schema_extra=_flag(metavar="1,10,100"),
    )
    timeout_s: float | None = Field(
        None,
        description="the run's time limit of a test, where its problem gives none (default: each kind's: 3 s an "
        "assertions sample, at most 30; EvalPlus's rule a HumanEval+ call; 6 s a competitive-programming test, "
        "LiveCodeBench's; 60 s a test file's sample, BigCodeBench's 240, at most 3600; or CODEEXEC_TIMEOUT_S); "
        "time it could run: load does not count (docs/time-limits.md)",
        json_schema_extra=_flag("--timeout", "SECONDS"),
    )
    hash_seed: int | None = Field(
        None,
        description="PYTHONHASHSEED of every candidate (default 0, or CODEEXEC_HASH_SEED): the same verdicts every run",
        json_schema_extra=_flag(metavar="N"),
    )
    isolation: Literal["fork", "fresh"] | None = Field(
        None,
        description="fork: each candidate forked from a warm interpreter; fresh: a new interpreter each "
        "(default: CODEEXEC_ISOLATION, or fork: see docs/security.md)",
    )
    priority: int = Field(
        0,
        description="high, normal (default), low or a whole number: workers serve higher priorities first; runs "
        "of the same priority share them evenly",
        json_schema_extra=_flag(metavar="high|normal|low|N"),
    )
    environment: str | None = Field(
        None,
        description="the environment candidates run in (default: the problem set's; 'none': the workers' own)",
        json_schema_extra=_flag(metavar="NAME|none"),
    )
    split: Split = Field("all", description="MBPP split (test: task ids 11-510; default all)")
    challenge: bool = Field(
        False, description="add MBPP's challenge_test_list to its tests", json_schema_extra=_flag("--mbpp-challenge")
    )
    treat_as: SampleKind | None = Field(
        None,
        description="run every sample as this kind, whatever its field is called (default: by field; see "
        "docs/formats.md)",
    )
    skip_unknown: bool = Field(False, description="leave out samples whose task_id is unknown")
    strict_verdicts: bool = Field(
        False,
        description="a sample whose problem has an assertion the host cannot compare is an error (for rewards)",
    )
    judge_mode: JudgeMode | None = Field(
        None,
        description="competitive-programming problems: how outputs are compared (default: each problem's, lcb "
        "unless it says; see docs/judging.md)",
    )
    all_tests: bool = Field(
        False, description="competitive-programming problems: run every test, not to a failure (score: passed / tests)"
    )
    min_time_limit_s: float = Field(
        1.0,
        description="HumanEval+, MBPP+: the least time limit of a call, seconds (EvalPlus's --min-time-limit; "
        "default 1)",
        json_schema_extra=_flag("--min-time-limit", "SECONDS"),
    )
    gt_time_limit_factor: float = Field(
        4.0,
        description="HumanEval+, MBPP+: a call may take this times the canonical solution's time (EvalPlus's; "
        "default 4)",
        json_schema_extra=_flag(metavar="FACTOR"),
    )

    @field_validator("k", mode="before")
    @classmethod
    def _k(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            try:
                value = [int(part) for part in value.split(",") if part.strip()]
            except ValueError:
                raise _expected("whole numbers like 1,10,100") from None
        if isinstance(value, int) and not isinstance(value, bool):
            value = [value]
        if not isinstance(value, (list, tuple, set)) or not value:
            raise _expected("whole numbers like 1,10,100")
        if any(not isinstance(k, int) or isinstance(k, bool) or k <= 0 for k in value):
            raise _expected("every k a positive whole number")
        return sorted(set(value))

    def ks(self, fewest: int) -> list[int]:
        """The k to report of a run whose tasks have at least `fewest` samples each: those asked for; else
        DEFAULT_K's that many samples allow (1 at least)."""
        return self.k if self.k is not None else [k for k in DEFAULT_K if k <= fewest] or [1]

    @field_validator("timeout_s", mode="before")
    @classmethod
    def _seconds(cls, value: Any) -> Any:
        return None if value is None else _positive(value, "a positive, finite number of seconds")

    @field_validator("min_time_limit_s", "gt_time_limit_factor", mode="before")
    @classmethod
    def _positive_number(cls, value: Any) -> Any:
        return _positive(value, "a positive number")

    @field_validator("hash_seed", mode="before")
    @classmethod
    def _hash_seed(cls, value: Any) -> Any:
        if value is None:
            return None
        try:
            seed = int(value) if isinstance(value, (str, int)) and not isinstance(value, bool) else -1
        except ValueError:
            seed = -1
        if not 0 <= seed <= 4294967295:
            raise _expected("a whole number from 0 to 4294967295")
        return seed

    @field_validator("priority", mode="before")
    @classmethod
    def _priority(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in PRIORITIES:
            return PRIORITIES[text]
        try:
            return int(text)
        except ValueError:
            raise _expected("high, normal, low or a whole number") from None


def _positive(value: Any, what: str) -> float:
    try:
        number = float(value) if isinstance(value, (str, int, float)) and not isinstance(value, bool) else math.nan
    except ValueError:
        number = math.nan
    if not (math.isfinite(number) and number > 0):
        raise _expected(what)
    return number


#: Run options as older codeexecs stored them, beside the run's record (RunMeta), by their names now (an older
#: run's own timeout_s was its assertions' limit, which is each problem's now).
_OLDER_OPTIONS = {
    "time_limit_s": "timeout_s",
    **{name: name for name in RunOptions.model_fields if name != "timeout_s"},
}


class Job(BaseModel):
    """Samples of a run to evaluate, as (task_id, sample index) pairs: what a worker takes at a time
    (worker/queue/schedule.py)."""

    run: str
    samples: list[tuple[str, int]] = Field(min_length=1)


class RunMeta(BaseModel):
    """A run as submitted: its options, what it was made of (its problems and samples, and their digests),
    and where it stands. Stored once at keys.meta(run) (producer/run.py), read by every worker of it."""

    run: str
    created: float = Field(description="Unix time the run was submitted.")
    status: Literal["storing", "stored", "queued", "cancelled"] = "storing"
    options: Annotated[RunOptions, Field(description="What it was asked for, its defaults filled in.")] = Field(
        default_factory=RunOptions
    )
    problems: str = Field(description="'humaneval', a problem set's name, or the path of the problems file.")
    problems_sha256: str = Field("", description="sha256 of the problems file (of a problem set's bundled file).")
    samples_path: str
    samples_sha256: str
    n_samples: int
    n_tasks: int
    kinds: list[str] | None = Field(
        None,
        description="The kinds of test its problems have (worker/judging/kinds/); None: a run of an older codeexec, "
        "whose problems were of one kind, assertions unless its flags said another.",
    )
    relaxed: bool = Field(False, description="Some problems run under the relaxed sandbox posture (docs/security.md).")
    notify: bool = Field(
        False, description="Each result is published as it is recorded (keys.done()): the HTTP service's run."
    )
    runner: dict[str, Any] = Field(
        default_factory=dict,
        description="How its candidates are limited (settings.RUN_SETTINGS), as the command that submitted it was "
        "set; a worker's own settings fill in what a run of an older codeexec lacks.",
    )
    settings: dict[str, object] = Field(default_factory=dict, description="Producer settings, for the record.")
    version: str = Field("", description="The version of codeexec that submitted the run.")

    @model_validator(mode="before")
    @classmethod
    def _older(cls, data: Any) -> Any:
        """A run stored by an older codeexec: its options beside its record (and the run's limit of a test file
        named suite_time_limit_s, where it gave one: its assertions' were in each problem), and a flag for each
        kind its problems had."""
        if not isinstance(data, dict) or "options" in data:
            return data
        data = dict(data)
        if data.get("time_limit_s") is None and data.get("suite_time_limit_s") is not None:
            data["time_limit_s"] = data["suite_time_limit_s"]
        options = {now: data.pop(then) for then, now in _OLDER_OPTIONS.items() if then in data}
        flags = {flag: data.pop(flag, None) for flag in _OLDER_KINDS}
        for dropped in ("suite_time_limit_s", "timeout_s", "test_time_limit_s"):
            data.pop(dropped, None)
        if "kinds" not in data and any(flag is not None for flag in flags.values()):
            kinds = [kind for flag, kind in _OLDER_KINDS.items() if flags[flag]]
            data["kinds"] = kinds if kinds or flags["assertion_tests"] is not None else ["assertions"]
        return data | {"options": options}

    @model_validator(mode="after")
    def _filled(self) -> RunMeta:
        """Its candidates' hash seed and isolation, which the producer fills in from its settings: where a run
        was stored without them (an older codeexec's, a test's), what they were then."""
        if self.options.hash_seed is None or self.options.isolation is None:
            filled = {"hash_seed": self.options.hash_seed or 0, "isolation": self.options.isolation or "fresh"}
            self.options = self.options.model_copy(update=filled)
        return self

    def has(self, kind: str) -> bool:
        """Whether some of its problems' tests are of `kind` (an older run: assertions, where it says nothing)."""
        return kind in (self.kinds if self.kinds is not None else ["assertions"])


#: The flag of each kind a run of an older codeexec kept, and the kind.
_OLDER_KINDS = {
    "assertion_tests": "assertions",
    "base_tests": "evalplus",
    "case_tests": "stdin",
    "suite_tests": "suite",
    "program_tests": "program",
}
