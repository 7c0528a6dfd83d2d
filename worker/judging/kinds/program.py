"""Programs in other languages than Python (MultiPL-E's, HumanEval-X's and MBXP's rows): the program with its
tests appended is written to its language's file, compiled if the language is, and run; it passes by
exiting with status 0, as the references' harnesses judge it (worker/languages/ holds each language's
commands; docs/languages.md says where codeexec and the references differ). How a program is compiled and
run, step by step, and how its steps' ends read as an outcome: worker/judging/helpers/steps.py.

The run's time limit is the test's: the problem's own, else the run's, else the language's (MultiPL-E's 15 s),
at most 60 s; a compile's is its language's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeexec.protocol.kinds import ProgramTests
from codeexec.protocol.result import Outcome, RunResult
from codeexec.worker.judging.context import time_limit
from codeexec.worker.judging.helpers.steps import run_in
from codeexec.worker.judging.kind import Kind
from codeexec.worker.languages import SELF_TESTS, language_of

if TYPE_CHECKING:
    from codeexec.protocol.run import RunMeta
    from codeexec.worker.judging.context import Context

#: The longest run a problem or a run may give a program (a compile's limit is its language's).
MOST_S = 60.0


def judge(program: str, tests: ProgramTests, context: Context) -> RunResult:
    language = language_of(tests.language, tests.benchmark)
    return run_in(program, language, context.time_limit(language.run_limit_s, MOST_S), context.options)


def host_compared(tests: ProgramTests) -> int:
    return 1  # its exit status, which the program cannot forge: the runner reads it from the kernel


def self_test(name: str, options: dict[str, object] | None = None) -> dict[str, RunResult]:
    """The language's self-test (worker/languages/language.py, SelfTest) judged as a program of it is here (its
    toolchain's commands, the sandbox, the longest limit a run may have): "passes", "fails" and "broken" (where it
    has one), each its result; self_test_failures() says what of them went wrong."""
    test, language = SELF_TESTS[name], language_of(name)
    given = {"passes": test.passes, "fails": test.fails} | ({"broken": test.broken} if test.broken else {})
    return {what: run_in(program, language, MOST_S, options or {}) for what, program in given.items()}


def self_test_failures(name: str, results: dict[str, RunResult]) -> list[str]:
    """What went wrong in the language's self-test (self_test()): [] where it passed, failed and did not
    compile as its module says."""
    wanted = {"passes": Outcome.PASS, "fails": Outcome(SELF_TESTS[name].fails_as), "broken": Outcome.SYNTAX_ERROR}
    said = {"passes": "that passes", "fails": "whose assertion fails", "broken": "that does not compile"}
    return [
        f"the program {said[what]} came to {result.exit_code.value}, not {wanted[what].value}: {result.detail}"
        for what, result in results.items()
        if result.exit_code is not wanted[what]
    ]


def describe_limits(meta: RunMeta) -> str:
    timeout = meta.options.timeout_s
    run = (
        f"{time_limit(None, timeout, 0, MOST_S):g} s"
        if timeout
        else "its language's (MultiPL-E's 15 s, mxeval's 10 s: docs/languages.md)"
    )
    return f"a run {run} (or the problem's own), at most {MOST_S:g} s; a compile, its language's"


KIND = Kind(ProgramTests, judge, host_compared, "programs in other languages", describe_limits)
