"""The kinds of test: one model each, one module each, found through one table (worker/judging/kinds/__init__.py),
each typed for its own model and saying what a report says of it."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import pytest
from pydantic import ValidationError

from codeexec.protocol.kinds import (
    AssertionTests,
    CallTests,
    EvalPlusTests,
    ProgramTests,
    Script,
    StdinTests,
    SuiteTests,
    Tests,
)
from codeexec.protocol.models import Problem, Truth
from codeexec.protocol.result import Outcome
from codeexec.protocol.run import RunMeta, RunOptions
from codeexec.worker.judging.context import Context, time_limit
from codeexec.worker.judging.kinds import KINDS, kind_of

#: One test set of each kind, as a problem names it by its kind's field (codeexec's own problems files, and
#: the problems of runs stored before a problem's tests were one value).
BY_FIELD = {
    "assertions": {"assertions": ["assert f() == 1", "assert f() > 0"]},
    "evalplus": {"io": {"entry_point": "f", "solution": "def f(x): return x", "base": [[1], [2]], "plus": [[3]]}},
    "stdin": {"cases": {"kind": "stdin", "inputs": ["1\n", "2\n"], "outputs": ["1\n", "2\n"]}},
    "call": {"cases": {"kind": "call", "entry_point": "f", "inputs": [[]], "outputs": [1]}},
    "suite": {"suite": {"code": "def test_f():\n    assert f() == 1\n", "names": ["test_f"], "framework": "pytest"}},
    "script": {"script": {"file": "main.py", "time_limit_s": 1.0}},
}


#: One test set of each kind, in the one shape (a kind that came after the field-per-kind shape has only this).
ONE_OF_EACH = {
    **{kind: Problem.model_validate({"task_id": "t", **given}).tests.model_dump() for kind, given in BY_FIELD.items()},
    "program": {"kind": "program", "language": "bash", "tests": "[[ $(f) = 1 ]]"},
}


def kinds_of_the_union() -> set[str]:
    members = typing.get_args(typing.get_args(Tests)[0])
    return {value for member in members for value in typing.get_args(member.model_fields["kind"].annotation)}


def test_every_kind_has_one_module_and_every_module_a_kind() -> None:
    assert kinds_of_the_union() == set(KINDS) == set(ONE_OF_EACH) >= set(BY_FIELD)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_s_functions_take_its_own_model(kind: str) -> None:
    """The Judge protocol typed per kind: a kind's judge and its counts take its own model, no other."""
    found = KINDS[kind]
    judge = inspect.signature(found.judge).parameters
    assert list(judge) == ["program", "tests", "context"]
    assert judge["tests"].annotation == found.model.__name__
    (counted,) = inspect.signature(found.host_compared).parameters.values()
    assert counted.annotation in (
        found.model.__name__,
        "CaseTests",  # stdin and call-based tests count theirs alike (worker/judging/helpers/cases.py)
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_says_what_a_report_says_of_it(kind: str) -> None:
    meta = RunMeta(run="r", created=0, problems="p", samples_path="s", samples_sha256="", n_samples=1, n_tasks=1,
                   kinds=[kind])  # fmt: skip
    found = KINDS[kind]
    assert found.title and found.limits(meta)
    assert found.limits(meta.model_copy(update={"options": RunOptions(timeout_s=7)})) != ""


@pytest.mark.parametrize("kind", sorted(BY_FIELD))
def test_a_problem_named_by_its_kind_s_field_is_the_same_problem(kind: str) -> None:
    old = Problem.model_validate({"task_id": "t", **BY_FIELD[kind]})
    assert old.tests.kind == kind
    assert kind_of(old.tests) is KINDS[kind]
    again = Problem.model_validate_json(old.model_dump_json())
    assert again == old and '"tests":{"kind":' in old.model_dump_json()


def test_the_kinds_models_are_the_union_s() -> None:
    made = {AssertionTests, EvalPlusTests, StdinTests, CallTests, SuiteTests, Script, ProgramTests}
    assert made == set(typing.get_args(typing.get_args(Tests)[0])) == {kind.model for kind in KINDS.values()}


def test_a_problem_has_tests_of_one_kind() -> None:
    with pytest.raises(ValidationError, match="a problem's tests are of one kind: it gives assertions and cases"):
        Problem.model_validate({"task_id": "t", **BY_FIELD["assertions"], **BY_FIELD["stdin"]})
    with pytest.raises(ValidationError, match="a problem needs at least one assertion"):
        Problem.model_validate({"task_id": "t", "assertions": []})
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        Problem.model_validate({"task_id": "t", "tests": {"kind": "rust", "assertions": ["x"]}})


def test_each_kind_counts_its_tests() -> None:
    counts = {kind: Problem.model_validate({"task_id": "t", "tests": one}).total for kind, one in ONE_OF_EACH.items()}
    assert counts == {"assertions": 2, "evalplus": 3, "stdin": 2, "call": 1, "suite": 1, "script": 1, "program": 1}


# ---- one time limit, resolved one way for every kind --------------------------------------------------

SLEEPS = "import time\ndef f(x=1):\n    time.sleep(1.0)\n    return x\n"
#: Each kind's tests of a program that takes a second (sleeping: no CPU to wait for, however busy the machine).
TIMED: dict[str, tuple[str, dict[str, Any]]] = {
    "assertions": (SLEEPS, {"kind": "assertions", "assertions": ["assert f() == 1"]}),
    "evalplus": (
        SLEEPS,
        {"kind": "evalplus", "entry_point": "f", "solution": "def f(x):\n    return x\n", "base": [[1]]},
    ),
    "stdin": (SLEEPS + "print(f(input()))", {"kind": "stdin", "inputs": ["1\n"], "outputs": ["1\n"]}),
    "call": (SLEEPS, {"kind": "call", "entry_point": "f", "inputs": [[1]], "outputs": [1]}),
    "suite": (
        SLEEPS,
        {"kind": "suite", "framework": "pytest", "code": "def test_f():\n    assert f() == 1\n", "names": ["test_f"]},
    ),
    # A program in another language: a second's sleep in a process the step starts, charged as it sleeps.
    "program": ("sleep 1\n", {"kind": "program", "language": "bash", "tests": ""}),
}


class Truths:
    """An EvalPlus truth kept for the samples of one test (WorkerStore keeps them in Redis)."""

    def __init__(self) -> None:
        self.kept: dict[str, Truth] = {}

    def truth(self, run: str, task_id: str) -> Truth | None:
        return self.kept.get(task_id)

    def keep_truth(self, run: str, task_id: str, truth: Truth) -> Truth:
        return self.kept.setdefault(task_id, truth)

    def kept_truth(self, key: str) -> Truth | None:
        return None

    def keep_for_later(self, key: str, truth: Truth) -> None:
        pass


def test_the_rule_is_own_then_the_run_s_then_the_kind_s_within_its_bounds() -> None:
    assert time_limit(2.0, 5.0, 6.0) == 2.0
    assert time_limit(None, 5.0, 6.0) == 5.0
    assert time_limit(None, None, 6.0) == 6.0
    assert time_limit(None, 100.0, 3.0, most=30.0) == 30.0
    assert time_limit(0.001, None, 3.0) == 0.1


@pytest.mark.parametrize("kind", sorted(TIMED))
@pytest.mark.parametrize(
    ("own", "run", "passes"),
    [(None, 0.2, False), (20.0, 0.2, True), (0.2, 20.0, False)],
    ids=["the run's", "the problem's over the run's", "the problem's, shorter"],
)
def test_every_kind_takes_its_time_limit_by_the_one_rule(
    kind: str, own: float | None, run: float, passes: bool
) -> None:
    program, tests = TIMED[kind]
    problem = Problem.model_validate({"task_id": "t", "tests": tests | {"time_limit_s": own}})
    meta = RunMeta(run="r", created=0, problems="p", samples_path="s", samples_sha256="", n_samples=1, n_tasks=1,
                   options=RunOptions(k=[1], timeout_s=run))  # fmt: skip
    result = KINDS[kind].judge(program, problem.tests, Context(meta, problem, {}, Truths()))
    # EvalPlus fails a check whose call runs over its limit ("fail"; "timeout" is a check's budget's).
    over = Outcome.ASSERTION_FAIL if kind == "evalplus" else Outcome.TIMEOUT
    assert (result.exit_code, result.score) == ((Outcome.PASS, 1.0) if passes else (over, 0.0)), result


def test_older_names_of_the_limits_read_as_the_one_name() -> None:
    """codeexec's own problems give an assertions problem's limit as timeout_s; a run stored before the one
    rule kept the run's --timeout as suite_time_limit_s (and its assertions' in each problem)."""
    problem = Problem.model_validate({"task_id": "t", "assertions": ["assert 1"], "timeout_s": 5})
    assert problem.tests.time_limit_s == 5 and "timeout_s" not in problem.model_dump()
    fields = {"run": "r", "created": 0, "problems": "p", "samples_path": "s", "samples_sha256": "", "k": [1]}
    older = {**fields, "n_samples": 1, "n_tasks": 1, "timeout_s": 3.0, "test_time_limit_s": 6.0}
    assert RunMeta.model_validate(older).options.timeout_s is None
    assert RunMeta.model_validate(older | {"suite_time_limit_s": 10.0}).options.timeout_s == 10.0
