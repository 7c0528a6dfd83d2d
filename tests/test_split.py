"""Which assertions the host judges (worker/process/split.py), and that their verdicts are the assert's own."""

from __future__ import annotations

import json

import pytest

from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.result import Outcome
from codeexec.worker.process.runner import run_candidate
from codeexec.worker.process.split import split
from helpers import assertions_of, codeexec

CHECK = "METADATA = {}\n\ndef check(candidate):\n    ASSERT\n\ncheck(f)\n"


@pytest.mark.parametrize(
    ("assertion", "form", "expected"),
    [
        ("assert f(3) == 6", "eq", 6),
        ("assert 6 == f(3)", "eq", 6),
        ("assert f(1) == (3 + 5 + 7, 3 * 5 * 7)", "eq", (15, 105)),
        ("assert f(1) == -2.5", "eq", -2.5),
        ("assert f('a') == {'a': [1, (2, 3)]}", "eq", {"a": [1, (2, 3)]}),
        ("assert f(1) is True", "is", True),
        ("assert abs(f(1.33) - 0.33) < 1e-6", "close", (0.33, 1e-6, False)),
        ("assert abs(f(1) - 2.0/3.0) <= 1e-6", "close", (2.0 / 3.0, 1e-6, True)),
        ("assert f(1)", "truth", None),
        ("assert not f(1)", "falsity", None),
        ("assert f(3) == 6, 'doubles'", "eq", 6),
        ("assert f(3) == 6, 2", "eq", 6),
        ("assert f(1) == True, 'error: ' + str(f(1))", "eq", True),  # its message: only if it fails
        ("assert tuple(f([2, 1])) == tuple([1, 2])", "eq", (1, 2)),
        ("assert f(3) == set([6])", "eq", {6}),
        ("x = [1]\nassert f(x) == [1]", "eq", [1]),
    ],
)
def test_the_forms_the_host_judges(assertion: str, form: str, expected: object) -> None:
    cut = split(assertion)
    assert cut is not None and (cut.form, cut.expected) == (form, expected)
    in_check = split(CHECK.replace("ASSERT", assertion.replace("f(", "candidate(")) if "\n" not in assertion else "")
    if "\n" not in assertion:
        assert in_check is not None and in_check.form == form
        assert in_check.expression.startswith("(lambda candidate: ") and in_check.expression.endswith(")(f)")


@pytest.mark.parametrize(
    "assertion",
    [
        "assert f(3) == g(3)",  # no constant
        "assert f(3) == 6 == 6",  # chained
        "assert f(3) > 5",
        "assert 6 == 6",  # tests nothing of the candidate's
        "assert f(3) == set(6)",  # not a container of constants
        "assert f(3) == sorted([6])",
        "for x in range(3):\n    assert f(x) == x",
        "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(2) == 2\ncheck(f)",
        "def f(:",
    ],
)
def test_what_stays_in_process(assertion: str) -> None:
    assert split(assertion) is None


@pytest.mark.parametrize(
    ("returned", "assertion", "passes"),
    [
        ("1.0", "assert f() == 1", True),  # int and float compare by value
        ("True", "assert f() == 1", True),
        ("[1, 2]", "assert f() == (1, 2)", False),  # a list is no tuple
        ("float('nan')", "assert f() == float('nan')", False),  # NaN equals nothing (and is no literal)
        ("-0.0", "assert f() == 0.0", True),
        ("{1: 'a', 2: 'b'}", "assert f() == {2: 'b', 1: 'a'}", True),
        ("frozenset({1, 2})", "assert f() == {1, 2}", True),
        ("'\\udcff'", "assert f() == '\\udcff'", True),
        ("10 ** 100 + 1", "assert f() == 10 ** 100", False),
        ("list(range(1000))", f"assert f() == {list(range(1000))}", True),  # compared by digest
        ("list(range(1000))", f"assert f() == {list(range(999))}", False),
        ("1", "assert f() is True", False),
        ("''", "assert not f()", True),
        ("[0]", "assert f()", True),
        ("0.3300001", "assert abs(f() - 0.33) < 1e-6", True),
        ("'0.33'", "assert abs(f() - 0.33) < 1e-6", False),  # as the assert would raise
    ],
)
def test_verdicts_are_the_asserts_own(returned: str, assertion: str, passes: bool) -> None:
    result = run_candidate(f"def f():\n    return {returned}\n", [assertion], 5.0)
    assert (result.exit_code is Outcome.PASS) == passes, result.detail
    in_process = run_candidate(f"def f():\n    return {returned}\n", [f"if True:\n    {assertion}"], 5.0)
    assert (in_process.exit_code is Outcome.PASS) == passes, "the same assert run in the candidate's process"
    assert [a.judged for a in result.assertions] == ["host-compared" if split(assertion) else "in-process"]


def test_a_message_is_evaluated_exactly_when_the_assert_fails() -> None:
    program = "calls = []\ndef f(x):\n    calls.append(x)\n    return x\n"
    tests = ["assert f(1) == 1, 'again ' + str(f(9))", "assert f(2) == 3, 'again ' + str(f(8))"]
    tests.append("assert calls == [1, 2, 8]")
    ours = run_candidate(program, tests, 5.0)
    assert [a.judged for a in ours.assertions] == ["host-compared"] * 3
    outcomes = [(a.passed, a.error) for a in ours.assertions]
    assert outcomes == [(True, None), (False, "AssertionError: again 8"), (True, None)]
    theirs = run_candidate(program, [f"if True:\n    {test}" for test in tests], 5.0)
    assert [(a.passed, a.error) for a in theirs.assertions] == outcomes
    assert ours.human_eval_result == theirs.human_eval_result == "failed: again 8"


@pytest.mark.parametrize(
    ("returned", "assertion"),
    [
        ("'x'", "assert abs(f() - 0.33) < 1e-6"),  # the test itself raises: TypeError
        ("0", "assert f() == 1, 'plain'"),
        ("0", "assert f() == 1, 'got ' + str(f())"),
        ("'x'", "assert abs(f() - 0.33) < 1e-6, 'not evaluated: ' + str(1 / 0)"),
        ("0", "assert f() == 1, 'raises: ' + str(1 / f())"),
    ],
)
def test_a_failure_reads_as_the_assert_run_in_process_would(returned: str, assertion: str) -> None:
    program = f"def f():\n    return {returned}\n"
    assert split(assertion) is not None
    ours, theirs = (run_candidate(program, [test], 5.0) for test in (assertion, f"if True:\n    {assertion}"))
    assert (ours.exit_code, ours.human_eval_result) == (theirs.exit_code, theirs.human_eval_result)
    assert [a.error for a in ours.assertions] == [a.error for a in theirs.assertions]


def test_the_report_gives_the_share_and_strict_verdicts_refuse_the_rest(env: dict[str, str]) -> None:
    problems = load_problems("humaneval")
    host = sum(split(text) is not None for problem in problems.values() for text in assertions_of(problem))
    refused = sum(any(split(text) is None for text in assertions_of(problem)) for problem in problems.values())
    assert 0 < refused < len(problems)
    out = codeexec(
        env,
        "eval",
        "--problems",
        "humaneval",
        "--samples",
        "canonical",
        "--k",
        "1",
        "--workers",
        "2",
        "--json",
        "--strict-verdicts",
    )
    assert out.returncode == 0, out.stderr
    assert f"--strict-verdicts: the samples of {refused} task(s) will be errors" in out.stderr
    document = json.loads(out.stdout)
    tests = sum(len(assertions_of(problem)) for problem in problems.values())
    assert document["judged"] == {"host-compared": host, "in-process": tests - host}
    assert document["outcomes"]["error"] == refused
    assert document["outcomes"]["pass"] == len(problems) - refused
