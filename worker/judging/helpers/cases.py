"""Competitive-programming problems (LiveCodeBench, APPS, CodeContests, LeetCode): a sample judged on its
problem's test cases, each test with a verdict of its own.

A stdin test runs the program as a script on the test's input, in a process of its own
(worker/judging/kinds/stdin.py); call-based tests load the program once and call its entry point on each
input (worker/judging/kinds/call.py). This module holds what the two share: the Plan of a sample's run and
the Tally of its tests' verdicts. Either way the runner is the one every sample runs in (sandbox, caps,
clean-up), its time is counted as codeexec counts time (what the test could have run), and the outputs
are compared here, in the host, in the run's judging mode (worker/judging/helpers/outputs.py) or by the problem's
own checker (worker/judging/helpers/checker.py).

The sample's verdict is its first failing test's: as LiveCodeBench does, the tests stop there, unless
the run asks for all of them (its score is then tests passed / tests, APPS's test-case average and
verl's continuous reward). Each test may take its time limit (the problem's own, else the run's, else
LiveCodeBench's 6 s); the sample as a whole, LiveCodeBench's budget, (limit + 1) x tests + 5 seconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codeexec.protocol.kinds import CaseTests, JudgeMode
from codeexec.protocol.result import Outcome, RunResult, Verdict
from codeexec.protocol.run import RunMeta
from codeexec.protocol.settings import with_preload
from codeexec.worker.judging.context import time_limit
from codeexec.worker.judging.helpers.outputs import PRELOADS, PRELUDES, excerpt

#: A test's verdict, as the sample's outcome when it is the first failing one.
_OUTCOMES = {
    Verdict.WRONG_ANSWER: Outcome.ASSERTION_FAIL,
    Verdict.TIME_LIMIT: Outcome.TIMEOUT,
    Verdict.RUNTIME_ERROR: Outcome.ERROR,
    Verdict.MEMORY_LIMIT: Outcome.ERROR,
    Verdict.OUTPUT_LIMIT: Outcome.ERROR,
}


#: A test's time limit where neither its problem nor the run gives one: LiveCodeBench's.
DEFAULT_TIME_LIMIT_S = 6.0


#: What a report calls both kinds' tests.
TITLE = "competitive-programming tests"


def host_compared(tests: CaseTests) -> int:
    """Every output is the host's to compare (stdin and call-based tests alike)."""
    return tests.total


def describe_limits(meta: RunMeta) -> str:
    """Both kinds' limits in a run, as a report says them."""
    options = meta.options
    each = "judged in each problem's mode (lcb unless said)"
    mode = f"judged in mode {options.judge_mode}" if options.judge_mode else each
    stop = "every test run" if options.all_tests else "to the first failing test"
    limit = time_limit(None, options.timeout_s, DEFAULT_TIME_LIMIT_S)
    return f"per test {limit:g} s (or the problem's own), {mode}, {stop}"


@dataclass(frozen=True)
class Plan:
    """How a sample's tests run: the judging mode, each test's time limit, the sample's budget, whether
    every test runs, and the runner's options."""

    mode: JudgeMode
    time_limit_s: float
    budget_s: float
    all_tests: bool
    prelude: str
    options: dict[str, object]

    @classmethod
    def of(cls, tests: CaseTests, meta: RunMeta, options: dict[str, object]) -> Plan:
        mode = meta.options.judge_mode or tests.mode
        limit = time_limit(tests.time_limit_s, meta.options.timeout_s, DEFAULT_TIME_LIMIT_S)
        options = dict(options)
        if tests.memory_bytes is not None:
            options["memory_bytes"] = tests.memory_bytes
        options = with_preload(options, PRELOADS[mode])
        return cls(
            mode=mode,
            time_limit_s=limit,
            budget_s=(limit + 1) * len(tests.inputs) + 5,
            all_tests=meta.options.all_tests if tests.all_tests is None else tests.all_tests,
            prelude=PRELUDES[mode],
            options=options,
        )


@dataclass
class Tally:
    """What a sample's tests came to, test by test, as they ran."""

    total: int
    verdicts: list[Verdict] = field(default_factory=list)
    details: list[str] = field(default_factory=list)
    charged_s: float = 0.0
    duration_s: float = 0.0
    protections: dict[str, str] = field(default_factory=dict)
    wall_clock_only: bool = False
    compile_error: str | None = None  # the program does not compile: no test can run

    def add(self, verdict: Verdict, detail: str = "") -> None:
        self.verdicts.append(verdict)
        self.details.append(detail)

    def ran(self, run: RunResult) -> None:
        """Count a process's time and what it ran under."""
        self.charged_s += run.charged_s
        self.duration_s += run.duration_s
        self.protections = self.protections or run.protections
        self.wall_clock_only = self.wall_clock_only or run.wall_clock_only

    def result(self, all_tests: bool) -> RunResult:
        """The sample's RunResult: its first failing test decides (the verdicts after it are dropped
        unless every test was to run)."""
        first = next((at for at, verdict in enumerate(self.verdicts) if verdict is not Verdict.ACCEPTED), None)
        verdicts = self.verdicts if all_tests or first is None else self.verdicts[: first + 1]
        passed = sum(verdict is Verdict.ACCEPTED for verdict in verdicts)
        if first is None and len(verdicts) == self.total:
            outcome, detail = Outcome.PASS, ""
        elif first is None:  # the budget ran out before the last test
            outcome = Outcome.TIMEOUT
            detail = f"the sample's time budget ran out after {len(verdicts)} of {self.total} tests"
        else:
            verdict = self.verdicts[first]
            outcome = Outcome.SYNTAX_ERROR if self.compile_error else _OUTCOMES[verdict]
            detail = f"test {first + 1} of {self.total}: {verdict}" + (
                f": {self.details[first]}" if self.details[first] else ""
            )
        return RunResult(
            exit_code=outcome,
            score=passed / self.total,
            passed=passed,
            total=self.total,
            detail=detail,
            duration_s=self.duration_s,
            charged_s=self.charged_s,
            wall_clock_only=self.wall_clock_only,
            protections=self.protections,
            verdicts=verdicts,
            first_failures={} if first is None else {"tests": first},
        )


def wrong(expected: str, got: str) -> str:
    """The detail of a wrong answer: what was expected and what came, each cut short."""
    return f"expected {excerpt(expected)!r}, got {excerpt(got)!r}"
