"""Tests that are a test file (BigCodeBench, ClassEval, a unittest or pytest suite of one's own): the
program and the file run as one module in the candidate's own process, then the file's tests
(worker/candidate/testfile.py), each test's outcome sent as it ends.

A sample passes when every test ran and none failed or errored: BigCodeBench's rule, which also makes a
module that does not load (a syntax error, an exception at the top level, no TestCases class) a failure,
and a sample that runs out of time a timeout. Beyond BigCodeBench, each test's own outcome is kept
(RunResult.tests), so a sample's score is tests passed / tests and a report shows which tests fail most.
The time limit is the whole sample's, counted as codeexec counts time: the problem's own, else the run's,
else 60 s (BigCodeBench's harness: its 240 s), at most an hour. BigCodeBench's memory limits (address
space and data 30 GiB, stack 10 MiB) count from what the candidate's process starts with
(worker/process/runner.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.result import Outcome, RunResult
from codeexec.protocol.settings import MAX_SUITE_TIMEOUT_S
from codeexec.worker.judging.context import time_limit
from codeexec.worker.judging.kind import Kind
from codeexec.worker.process.runner import Harness, run_program

if TYPE_CHECKING:
    from codeexec.protocol.run import RunMeta
    from codeexec.worker.judging.context import Context

#: A sample's time limit where neither its problem nor the run gives one; with BigCodeBench's harness,
#: BigCodeBench 0.2.5's (bigcodebench/evaluate.py).
DEFAULT_TIME_LIMIT_S = 60.0
BIGCODEBENCH_TIME_LIMIT_S = 240.0
_TRACEBACK_CHARS = 2000  # of each failing test's traceback, its end: BigCodeBench's details keep them whole


def judge(program: str, tests: SuiteTests, context: Context) -> RunResult:
    return run_suite(program, tests, context.meta.options.timeout_s, context.options)


def host_compared(tests: SuiteTests) -> int:
    return 0  # all in the candidate's process


def options_for(tests: SuiteTests, options: dict[str, object]) -> dict[str, object]:
    """The runner's options for a sample of this problem: its problem set's limits, and with the relaxed
    posture, no import denylist (the kernel's sandbox carries the load: docs/security.md)."""
    limits = {"memory_bytes": tests.memory_bytes, "data_bytes": tests.data_bytes, "stack_bytes": tests.stack_bytes}
    options = dict(options) | {name: value for name, value in limits.items() if value is not None}
    if tests.relaxed:
        options |= {"deny_imports": False, "posture": "relaxed"}
    return options


def run_suite(code: str, tests: SuiteTests, time_limit_s: float | None, options: dict[str, object]) -> RunResult:
    """Run the program and its test file's tests; `time_limit_s`: the run's own (--timeout), if it gave one."""
    default = BIGCODEBENCH_TIME_LIMIT_S if tests.harness == "bigcodebench" else DEFAULT_TIME_LIMIT_S
    limit = time_limit(tests.time_limit_s, time_limit_s, default, MAX_SUITE_TIMEOUT_S)
    suite = {
        "framework": tests.framework,
        "code": tests.code,
        "classes": tests.classes,
        "harness": tests.harness,
        "detail_chars": _TRACEBACK_CHARS,
    }
    run = run_program(code, Harness("suite", suite), limit, **options_for(tests, options))
    return suite_result(run, len(tests.names))


def suite_result(run: RunResult, expected: int) -> RunResult:
    """The sample's result from its process's: the tests' outcomes decide a run that got through them."""
    ran = run.tests
    passed = sum(test.outcome in ("pass", "skip") for test in ran)
    first = next((test for test in ran if test.outcome in ("fail", "error")), None)
    # A suite that ran to its end counts its own tests (a pytest parametrization adds some); one cut
    # short counts those it was found to hold.
    total = len(ran) if run.exit_code is Outcome.PASS else max(expected, len(ran))
    update: dict[str, object] = {"passed": passed, "total": total, "score": passed / total if total else 0.0}
    if run.exit_code is Outcome.PASS and first is not None:
        failed = sum(test.outcome in ("fail", "error") for test in ran)
        summary = first.detail.strip().splitlines()[-1] if first.detail.strip() else first.outcome
        update |= {
            "exit_code": Outcome.ASSERTION_FAIL,
            "detail": f"{failed} of {total} tests failed; first {first.name}: {summary}",
            "message": summary,
        }
    elif run.exit_code is Outcome.PASS and not ran:
        update |= {"exit_code": Outcome.ERROR, "detail": "the test file holds no tests", "score": 0.0}
    return run.model_copy(update=update)


def describe_limits(meta: RunMeta) -> str:
    timeout, environment = meta.options.timeout_s, meta.options.environment
    default = f"{DEFAULT_TIME_LIMIT_S:g} s, BigCodeBench's {BIGCODEBENCH_TIME_LIMIT_S:g} s"
    limit = f"{time_limit(None, timeout, 0, MAX_SUITE_TIMEOUT_S):g} s" if timeout else default
    where = f"environment {environment}" if environment else "the workers' own Python"
    posture = "relaxed (programs run, loopback up, no import denylist)" if meta.relaxed else "strict"
    return f"a sample {limit} (or the problem's own); {where}; sandbox posture {posture}"


KIND = Kind(SuiteTests, judge, host_compared, "test files", describe_limits)
