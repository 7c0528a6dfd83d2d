"""The one table of the kinds of test: a problem's tests are one of protocol/models.py's test sets, named by
their `kind`, and each kind is judged by one module of worker/judging/, found here.

Every judge has the same entry, ``judge(program, tests, context) -> RunResult``: the program a sample
runs as (worker/judging/program.py), its problem's tests, and the Context of the sample's run. And it says
``host_compared(tests)``: how many of those tests the host, not the candidate's process, decides (a
result's host_compared); and ``in_process(tests)``: the number of the first assertion the candidate's
process decides, which a run with --strict-verdicts refuses (None: none is). The queue's task looks the
judge up here and never asks which kind it has.

Adding a kind is: its model in protocol/models.py (a TestSet, in the Tests union), its judge module here,
its line in JUDGES, its tests, and its docs page (docs/architecture.md says how).
"""

from __future__ import annotations

from typing import Any, Protocol

from codeexec.protocol.models import TestSet
from codeexec.protocol.result import RunResult
from codeexec.worker.judging import assertions, calls, evalplus, programs, script, stdio, suites
from codeexec.worker.judging.context import Context


class Judge(Protocol):
    """A kind's judge: its module."""

    def judge(self, program: str, tests: Any, context: Context) -> RunResult: ...

    def host_compared(self, tests: Any) -> int: ...

    def in_process(self, tests: Any) -> int | None: ...


#: Each kind (TestSet.kind) and its judge.
JUDGES: dict[str, Judge] = {
    "assertions": assertions,
    "evalplus": evalplus,
    "stdin": stdio,
    "call": calls,
    "suite": suites,
    "script": script,
    "program": programs,
}


def judge_of(tests: TestSet) -> Judge:
    """The judge of a test set's kind."""
    return JUDGES[tests.kind]
