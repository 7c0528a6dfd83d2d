"""codeexec from Python, for notebooks and training loops: the same steps the command line takes
(producer/entry/cli.py calls these), with pydantic models for what comes back.

    from codeexec.producer.entry.api import connect

    with connect() as codeexec:                      # the private Valkey and local workers
        run = codeexec.submit("humaneval", "samples.jsonl", k=[1, 10])
        report = run.wait(progress=lambda done, total: print(done, "of", total))
        print(report.pass_at_k, report.pass_at_k_ci95)

`connect(redis_url)` talks to a shared Redis instead (workers elsewhere; `workers=N` starts N here too).
A process talks to one codeexec: the first connect() fixes its Redis and data directory (the Celery
app that sends the jobs is configured from them once).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import redis
from pydantic import BaseModel, Field

from codeexec.producer.inputs.files import InputError, write_whole
from codeexec.producer.local.backend import backend
from codeexec.producer.results.compare import Comparison, compare
from codeexec.producer.results.html_report import render_comparison
from codeexec.producer.results.persample import SampleResult
from codeexec.producer.results.report import RunReport
from codeexec.producer.run import Run
from codeexec.producer.submission import Records, Submission, options
from codeexec.producer.submission import prepare as prepare_options
from codeexec.protocol import keys
from codeexec.protocol.settings import get_settings

__all__ = ["Codeexec", "Comparison", "Run", "RunReport", "RunSummary", "SampleResult", "connect", "prepare"]


class RunSummary(BaseModel):
    """One line of `codeexec runs`."""

    run: str
    status: str = Field(description="complete, or the submission's state: storing, stored, queued, cancelled.")
    priority: int = Field(0, description="Runs at a higher priority are served first (worker/queue/schedule.py).")
    done: int
    samples: int
    tasks: int
    problems: str
    pass_at_1: float | None = Field(None, description="Over the tasks, once every task has a result.")
    isolation: str
    created: float = Field(description="When it was submitted (unix time).")
    took_s: float | None = Field(None, description="From submission to its last result, once complete.")


class Codeexec:
    """A connection to codeexec's Redis (connect() makes one)."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client

    def submit(
        self,
        problems: str | Path | Records,
        samples: str | Path | Records,
        *,
        run: str | None = None,
        **options: Any,
    ) -> Run:
        """Submit a run and return it at once (Run.wait() waits). `problems`: "humaneval",
        "humanevalplus", "mbppplus", a problems file, or the problems as dicts of any shape a file may hold; `samples`:
        a samples file, "canonical", or the samples as dicts ({"task_id", "completion"} and the rest); `run`: its
        name. The `options` are RunOptions' (protocol/run.py: k, timeout_s, priority, ...)."""
        return Run.submit(self.client, prepare(problems, samples, run=run, **options))

    def run(self, name: str) -> Run:
        return Run.fetch(self.client, name)

    def runs(self) -> list[RunSummary]:
        """Every run this Redis holds, oldest first."""
        return [summarize(Run.fetch(self.client, name)) for name in self.client.zrange(keys.RUNS, 0, -1)]

    def compare(self, a: str, b: str, k: Sequence[int] | None = None) -> Comparison:
        """Run B against run A on the tasks they share (producer/results/compare.py)."""
        return compare_runs(self.client, a, b, k)


@contextmanager
def connect(
    redis_url: str | None = None, *, data_dir: str | Path | None = None, workers: int | None = None
) -> Iterator[Codeexec]:
    """Codeexec on a shared Redis (`redis_url`), or on the private Valkey (started, or joined, in
    `data_dir`, default CODEEXEC_DATA_DIR), with `workers` local worker processes while it is open (on
    the private Valkey: one per core unless given; with a URL: none unless given)."""
    for variable, value in (("CODEEXEC_REDIS_URL", redis_url), ("CODEEXEC_DATA_DIR", data_dir)):
        if value is not None:
            os.environ[variable] = str(value)
    get_settings.cache_clear()
    settings = get_settings()
    celery = sys.modules.get("codeexec.worker.queue.celery_app")  # configured once, when this process first sent a job
    if celery is not None and celery.app.conf.broker_url != celery.broker_url(settings.effective_redis_url):
        raise InputError(
            f"this process sends its jobs to {celery.app.conf.broker_url} already: one codeexec per process "
            "(start another process for another Redis or data directory)"
        )
    with backend(settings, workers, run_jobs=True) as client:
        yield Codeexec(client)


def prepare(
    problems: str | Path | Records,
    samples: str | Path | Records,
    *,
    run: str | None = None,
    warn: Callable[[str], object] = lambda message: None,
    **given: Any,
) -> Submission:
    """Read and check every input before anything is written to Redis (InputError names the file and
    line of anything wrong, or the option): (problems, samples, meta), which Codeexec.submit() stores. `given`:
    RunOptions' fields (protocol/run.py), as keyword arguments; what the command line's flags of the same
    names set."""
    return prepare_options(problems, samples, options(given), run=run, warn=warn)


def compare_runs(client: redis.Redis, a: str, b: str, k: Sequence[int] | None = None) -> Comparison:
    first = Run.fetch(client, a)
    report_a = first.report(k, intervals=False)
    ks = list(k or sorted(map(int, report_a.pass_at_k | report_a.left_out)))  # asked for; else A's
    return compare(report_a, Run.fetch(client, b).report(ks, intervals=False), ks)


def comparison_html(comparison: Comparison, path: str | Path) -> Path:
    return write_whole(Path(path), render_comparison(comparison))


def summarize(run: Run) -> RunSummary:
    report = run.report([1], intervals=False)
    meta = run.meta
    complete = report.n_done >= meta.n_samples
    took = report.last_result - meta.created if complete and report.last_result else None
    return RunSummary(
        run=meta.run,
        status="complete" if complete else meta.status,
        priority=meta.options.priority,
        done=report.n_done,
        samples=meta.n_samples,
        tasks=meta.n_tasks,
        problems=meta.problems,
        pass_at_1=report.pass_at_k.get("1") if complete else None,
        isolation=meta.options.isolation or "",
        created=meta.created,
        took_s=took,
    )
