"""HumanEval+ and MBPP+ as EvalPlus 0.3.1 judges them (evalplus/eval/__init__.py, evalplus/evaluate.py).

A task of EvalPlus's shape has no assertions: it has inputs, in two checks, "base" (HumanEval's or
MBPP's own tests) and "plus" (EvalPlus's), and a canonical solution whose outputs are the expected
ones, compared by == or by the task's special oracle (worker/judging/helpers/oracles.py).

1. The truth: once per run and task, a worker runs the canonical solution on every input, in the
   runner like any candidate (worker/candidate/calls.py), and stores what each call returned and the
   time it was charged (keys.truth). Outputs travel as JSON the host decodes, or, when large (strings
   of megabytes in HumanEval/15), as digests of their canonical bytes. The truth is also kept for
   later runs of the same tests on the same interpreter and hash seed (keys.TRUTHS, truth_key()):
   its times are charged times, which the load does not move, so a later run loses nothing by
   taking them, and gets the very limits of the first (EvalPlus keeps its ground truth too, but
   with wall-clock times from whatever load the machine had then).
2. A sample runs the same way, with each call's time limit and each check's budget from the truth:
   input i may take max(min_time_limit, factor * the canonical solution's time) (unless the problem,
   or else the run, gives a limit of its own: context.time_limit()), and a check min(60, the sum of
   its limits) + 2 s. The times are charged as the time limit charges a
   candidate (worker/process/timelimit.py): wall-clock time minus waits for a CPU, for the canonical
   solution as for the sample, so a busy machine moves neither. EvalPlus measures both in
   wall-clock time, which is why its verdicts move with the load.
3. verdicts() compares each output with the expected one here, in the host, as EvalPlus compares them,
   and gives each check EvalPlus's status: "pass", "fail" or "timeout".
"""

from __future__ import annotations

import hashlib
import json
import marshal
import math
import os
from typing import Any

from codeexec.protocol.kinds import EvalPlusTests
from codeexec.protocol.models import Truth
from codeexec.protocol.result import Check, Outcome, RunResult
from codeexec.protocol.run import RunMeta
from codeexec.protocol.settings import runner_config
from codeexec.worker.candidate.values import decode
from codeexec.worker.judging.context import Context, time_limit
from codeexec.worker.judging.helpers import oracles
from codeexec.worker.judging.kind import Kind
from codeexec.worker.process.runner import Harness, run_program

CHECKS = ("base", "plus")
PASS, FAIL, TIMEOUT = "pass", "fail", "timeout"  # EvalPlus's words
TIMEOUT_PER_CHECK_S = 60.0  # EvalPlus's EVALPLUS_TIMEOUT_PER_TASK
CHECK_SLACK_S = 2.0  # what EvalPlus adds to a check's timeout (fast_check: 1 s, then join() 1 s more)
TRUTH_TIMEOUT_S = 600.0  # the canonical solution on every input: ~5 s for the slowest task here
TRUTH_FORMAT = 2  # of Truth and of what the child sends: a change makes every kept truth stale
_RTOL = 1e-07  # EvalPlus's np.allclose(..., rtol=1e-07)


def inputs_of(tests: EvalPlusTests) -> dict[str, list[list[Any]]]:
    """Each check's argument lists, as the entry point is called with them (MBPP+'s typed ones decoded)."""
    written = {"base": tests.base, "plus": tests.plus}
    if not tests.typed:
        return written
    return {name: [[decode(arg) for arg in args] for args in inputs] for name, inputs in written.items()}


def judge(program: str, tests: EvalPlusTests, context: Context) -> RunResult:
    """A sample of a HumanEval+ or MBPP+ task: the task's truth first, computed here if no worker (of this
    run, or of an earlier one with the same tests) has yet."""
    run, task_id, store = context.meta.run, context.problem.task_id, context.store
    truth = store.truth(run, task_id)
    if truth is None:
        key = truth_key(tests, context.options)
        made = store.kept_truth(key) or compute_truth(tests, context.options)
        if isinstance(made, str):
            return RunResult.not_run(Outcome.INFRA_ERROR, 0, made)
        truth = store.keep_truth(run, task_id, made)
        store.keep_for_later(key, truth)
    meta = context.meta
    factor = meta.options.gt_time_limit_factor
    return run_sample(
        program, tests, truth, meta.options.min_time_limit_s, factor, context.options, meta.options.timeout_s
    )


def host_compared(tests: EvalPlusTests) -> int:
    return tests.total  # every output


def compute_truth(tests: EvalPlusTests, options: dict[str, object]) -> Truth | str:
    """Run the canonical solution on every input; a Truth, or why it could not be had."""
    arguments = inputs_of(tests)  # decoded once
    wanted = [[name, marshal.dumps(inputs), None, None, None, []] for name, inputs in arguments.items()]
    view, _ = oracles.views(tests.oracle)
    io = {"entry_point": tests.entry_point, "plain": oracles.plain_bytes(tests.oracle), "checks": wanted, "view": view}
    result = run_program(tests.solution, Harness("calls", io), TRUTH_TIMEOUT_S, **options)
    if result.exit_code is not Outcome.PASS or result.checks.keys() != arguments.keys():
        return f"the canonical solution did not run: {result.exit_code}: {result.detail}"
    for name, check in result.checks.items():
        for number, (kind, payload, _, _) in enumerate(check.outputs, start=1):
            if kind not in ("value", "digest"):
                return f"the canonical solution's {name} input {number}: {kind}: {payload}"
        if len(check.outputs) != len(arguments[name]):
            return f"the canonical solution's {name} check ended after {len(check.outputs)} inputs"
    checks = result.checks.items()
    return Truth(
        outputs={
            name: [(kind, payload, digest) for kind, payload, digest, _ in check.outputs] for name, check in checks
        },
        charged_ns={name: [ns for *_, ns in check.outputs] for name, check in checks},
    )


def truth_key(tests: EvalPlusTests, options: dict[str, object]) -> str:
    """What a truth depends on: the tests, the interpreter that runs them, and the hash seed (a canonical
    solution may return a set's items in a list); the field of keys.TRUTHS it is kept under."""
    config = runner_config(**options)
    try:
        binary = os.stat(config.interpreter)
        build = [binary.st_size, binary.st_mtime_ns]
    except OSError:  # the runner will say what is wrong with it
        build = []
    identity = [TRUTH_FORMAT, config.interpreter, *build, config.hash_seed]
    digest = hashlib.sha256(json.dumps(identity).encode())
    digest.update(tests.model_dump_json().encode())
    return digest.hexdigest()


def limits(
    truth: Truth, name: str, min_time_limit_s: float, factor: float, own: float | None = None, run: float | None = None
) -> list[float]:
    """Seconds each call of check `name` may be charged: the problem's `own`, else the `run`'s, else EvalPlus's
    rule, on charged times (context.time_limit())."""
    return [time_limit(own, run, max(min_time_limit_s, factor * ns / 1e9)) for ns in truth.charged_ns[name]]


def budget(call_limits: list[float]) -> float:
    return min(TIMEOUT_PER_CHECK_S, sum(call_limits)) + CHECK_SLACK_S


def run_sample(
    code: str,
    tests: EvalPlusTests,
    truth: Truth,
    min_time_limit_s: float,
    factor: float,
    options: dict[str, object],
    run_limit: float | None = None,
) -> RunResult:
    """Run the program on every input and judge it as EvalPlus does; `run_limit`: the run's time limit of a
    call (--timeout), if it gave one."""
    checks, timeout = [], 0.0
    arguments = inputs_of(tests)  # decoded once (MBPP+'s typed arguments), for the run and for verdicts()
    atols = {name: tolerances(tests, truth.outputs[name]) for name in arguments}
    decides = oracles.host_decides(tests.oracle)
    for name, inputs in arguments.items():
        call_limits = limits(truth, name, min_time_limit_s, factor, tests.time_limit_s, run_limit)
        expected = [digest for *_, digest in truth.outputs[name]]
        tolerant = [index for index, atol in enumerate(atols[name]) if atol or decides]
        checks.append([name, marshal.dumps(inputs), call_limits, budget(call_limits), expected, tolerant])
        timeout += budget(call_limits)
    _, view = oracles.views(tests.oracle)
    io = {"entry_point": tests.entry_point, "plain": oracles.plain_bytes(tests.oracle), "checks": checks, "view": view}
    # The checks end themselves at their budgets; the runner's limit is for a program that cannot be
    # interrupted (a long computation in C).
    result = run_program(code, Harness("calls", io), timeout + CHECK_SLACK_S, **options)
    return verdicts(tests, arguments, truth, atols, result)


def verdicts(
    tests: EvalPlusTests,
    arguments: dict[str, list[list[Any]]],
    truth: Truth,
    atols: dict[str, list[float]],
    result: RunResult,
) -> RunResult:
    """The run's result with EvalPlus's statuses, the score (inputs passed / inputs) and a verdict;
    `arguments`: inputs_of(tests), `atols`: each check's tolerances()."""
    if result.exit_code is Outcome.INFRA_ERROR:
        return result
    statuses: dict[str, str] = {}
    first_failures: dict[str, int] = {}
    passed = 0
    why: list[str] = []
    for name, inputs in arguments.items():
        check = result.checks.get(name)
        if check is None:
            # The program did not run (EvalPlus: the check fails), or the process ended before the check
            # reported (EvalPlus: a check whose process is killed or dies is a timeout).
            ran = result.exit_code not in (Outcome.SYNTAX_ERROR, Outcome.ERROR) or result.checks
            statuses[name] = TIMEOUT if ran else FAIL
            why.append(f"{name}: {statuses[name]}")
            continue
        flags = compare(tests, inputs, truth.outputs[name], atols[name], check)
        passed += sum(flags)
        statuses[name] = status(tests, flags, check)
        first = next((number for number, ok in enumerate(flags) if not ok), None)
        if first is not None:
            first_failures[name] = first
        why.append(f"{name}: {statuses[name]}" + (_failure(check, first, len(inputs)) if first is not None else ""))
    total = sum(len(inputs) for inputs in arguments.values())
    if all(status == PASS for status in statuses.values()):
        outcome = Outcome.PASS
    elif result.exit_code in (Outcome.SYNTAX_ERROR, Outcome.ERROR):
        outcome = result.exit_code
    elif TIMEOUT in statuses.values():
        outcome = Outcome.TIMEOUT
    else:
        outcome = Outcome.ASSERTION_FAIL
    detail = result.detail if outcome in (Outcome.SYNTAX_ERROR, Outcome.ERROR) else "; ".join(why)
    if tests.oracle == "find_zero" and outcome is not Outcome.PASS and not result.detail:
        detail += " (EvalPlus 0.3.1 never passes HumanEval/32: see docs/judging.md)"
    return result.model_copy(
        update={
            "exit_code": outcome,
            "score": passed / total if total else 0.0,
            "passed": passed,
            "total": total,
            "detail": detail,
            "statuses": statuses,
            "first_failures": first_failures,
            "checks": {},
        }
    )


def _failure(check: Check, index: int, count: int) -> str:
    if index >= len(check.outputs):
        return f" (input {index + 1} of {count} not run: the check ran out of time)"
    kind, payload, _, _ = check.outputs[index]
    said = {"limit": "over its time limit", "raised": f"raised {payload}", "unencodable": f"returned {payload}"}
    return f" (input {index + 1} of {count}: {said.get(kind, 'wrong output')})"


def status(tests: EvalPlusTests, flags: list[bool], check: Check) -> str:
    """EvalPlus's status of a check whose process reported (untrusted_check())."""
    if check.stopped == "budget":
        # EvalPlus stops at a check's first failure: had there been one, it would have reported "fail".
        return TIMEOUT if all(flags[: len(check.outputs)]) else FAIL
    if not all(flags):
        return FAIL
    # EvalPlus 0.3.1's find_zero oracle skips the count of inputs done, so the check is never
    # complete: HumanEval/32 fails whatever it returns.
    return FAIL if tests.oracle == "find_zero" else PASS


def tolerances(tests: EvalPlusTests, expected: list[tuple[str, Any, str]]) -> list[float]:
    """The tolerance each input is compared with: the task's atol, but 1e-6 from the first expected
    output that is a float, or a list or tuple of floats, on (EvalPlus sets its atol variable there
    and it stays for the rest of the check). An expected output kept as a digest is taken as not
    floats (none in HumanEval+ or MBPP+ is)."""
    atol, found = tests.atol, []
    for kind, payload, _ in expected:
        if atol == 0 and kind == "value" and _is_floats(decode(payload)):
            atol = 1e-6
        found.append(atol)
    return found


def compare(
    tests: EvalPlusTests,
    inputs: list[list[Any]],
    expected: list[tuple[str, Any, str]],
    atols: list[float],
    check: Check,
) -> list[bool]:
    """Whether each input passed, as unsafe_execute() decides, within `atols` (tolerances()); inputs the
    check never got to fail."""
    flags = []
    for index, (kind, payload, _, _) in enumerate(check.outputs):
        try:
            flags.append(_passes(tests, index, inputs[index], expected[index], atols, kind, payload))
        except (ArithmeticError, TypeError, ValueError, RecursionError):
            flags.append(False)
    return flags + [False] * (len(inputs) - len(check.outputs))


def _passes(
    tests: EvalPlusTests, index: int, arguments: list[Any], expected: tuple[str, Any, str], atols: list[float],
    kind: str, payload: Any,
) -> bool:  # fmt: skip
    """unsafe_execute()'s verdict on input `index`, whose output was sent as [kind, payload]."""
    want_kind, want, want_digest = expected
    if kind in ("raised", "limit"):
        return False
    if kind != "value":
        unsent = oracles.unsent_passes(tests.oracle, decode(want) if want_kind == "value" else None)
        if unsent is not None:
            return unsent
    if kind == "digest":
        return payload == want_digest
    if kind != "value" or want_kind != "value":  # an output equal to a large one is as large
        return False
    out, exp = decode(payload), decode(want)
    if tests.oracle == "find_zero":
        return oracles.find_zero(arguments, out, tests.atol)
    before = atols[index - 1] if index else tests.atol
    exact = oracles.matches(tests.oracle, out, exp, arguments, before)
    atol = atols[index]
    if not exact and atol != 0:
        same_shape = type(out) is type(exp) and (not isinstance(exp, (list, tuple)) or len(out) == len(exp))
        return same_shape and _allclose(out, exp, atol)
    return exact


def _is_floats(value: Any) -> bool:
    """EvalPlus's is_floats(): a float, or a non-empty list or tuple of floats."""
    if isinstance(value, float):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(item, float) for item in value)


def _allclose(out: Any, exp: Any, atol: float) -> bool:
    """np.allclose(out, exp, rtol=1e-07, atol=atol) for numbers and nested sequences of equal shape."""
    if isinstance(out, (list, tuple)) or isinstance(exp, (list, tuple)):
        if not (isinstance(out, (list, tuple)) and isinstance(exp, (list, tuple))) or len(out) != len(exp):
            return False
        return all(_allclose(a, b, atol) for a, b in zip(out, exp, strict=True))
    if not isinstance(out, (int, float, complex)) or not isinstance(exp, (int, float, complex)):
        return False
    if isinstance(out, complex) or isinstance(exp, complex):
        return abs(out - exp) <= atol + _RTOL * abs(exp)
    if math.isinf(out) or math.isinf(exp):
        return out == exp
    return abs(out - exp) <= atol + _RTOL * abs(exp)


def describe_limits(meta: RunMeta) -> str:
    options = meta.options
    return f"per call max({options.min_time_limit_s:g} s, {options.gt_time_limit_factor:g} x the canonical solution's)"


KIND = Kind(EvalPlusTests, judge, host_compared, "EvalPlus calls", describe_limits, base_check=True)
