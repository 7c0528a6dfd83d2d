"""Call-based tests (LeetCode's `class Solution`, APPS' and LiveCodeBench's fn_name): the program is
loaded once, in a process of its own, and its entry point called on each test's arguments; what each
call returns comes back to the host, which compares it with the expected value (as HumanEval+'s are:
worker/candidate/calls.py, run_io(); worker/judging/helpers/cases.py says how a sample is judged).

The entry point is a method of a new ``Solution()`` where the program has ``class Solution`` (the
substring, LiveCodeBench's rule), else the function of that name. Each call may be charged the test's
time limit, all of them together the sample's budget. The calls stop at the first that surely failed
(it raised, ran over its limit, or returned a value whose digest is not the expected one's where only an
equal value passes), unless every test is to run; the host judges every value it is sent.
"""

from __future__ import annotations

import marshal
from typing import TYPE_CHECKING, Any

from codeexec.protocol.kinds import CallTests
from codeexec.protocol.result import Outcome, RunResult, Verdict
from codeexec.worker.candidate.values import WHOLE_BYTES, decode, digest
from codeexec.worker.judging.helpers import cases, checker
from codeexec.worker.judging.helpers.cases import Plan, Tally, wrong
from codeexec.worker.judging.helpers.outputs import same_value
from codeexec.worker.judging.kind import Kind
from codeexec.worker.process.runner import Harness, run_program

if TYPE_CHECKING:
    from codeexec.worker.judging.context import Context

CHECK = "tests"
_SLACK_S = 2.0  # the runner's limit beyond the calls' budget: for a program that cannot be interrupted


def judge(program: str, tests: CallTests, context: Context) -> RunResult:
    return run_tests(program, tests, Plan.of(tests, context.meta, context.options))


def run_tests(code: str, tests: CallTests, plan: Plan) -> RunResult:
    """Call the entry point on every test's arguments and judge what each call returned."""
    total, outputs = len(tests.inputs), tests.outputs
    # The calls stop at the first value whose digest is not the expected one's, unless it may pass without
    # being equal (tolerant()): it has surely failed. A checker judges values its own way: none stops.
    expected = [digest(output) for output in outputs]
    stops = [
        bool(want) and tests.checker is None and not tolerant(plan.mode, output)
        for want, output in zip(expected, outputs, strict=True)
    ]
    io = {
        "entry_point": tests.entry_point,
        "instance": "class Solution" in code,
        "prelude": plan.prelude,
        "plain": WHOLE_BYTES,  # values sent whole up to this; larger ones as digests
        "all": plan.all_tests,
        "checks": [
            [
                CHECK,
                marshal.dumps(tests.inputs),
                [plan.time_limit_s] * total,
                plan.budget_s,
                expected,
                [index for index, stop in enumerate(stops) if not stop],
            ]
        ],
    }
    run = run_program(code, Harness("calls", io), plan.budget_s + _SLACK_S, **plan.options)
    if run.exit_code is Outcome.INFRA_ERROR:
        return run.model_copy(update={"total": total})
    tally = Tally(total)
    tally.ran(run)
    done = run.checks.get(CHECK)
    if done is None:  # the program did not load, or its process ended before the calls reported
        return _not_called(run, tally)
    values: list[tuple[int, Any]] = []  # calls that returned, for the checker
    for index, (kind, payload, sent, _) in enumerate(done.outputs):
        wanted = (expected[index], tests.outputs[index])
        verdict, detail = _verdict(kind, payload, sent, wanted, plan, tests.checker is not None)
        if verdict is None:
            values.append((index, decode(payload)))
            verdict = Verdict.ACCEPTED  # until the checker says otherwise
        tally.add(verdict, detail)
    if done.stopped == "budget" and len(done.outputs) < total:
        tally.add(Verdict.TIME_LIMIT, "the sample's time budget ran out")
    return checker.result(tests, values, plan, tally)


def _verdict(
    kind: str, payload: Any, sent: str, wanted: tuple[str, Any], plan: Plan, checked: bool
) -> tuple[Verdict | None, str]:
    """A call's verdict and why; (None, "") for a value the checker is to judge. `sent`: the digest of the
    value; `wanted`: the expected value's digest, and the value."""
    wanted_digest, expected = wanted
    if kind == "limit":
        return Verdict.TIME_LIMIT, f"over its time limit of {plan.time_limit_s:g} s"
    if kind == "raised":
        if str(payload).startswith("MemoryError"):
            return Verdict.MEMORY_LIMIT, str(payload)
        return Verdict.RUNTIME_ERROR, str(payload)
    if kind == "unencodable":
        return Verdict.WRONG_ANSWER, f"returned what cannot be compared: {payload}"
    if kind == "digest":  # too large to send whole: equal to the expected value, or not
        # In lcb mode a tuple passes for an expected list: its digest is the tuple's.
        as_tuple = plan.mode == "lcb" and isinstance(expected, list)
        accepted = sent == wanted_digest or (as_tuple and sent == digest(tuple(expected)))
        return (Verdict.ACCEPTED, "") if accepted else (Verdict.WRONG_ANSWER, "a large value, not the expected one")
    if checked:
        return None, ""
    value = decode(payload)
    if same_value(plan.mode, value, expected):
        return Verdict.ACCEPTED, ""
    return Verdict.WRONG_ANSWER, wrong(repr(expected), repr(value))


def tolerant(mode: str, expected: Any) -> bool:
    """Whether a value unequal to `expected` may pass in `mode`: a tuple for a list (lcb), a list's first
    item or int keys for a dict's (apps, prime). In exact mode a pass is an equal value."""
    if mode == "lcb":
        return isinstance(expected, list)
    return mode != "exact" and isinstance(expected, (list, dict))


def _not_called(run: RunResult, tally: Tally) -> RunResult:
    """The program never got to its calls: it does not compile, raised while loading, has no entry point,
    or its process ended (or ran out of time) first."""
    if run.exit_code is Outcome.TIMEOUT:
        tally.add(Verdict.TIME_LIMIT, run.detail)
    else:
        tally.add(Verdict.RUNTIME_ERROR, run.detail)
        tally.compile_error = run.detail if run.exit_code is Outcome.SYNTAX_ERROR else None
    return tally.result(all_tests=False)


KIND = Kind(CallTests, judge, cases.host_compared, cases.TITLE, cases.describe_limits)
