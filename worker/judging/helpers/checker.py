"""A problem's own checker, for problems with more than one right answer (LiveCodeBench issue #106):
a program that defines ``check(input, expected, actual)``, returning whether `actual` is a right answer
to `input` (`expected` being one). For stdin tests the three are the test's texts; for call-based tests,
the call's arguments, the expected value and the value returned.

It runs in the runner like a candidate (the sandbox, the caps), once for all of a sample's tests, called
on each; its time is not the sample's. A checker that raises on a test rejects that output (a checker
that trips over a malformed answer has found a wrong one); one that does not run at all fails the sample
with an error that says so: the problem is at fault, and running it again would not help.
"""

from __future__ import annotations

import marshal
from typing import Any

from codeexec.protocol.kinds import CaseTests
from codeexec.protocol.result import Outcome, RunResult, Verdict
from codeexec.worker.candidate.values import PLAIN_BYTES, decode
from codeexec.worker.judging.helpers.cases import Plan, Tally
from codeexec.worker.process.runner import Harness, run_program

ENTRY_POINT = "check"
_TIME_S = 10.0  # the checker's own time, and as much again for each output it judges
_TIME_PER_CHECK_S = 1.0


def check(code: str, triples: list[tuple[Any, Any, Any]], plan: Plan) -> list[tuple[bool, str]] | RunResult:
    """(accepted, why not) for each (input, expected, actual); a RunResult when the checker did not run."""
    io = {
        "entry_point": ENTRY_POINT,
        "plain": PLAIN_BYTES,
        "checks": [["checker", marshal.dumps([list(triple) for triple in triples]), None, None, None, []]],
    }
    options = {name: value for name, value in plan.options.items() if name != "preload"}
    run = run_program(code, Harness("calls", io), _TIME_S + _TIME_PER_CHECK_S * len(triples), **options)
    if run.exit_code is Outcome.INFRA_ERROR:
        return run
    done = run.checks.get("checker")
    if run.exit_code is not Outcome.PASS or done is None or len(done.outputs) != len(triples):
        why = run.detail or f"it judged {len(done.outputs) if done else 0} of {len(triples)} outputs"
        return RunResult(
            exit_code=Outcome.ERROR, score=0.0, passed=0, total=0, detail=f"the problem's checker failed: {why}"
        )
    judged = []
    for kind, payload, _, _ in done.outputs:
        if kind == "value":
            accepted = bool(decode(payload))
            judged.append((accepted, "" if accepted else "the checker rejected the output"))
        else:
            judged.append((False, f"the checker {'raised ' + str(payload) if kind == 'raised' else kind}"))
    return judged


def result(tests: CaseTests, answers: list[tuple[int, Any]], plan: Plan, tally: Tally) -> RunResult:
    """The sample's result: its tally, with the problem's checker (where it has one) judging `answers`, the
    (test's index, output) of the tests that ended, whose verdicts stand as accepted until it says."""
    if tests.checker is not None and answers:
        triples = [(tests.inputs[index], tests.outputs[index], answer) for index, answer in answers]
        judged = check(tests.checker, triples, plan)
        if isinstance(judged, RunResult):
            return judged.model_copy(update={"total": len(tests.inputs)})
        for (index, _), (accepted, why) in zip(answers, judged, strict=True):
            if not accepted:
                tally.verdicts[index], tally.details[index] = Verdict.WRONG_ANSWER, why
    return tally.result(plan.all_tests)
