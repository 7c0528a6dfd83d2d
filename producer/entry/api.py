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

import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import redis
from pydantic import BaseModel, Field

from codeexec.producer import runs
from codeexec.producer.inputs.files import InputError, read_jsonl, write_whole
from codeexec.producer.inputs.problems import CANONICAL, load_problems, write_canonical_samples
from codeexec.producer.inputs.samples import SampleSet, read_samples
from codeexec.producer.local.backend import backend
from codeexec.producer.results.breakdown import breakdown
from codeexec.producer.results.compare import Comparison, compare
from codeexec.producer.results.html_report import render_comparison, render_run
from codeexec.producer.results.persample import SampleResult, with_results
from codeexec.producer.results.report import RunReport, build_report
from codeexec.producer.submit import (
    cancel,
    check_run_name,
    new_meta,
    new_run_id,
    parse_priority,
    resume,
    set_priority,
    submit,
)
from codeexec.protocol import keys
from codeexec.protocol.models import JudgeMode, Problem, RunMeta, SampleKind, SuiteTests
from codeexec.protocol.settings import Settings, get_settings
from codeexec.worker import environments
from codeexec.worker.judging.kinds import judge_of

Records = Iterable[Mapping[str, Any]]

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


class Run:
    """A submitted run: wait for it, read its report and its results, write its HTML page."""

    def __init__(self, client: redis.Redis, name: str) -> None:
        self.client, self.name = client, name
        self.meta: RunMeta = runs.meta(client, name)  # InputError for a run that does not exist

    def __repr__(self) -> str:
        return f"Run({self.name!r})"

    def progress(self) -> tuple[int, int]:
        """(samples with a result, samples submitted)."""
        return runs.progress(self.client, self.name)

    def wait(self, progress: Callable[[int, int], object] | None = None) -> RunReport:
        """Block until every sample has a result (calling `progress(done, total)` as they come); the report."""
        from codeexec.producer.entry.display import wait_for

        wait_for(self.client, self.name, show=False, on_progress=progress)
        return self.report()

    def report(self, k: Sequence[int] | None = None) -> RunReport:
        """pass@k (with intervals), per task n and c, outcomes: what `codeexec report --json` prints."""
        return build_report(self.client, self.name, list(k or self.meta.k), intervals=True)

    def results(self, samples_path: Path | None = None) -> Iterator[SampleResult]:
        """Each sample of the run's samples file, in its order, with its result (None: not yet)."""
        path = Path(samples_path or self.meta.samples_path)
        return with_results(self.client, self.name, read_jsonl(path))

    def html(self, path: str | Path, k: Sequence[int] | None = None) -> Path:
        """Write the run's HTML page (producer/results/html_report.py) to `path`."""
        return run_html(self.client, self.report(k), path)

    def cancel(self) -> int:
        """Drop the run's waiting jobs (results are kept; resume() carries on); the samples dropped."""
        dropped = cancel(self.client, self.name)
        self.meta = runs.meta(self.client, self.name)
        return dropped

    def resume(self) -> int:
        """Enqueue again the samples with no result (of a cancelled run, say); how many."""
        count = resume(self.client, self.name)
        self.meta = runs.meta(self.client, self.name)
        return count

    def set_priority(self, priority: int | str) -> None:
        """Serve the run at this priority ("high", "normal", "low", or a number) from its next job on."""
        self.meta = set_priority(self.client, self.name, parse_priority(priority))


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
        k: Sequence[int] = (1, 10, 100),
        **options: Any,
    ) -> Run:
        """Submit a run and return it at once (Run.wait() waits). `problems`: "humaneval",
        "humanevalplus", "mbppplus", a problems file, or the problems as dicts of any shape a file may hold; `samples`:
        a samples file, "canonical", or the samples as dicts ({"task_id", "completion"} and the rest). The
        `options` are prepare()'s."""
        found, sample_set, meta = prepare(problems, samples, run=run, k=k, **options)
        submit(self.client, found, sample_set, meta, get_settings().batch_size)
        return Run(self.client, meta.run)

    def run(self, name: str) -> Run:
        return Run(self.client, name)

    def runs(self) -> list[RunSummary]:
        """Every run this Redis holds, oldest first."""
        return [summarize(self.client, name) for name in self.client.zrange(keys.RUNS, 0, -1)]

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
    celery = sys.modules.get("codeexec.worker.queue.app")  # configured once, when this process first sent a job
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
    k: Sequence[int] = (1, 10, 100),
    timeout_s: float | None = None,
    split: str = "all",
    challenge: bool = False,
    treat_as: SampleKind | None = None,
    skip_unknown: bool = False,
    hash_seed: int | None = None,
    isolation: Literal["fork", "fresh"] | None = None,
    strict_verdicts: bool = False,
    judge_mode: JudgeMode | None = None,
    all_tests: bool = False,
    environment: str | None = None,
    min_time_limit_s: float = 1.0,
    gt_time_limit_factor: float = 4.0,
    priority: int | str = "normal",
    warn: Callable[[str], object] = lambda message: None,
) -> tuple[dict[str, Problem], SampleSet, RunMeta]:
    """Read and check every input before anything is written to Redis (InputError names the file and
    line of anything wrong); what the command line's flags of the same names set. Problems and samples
    given as dicts are written to files in the data directory first: a run's samples file is its record
    (the per-sample output and `resume` read it again)."""
    settings = get_settings()
    if run:
        check_run_name(run)
    if timeout_s is not None and not (math.isfinite(timeout_s) and timeout_s > 0):
        raise InputError(f"timeout_s {timeout_s!r}: expected a positive, finite number of seconds")
    priority = parse_priority(priority)
    given = {}  # the files written of objects, by what their errors call them
    if not isinstance(problems, (str, Path)):
        problems = given["problems"] = _saved(settings.data_dir / "problems", problems, "problems")
    if not isinstance(samples, (str, Path)):
        samples = given["samples"] = _saved(settings.data_dir / "samples", samples, "samples")
    try:
        found = load_problems(str(problems), split, challenge)
        if str(samples) == CANONICAL:
            samples = write_canonical_samples(str(problems), settings.data_dir / "samples", found)
        sample_set = read_samples(Path(samples), found, skip_unknown, treat_as)
    except InputError as exc:
        message = str(exc)
        for what, path in given.items():
            message = message.replace(f"{path}:", f"{what} given as objects, record ", 1)
        raise InputError(message) from None
    name = run or new_run_id("run" if "samples" in given else Path(samples).name.split(".")[0])
    needed = needed_environment(found, sample_set, environment, settings)
    if sample_set.skipped_unknown:
        warn(f"left out {sample_set.skipped_unknown} sample(s) with an unknown task_id")
    if strict_verdicts:
        refused = [task for task in sample_set.per_task if judge_of(found[task].tests).in_process(found[task].tests)]
        if refused:
            listed = ", ".join(refused[:10]) + (" ..." if len(refused) > 10 else "")
            warn(
                f"--strict-verdicts: the samples of {len(refused)} task(s) will be errors, as their tests include "
                f"one the host cannot compare: {listed}"
            )
    meta = new_meta(
        name,
        str(problems),
        sample_set,
        timeout_s if timeout_s is not None else settings.timeout_s,
        sorted(set(k)),
        split,
        challenge,
        treat_as,
        hash_seed=hash_seed if hash_seed is not None else settings.hash_seed,
        isolation=isolation or settings.isolation,
        strict_verdicts=strict_verdicts,
        judge_mode=judge_mode,
        all_tests=all_tests,
        environment=needed,
        min_time_limit_s=min_time_limit_s,
        gt_time_limit_factor=gt_time_limit_factor,
        priority=priority,
        batch_size=settings.batch_size,
        max_attempts=settings.max_attempts,
    )
    return found, sample_set, meta


def needed_environment(
    problems: dict[str, Problem], samples: SampleSet, environment: str | None, settings: Settings
) -> str | None:
    """The environment a run's candidates run in (worker/environments.py): the one asked for ("none": the
    workers' own Python), else the one its problem set needs. On the embedded default, where this machine's
    workers are the only ones, it must be built here."""
    if environment is not None:
        wanted = None if environment == "none" else environment
    else:
        suites = [tests for task in samples.per_task if isinstance(tests := problems[task].tests, SuiteTests)]
        needs = {suite.environment for suite in suites}
        needs.discard(None)
        if len(needs) > 1:
            raise InputError(f"the problems need different environments ({', '.join(sorted(needs))}): run them apart")
        wanted = needs.pop() if needs else None
    if wanted is not None and settings.redis_url is None and environments.load(settings.data_dir, wanted) is None:
        raise InputError(
            f"these candidates run in the environment {wanted!r}, which is not built here: codeexec env build {wanted} "
            "(or --environment none, to run them in the workers' own Python)"
        )
    return wanted


def compare_runs(client: redis.Redis, a: str, b: str, k: Sequence[int] | None = None) -> Comparison:
    ks = list(k or runs.meta(client, a).k)
    return compare(build_report(client, a, ks), build_report(client, b, ks), ks)


def run_html(client: redis.Redis, report: RunReport, path: str | Path) -> Path:
    """Write the page of the run `report` is of (built with intervals) to `path`."""
    return write_whole(Path(path), render_run(report, breakdown(client, report.run, report.tasks)))


def comparison_html(comparison: Comparison, path: str | Path) -> Path:
    return write_whole(Path(path), render_comparison(comparison))


def summarize(client: redis.Redis, name: str) -> RunSummary:
    report = build_report(client, name, [1])
    meta = report.meta
    complete = report.n_done >= meta.n_samples
    took = report.last_result - meta.created if complete and report.last_result else None
    return RunSummary(
        run=name,
        status="complete" if complete else meta.status,
        priority=meta.priority,
        done=report.n_done,
        samples=meta.n_samples,
        tasks=meta.n_tasks,
        problems=meta.problems,
        pass_at_1=report.pass_at_k.get("1") if complete else None,
        isolation=meta.isolation,
        created=meta.created,
        took_s=took,
    )


def _saved(directory: Path, records: Records, what: str) -> Path:
    """Records (`what`: problems or samples) as a JSON-lines file in `directory`, named after its
    content (a run's samples file is part of its record: it is never written over)."""
    lines = []
    for number, record in enumerate(records, start=1):
        try:
            lines.append(json.dumps(dict(record), ensure_ascii=False) + "\n")
        except (TypeError, ValueError) as exc:
            raise InputError(f"{what} given as objects, record {number}: cannot be written as JSON: {exc}") from None
    text = "".join(lines)
    return write_whole(directory / f"{hashlib.sha256(text.encode()).hexdigest()[:20]}.jsonl", text)
