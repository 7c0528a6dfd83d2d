"""codeexec: a queue-backed distributed evaluator for code-generation benchmarks.

The public API, importable from here::

    import codeexec

    with codeexec.connect() as ce:
        report = ce.submit("humaneval", "samples.jsonl").wait()

This file is the package ``codeexec`` itself; the repository's ``producer/`` is ``codeexec.producer``
and ``worker/`` is ``codeexec.worker`` (pyproject.toml maps them). The names below are loaded when
first used, so that a worker process, which imports ``codeexec.worker``, never loads the producer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

# name -> the module it lives in
_PUBLIC = {
    "connect": "codeexec.producer.entry.api",
    "prepare": "codeexec.producer.entry.api",
    "Codeexec": "codeexec.producer.entry.api",
    "Run": "codeexec.producer.entry.api",
    "RunSummary": "codeexec.producer.entry.api",
    "RunOptions": "codeexec.protocol.run",
    "SampleResult": "codeexec.producer.results.persample",
    "RunReport": "codeexec.producer.results.report",
    "TaskReport": "codeexec.producer.results.report",
    "Comparison": "codeexec.producer.results.compare",
    "Difference": "codeexec.producer.results.compare",
    "InputError": "codeexec.producer.inputs.files",
    "pass_at_k": "codeexec.producer.results.passk",
    "run_candidate": "codeexec.worker.process.runner",
    "score_code_exec": "codeexec.worker.judging.sample_program",
    "extract_code": "codeexec.worker.judging.sample_program",
    "RunResult": "codeexec.protocol.result",
    "Outcome": "codeexec.protocol.result",
    "AssertionOutcome": "codeexec.protocol.result",
    "Settings": "codeexec.protocol.settings",
    "ServiceClient": "codeexec.producer.service.client",
    "compute_score": "codeexec.producer.service.client",
    "trl_reward": "codeexec.producer.service.client",
}

__all__ = [
    "AssertionOutcome",
    "Codeexec",
    "Comparison",
    "Difference",
    "InputError",
    "Outcome",
    "Run",
    "RunOptions",
    "RunReport",
    "RunResult",
    "RunSummary",
    "SampleResult",
    "ServiceClient",
    "Settings",
    "TaskReport",
    "compute_score",
    "connect",
    "extract_code",
    "pass_at_k",
    "prepare",
    "run_candidate",
    "score_code_exec",
    "trl_reward",
]


def __getattr__(name: str) -> object:
    try:
        module = _PUBLIC[name]
    except KeyError:
        raise AttributeError(f"module 'codeexec' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


if TYPE_CHECKING:
    from codeexec.producer.entry.api import Codeexec, Run, RunSummary, connect, prepare
    from codeexec.producer.inputs.files import InputError
    from codeexec.producer.results.compare import Comparison, Difference
    from codeexec.producer.results.passk import pass_at_k
    from codeexec.producer.results.persample import SampleResult
    from codeexec.producer.results.report import RunReport, TaskReport
    from codeexec.producer.service.client import ServiceClient, compute_score, trl_reward
    from codeexec.protocol.result import AssertionOutcome, Outcome, RunResult
    from codeexec.protocol.run import RunOptions
    from codeexec.protocol.settings import Settings
    from codeexec.worker.judging.sample_program import extract_code, score_code_exec
    from codeexec.worker.process.runner import run_candidate
