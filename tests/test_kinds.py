"""The kinds of test: one model each, one judge each, found through one table (worker/judging/kinds.py)."""

from __future__ import annotations

import inspect
import typing

import pytest
from pydantic import ValidationError

from codeexec.worker.judging.kinds import JUDGES, judge_of
from codeexec.worker.models import AssertionTests, CaseTests, IOTests, Problem, Script, SuiteTests, Tests

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


def kinds_of_the_union() -> set[str]:
    members = typing.get_args(typing.get_args(Tests)[0])
    return {value for member in members for value in typing.get_args(member.model_fields["kind"].annotation)}


def test_every_kind_has_one_judge_and_every_judge_a_kind() -> None:
    assert kinds_of_the_union() == set(JUDGES) == set(BY_FIELD)


@pytest.mark.parametrize("name", ["judge", "host_compared", "in_process"])
def test_the_judges_have_one_entry_signature(name: str) -> None:
    signatures = {kind: list(inspect.signature(getattr(judge, name)).parameters) for kind, judge in JUDGES.items()}
    assert len({tuple(parameters) for parameters in signatures.values()}) == 1, signatures


@pytest.mark.parametrize("kind", sorted(BY_FIELD))
def test_a_problem_named_by_its_kind_s_field_is_the_same_problem(kind: str) -> None:
    old = Problem.model_validate({"task_id": "t", **BY_FIELD[kind]})
    assert old.tests.kind == kind
    assert judge_of(old.tests) is JUDGES[kind]
    again = Problem.model_validate_json(old.model_dump_json())
    assert again == old and '"tests":{"kind":' in old.model_dump_json()


def test_the_kinds_models_are_the_union_s() -> None:
    made = [AssertionTests, IOTests, CaseTests, SuiteTests, Script]
    assert {model.__name__ for model in made} == {m.__name__ for m in typing.get_args(typing.get_args(Tests)[0])}


def test_a_problem_has_tests_of_one_kind() -> None:
    with pytest.raises(ValidationError, match="a problem's tests are of one kind: it gives assertions and cases"):
        Problem.model_validate({"task_id": "t", **BY_FIELD["assertions"], **BY_FIELD["stdin"]})
    with pytest.raises(ValidationError, match="a problem needs at least one assertion"):
        Problem.model_validate({"task_id": "t", "assertions": []})
    with pytest.raises(ValidationError, match="does not match any of the expected tags"):
        Problem.model_validate({"task_id": "t", "tests": {"kind": "rust", "assertions": ["x"]}})


def test_each_kind_counts_its_tests() -> None:
    counts = {kind: Problem.model_validate({"task_id": "t", **fields}).total for kind, fields in BY_FIELD.items()}
    assert counts == {"assertions": 2, "evalplus": 3, "stdin": 2, "call": 1, "suite": 1, "script": 1}
