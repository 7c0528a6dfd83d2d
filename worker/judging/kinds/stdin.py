"""stdin/stdout tests: each test runs the program as a script in a process of its own, its input on a
real standard input, and the host compares what it printed (worker/judging/helpers/cases.py says how a sample
is judged).

One candidate's process per sample is the tests' runner (worker/candidate/forked_runs.py): it runs the
mode's prelude and compiles the program once, then forks a process for each test, which runs the
program as __main__, as `python program.py < input` would, confined by the sandbox; between tests
everything the test started is killed and what it wrote removed. So no test can change another's
state, time or verdict, which LiveCodeBench's grader, running every test in one process, cannot promise
(docs/competitive.md); and a test costs a fork of a warm process, not a process started by the host.
Each test's output comes to the host as it ends, is judged here, and the host says whether the runner
goes on (the first failure stops it, unless every test is to run).
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from codeexec.protocol.kinds import JudgeMode, StdinTests
from codeexec.protocol.result import Outcome, RunResult, Verdict
from codeexec.protocol.settings import runner_config
from codeexec.worker.judging.helpers import cases, checker
from codeexec.worker.judging.helpers.cases import Plan, Tally, wrong
from codeexec.worker.judging.helpers.outputs import same_stdout
from codeexec.worker.judging.helpers.steps import Failed, compile_succeeded, prepare
from codeexec.worker.judging.kind import Kind
from codeexec.worker.languages import language_of
from codeexec.worker.process.runner import Harness, run_program
from codeexec.worker.process.watch import TestEnded, said_on_stderr

if TYPE_CHECKING:
    from codeexec.worker.judging.context import Context

_OUTPUT_ROOM = 4096  # what a test may print beyond twice its expected output, whatever the cap
# The runner's own time beyond its tests' budget: its start, the prelude, compiling, a fork and a
# clean-up a test. Only a runner that cannot go on meets it.
_SLACK_S, _SLACK_PER_TEST_S = 5.0, 0.05


def judge(program: str, tests: StdinTests, context: Context) -> RunResult:
    return run_tests(program, tests, Plan.of(tests, context.meta, context.options))


def run_tests(code: str, tests: StdinTests, plan: Plan) -> RunResult:
    """Run the program on each test's input in turn and judge what it printed."""
    total = len(tests.inputs)
    tally = Tally(total)
    config = runner_config(**plan.options)
    # A test may print its answer however large it is: the cap is at least twice the expected output.
    caps = [max(config.output_bytes, 2 * len(wanted.encode()) + _OUTPUT_ROOM) for wanted in tests.outputs]
    finished: list[tuple[int, str]] = []  # tests whose program ended, and their output: the checker's to judge

    def judge(test: TestEnded) -> bool:
        verdict, detail = verdict_of_end(test, plan.mode)
        if verdict is None and tests.checker is not None:
            finished.append((test.index, test.stdout))
            verdict = Verdict.ACCEPTED  # until the checker says otherwise
        elif verdict is None:
            wanted = tests.outputs[test.index]
            accepted = same_stdout(plan.mode, test.stdout, wanted)
            verdict = Verdict.ACCEPTED if accepted else Verdict.WRONG_ANSWER
            detail = "" if accepted else wrong(wanted, test.stdout)
        tally.add(verdict, detail)
        return verdict is Verdict.ACCEPTED or plan.all_tests

    if tests.language != "python":
        run = _in_language(code, tests, plan, caps, judge)
    else:
        run = _in_python(code, tests, plan, caps, judge)
    if run.exit_code is Outcome.INFRA_ERROR:  # the machine's failure, not the program's: no test's verdict
        return run.model_copy(update={"total": total})
    return _checked(run, tests, plan, tally, finished)


def _in_python(
    code: str, tests: StdinTests, plan: Plan, caps: list[int], judge: Callable[[TestEnded], bool]
) -> RunResult:
    """Run a Python program on each test's input: the candidate's process is the tests' runner, and forks
    the program's process for each test from its warm interpreter (worker/candidate/forked_runs.py)."""
    config = runner_config(**plan.options)
    stdio = {
        "prelude": plan.prelude,
        "inputs": marshal.dumps([given.encode() for given in tests.inputs]),
        "limit": plan.time_limit_s,
        "caps": caps,
        "stderr_cap": config.stderr_bytes,
        "budget": plan.budget_s,
        "ceiling": config.wall_ceiling_factor,
    }
    options = plan.options | {"output_bytes": max(caps)}
    timeout = plan.budget_s + _SLACK_S + _SLACK_PER_TEST_S * len(tests.inputs)
    return run_program(code, Harness("stdin", stdio, prelude=plan.prelude), timeout, on_test=judge, **options)


def _checked(run: RunResult, tests: StdinTests, plan: Plan, tally: Tally, finished: list[tuple[int, str]]) -> RunResult:
    """The result of the tests that ran in `run`, the checker's verdicts on the outputs of those that ended."""
    tally.ran(run)
    if run.exit_code is not Outcome.PASS:  # the runner did not go on: the program does not compile, or worse
        tally.add(Verdict.TIME_LIMIT if run.exit_code is Outcome.TIMEOUT else Verdict.RUNTIME_ERROR, run.detail)
        tally.compile_error = run.detail if run.exit_code is Outcome.SYNTAX_ERROR else None
    return checker.result(tests, finished, plan, tally)


def _in_language(
    code: str, tests: StdinTests, plan: Plan, caps: list[int], judge: Callable[[TestEnded], bool]
) -> RunResult:
    """Run a program in another language on each test's input: compiled once (worker/judging/kinds/program.py,
    prepare(): kept from before, by a compiler kept running, or as a step), then each test a run of what it
    made, in a process of its own, under the test's time limit; `judge` is given each as it ends. The run of
    the tests; a compile that failed, as its syntax_error; the machine's failure, infra_error."""
    language = language_of(tests.language, "competitive")
    ready = prepare(code, language, plan.options)
    if isinstance(ready, RunResult):
        return ready
    if isinstance(ready, Failed):
        return ready.result()
    runs = [
        replace(ready.run, limit=plan.time_limit_s, stdin=given.encode(), cap=cap)
        for given, cap in zip(tests.inputs, caps, strict=True)
    ]
    run, ended = ready.execute([*ready.compiles, *runs], on_run=lambda n, test: judge(replace(test, index=n)))
    compiles = [(step, test) for step, test in ended if step.kind == "compile"]
    if len(compiles) < len(ready.compiles) or not all(compile_succeeded(language, test) for _, test in compiles):
        return Failed(language, [run], compiles).result()  # compiled in the tests' run (no kept files): it failed
    return run


def verdict_of_end(test: TestEnded, mode: JudgeMode) -> tuple[Verdict | None, str]:
    """The verdict of a test whose program did not end normally, and why; (None, "") when it did, and its
    output is to be compared."""
    if test.ended == "pass":
        return None, ""
    if test.ended == "limit":
        return Verdict.TIME_LIMIT, test.detail
    if test.ended == "output":
        return Verdict.OUTPUT_LIMIT, test.detail
    if test.detail.startswith("MemoryError"):
        return Verdict.MEMORY_LIMIT, test.detail
    if test.detail.startswith("SystemExit") and mode != "exact":  # the in-process graders swallow SystemExit
        return None, ""
    # A compiled program's account of itself is its stderr (a Python test's is its detail: its stderr is
    # only counted).
    return Verdict.RUNTIME_ERROR, test.detail + said_on_stderr(test.stderr)


KIND = Kind(StdinTests, judge, cases.host_compared, cases.TITLE, cases.describe_limits)
