"""stdin/stdout tests: each test runs the program as a script in a process of its own, its input on a
real standard input, and the host compares what it printed (worker/judging/cases.py says how a sample
is judged).

A process per test (a fork of the warm interpreter in isolation "fork", worker/process/zygote.py): no
test can change another's state, time or verdict, which LiveCodeBench's grader, running every test in
one process, cannot promise (docs/judging.md). The program runs as __main__, as `python program.py <
input` would run it, after the mode's prelude (worker/judging/outputs.py; worker/candidate/running.py,
run_script()).
"""

from __future__ import annotations

from codeexec.worker.judging import checker
from codeexec.worker.judging.cases import Plan, Tally, wrong
from codeexec.worker.judging.outputs import same_stdout
from codeexec.worker.models import CaseTests, JudgeMode
from codeexec.worker.process.runner import run_candidate
from codeexec.worker.result import Outcome, RunResult, Verdict
from codeexec.worker.settings import runner_config

_OUTPUT_ROOM = 4096  # what a test may print beyond twice its expected output, whatever the cap


def run_tests(code: str, tests: CaseTests, plan: Plan) -> RunResult:
    """Run the program on each test's input in turn and judge what it printed."""
    tally = Tally(len(tests.inputs))
    cap = runner_config(**plan.options).output_bytes
    finished: list[tuple[int, str]] = []  # tests whose program ended, and their output: the checker's to judge
    for index, (given, wanted) in enumerate(zip(tests.inputs, tests.outputs, strict=True)):
        left = plan.budget_s - tally.charged_s
        if left <= 0:
            break
        # A test may print its answer however large it is: the cap is at least twice the expected output.
        options = plan.options | {"output_bytes": max(cap, 2 * len(wanted.encode()) + _OUTPUT_ROOM)}
        run = run_candidate(code, [], min(plan.time_limit_s, left), stdin=given, prelude=plan.prelude, **options)
        if run.exit_code is Outcome.INFRA_ERROR:
            return run.model_copy(update={"total": tally.total})
        tally.ran(run)
        verdict, detail = ended(run, plan.mode)
        if verdict is None and tests.checker is not None:
            finished.append((index, run.stdout))
            verdict = Verdict.ACCEPTED  # until the checker says otherwise
        elif verdict is None:
            accepted = same_stdout(plan.mode, run.stdout, wanted)
            verdict = Verdict.ACCEPTED if accepted else Verdict.WRONG_ANSWER
            detail = "" if accepted else wrong(wanted, run.stdout)
        tally.add(verdict, detail)
        if run.exit_code is Outcome.SYNTAX_ERROR:  # no test can run
            tally.compile_error = run.detail
            break
        if verdict is not Verdict.ACCEPTED and not plan.all_tests:
            break
    if tests.checker is not None and finished:
        triples = [(tests.inputs[index], tests.outputs[index], output) for index, output in finished]
        judged = checker.check(tests.checker, triples, plan)
        if isinstance(judged, RunResult):
            return judged.model_copy(update={"total": tally.total})
        for (index, _), (accepted, why) in zip(finished, judged, strict=True):
            if not accepted:
                tally.verdicts[index], tally.details[index] = Verdict.WRONG_ANSWER, why
    return tally.result(plan.all_tests)


def ended(run: RunResult, mode: JudgeMode) -> tuple[Verdict | None, str]:
    """The verdict of a test whose program did not end normally, and why; (None, "") when it did, and its
    output is to be compared."""
    if run.exit_code is Outcome.PASS:
        return None, ""
    if run.exit_code is Outcome.TIMEOUT:
        return Verdict.TIME_LIMIT, run.detail
    if run.detail.startswith("output overflow"):
        return Verdict.OUTPUT_LIMIT, run.detail
    if run.detail.startswith("MemoryError"):
        return Verdict.MEMORY_LIMIT, run.detail
    if run.detail.startswith("SystemExit") and mode != "exact":  # the in-process graders swallow SystemExit
        return None, ""
    return Verdict.RUNTIME_ERROR, run.detail
