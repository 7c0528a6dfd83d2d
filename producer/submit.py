"""Submitting a run: record it, store each problem once and each sample once, enqueue small jobs."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import secrets
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal

import redis

from codeexec.producer import runs
from codeexec.producer.inputs import completions
from codeexec.producer.inputs.files import InputError
from codeexec.producer.inputs.problems import PROBLEM_SETS, load_problems, problems_path, write_canonical_samples
from codeexec.producer.inputs.samples import SampleSet, read_samples
from codeexec.protocol import keys
from codeexec.protocol.models import (
    AssertionTests,
    CaseTests,
    IOTests,
    Job,
    JudgeMode,
    Problem,
    ProgramTests,
    RunMeta,
    SampleKind,
    SuiteTests,
)
from codeexec.protocol.settings import RUN_SETTINGS, get_settings
from codeexec.worker.queue.schedule import PRIORITIES, Schedule

_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_PIPELINE_CHUNK = 5000  # commands per round trip while storing


def new_run_id(stem: str) -> str:
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-._")[:60] or "run"
    return f"{clean}-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def check_run_name(run: str) -> None:
    if not _RUN_NAME.fullmatch(run):
        raise InputError(f"run name {run!r}: use letters, digits, '.', '_' and '-' (at most 128, no leading symbol)")


def new_meta(
    run: str,
    problems: str,
    samples: SampleSet,
    time_limit_s: float | None,
    k: list[int],
    split: str = "all",
    challenge: bool = False,
    treat_as: SampleKind | None = None,
    hash_seed: int = 0,
    isolation: Literal["fork", "fresh"] | None = None,
    min_time_limit_s: float = 1.0,
    gt_time_limit_factor: float = 4.0,
    strict_verdicts: bool = False,
    judge_mode: JudgeMode | None = None,
    all_tests: bool = False,
    environment: str | None = None,
    priority: int = 0,
    **settings: object,
) -> RunMeta:
    """The record of a run about to be submitted. `problems`: a problem set's name or a file path;
    `time_limit_s`: the run's time limit of a test, None for each kind's default (RunMeta.time_limit_s)."""
    return RunMeta(
        run=run,
        created=time.time(),
        problems=problems if problems in PROBLEM_SETS else str(Path(problems).resolve()),
        problems_sha256=_sha256(problems_path(problems)),
        split=split,
        challenge=challenge,
        treat_as=treat_as,
        samples_path=str(samples.path.resolve()),
        samples_sha256=samples.sha256,
        n_samples=len(samples.lines),
        n_tasks=len(samples.per_task),
        time_limit_s=time_limit_s,
        hash_seed=hash_seed,
        isolation=isolation or get_settings().isolation,
        runner=get_settings().model_dump(mode="json", include=RUN_SETTINGS),
        k=k,
        strict_verdicts=strict_verdicts,
        judge_mode=judge_mode,
        all_tests=all_tests,
        environment=environment,
        priority=priority,
        min_time_limit_s=min_time_limit_s,
        gt_time_limit_factor=gt_time_limit_factor,
        settings=settings,
        version=version(),
    )


def version() -> str:
    """codeexec's version, as installed."""
    try:
        return importlib.metadata.version("codeexec")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def _sha256(path: Path) -> str:
    """sha256 of a file; of a directory of MultiPL-E's completions files, of their digests in order."""
    digest = hashlib.sha256()  # (hashlib.file_digest is 3.11's)
    if path.is_dir():
        for _ in completions.records(path, digest):
            pass
        return digest.hexdigest()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def save_meta(client: redis.Redis, meta: RunMeta) -> None:
    client.set(keys.meta(meta.run), meta.model_dump_json())


def submit(
    client: redis.Redis,
    problems: dict[str, Problem],
    samples: SampleSet,
    meta: RunMeta,
    batch_size: int,
) -> RunMeta:
    """Record the run, store its problems and samples, and enqueue its jobs. The input is valid already."""
    check_run_name(meta.run)
    tests = [problems[task_id].tests for task_id in samples.per_task]
    meta.base_tests = any(isinstance(each, IOTests) for each in tests)
    meta.case_tests = any(isinstance(each, CaseTests) for each in tests)
    meta.assertion_tests = any(isinstance(each, AssertionTests) for each in tests)
    meta.program_tests = any(isinstance(each, ProgramTests) for each in tests)
    suites = [each for each in tests if isinstance(each, SuiteTests)]
    meta.suite_tests, meta.relaxed = bool(suites), any(suite.relaxed for suite in suites)
    # Claiming the name is the first write: a taken name changes nothing in Redis.
    if not client.set(keys.meta(meta.run), meta.model_dump_json(), nx=True):
        raise InputError(f"a run named {meta.run!r} exists already (codeexec report/resume {meta.run})")
    client.zadd(keys.RUNS, {meta.run: meta.created})
    store_samples(client, meta, problems, samples)
    meta.status = "stored"
    save_meta(client, meta)
    enqueue(client, meta, [(line.task_id, line.index) for line in samples.lines], batch_size)
    current = runs.meta(client, meta.run)
    if current.status == "cancelled":  # while its jobs were being sent
        Schedule(client, meta.environment).drop(meta.run)
        return current
    meta.status = "queued"
    save_meta(client, meta)
    return meta


def store_samples(client: redis.Redis, meta: RunMeta, problems: dict[str, Problem], samples: SampleSet) -> None:
    """Store each problem once and each sample without a result."""
    done: dict[str, set[str]] = {}
    pipe = client.pipeline(transaction=False)
    for task_id, count in samples.per_task.items():
        problem = problems[task_id]
        pipe.hset(keys.problems(meta.run), task_id, problem.model_dump_json())
        pipe.hset(keys.expected(meta.run), task_id, count)
        pipe.hkeys(keys.results(meta.run, task_id))
    replies = pipe.execute()
    for task_id, finished in zip(samples.per_task, replies[2::3], strict=True):
        done[task_id] = set(finished)
    for chunk in _chunks(samples.lines, _PIPELINE_CHUNK):
        for line in chunk:
            if str(line.index) not in done[line.task_id]:
                pipe.hset(keys.pending(meta.run, line.task_id), str(line.index), line.sample.model_dump_json())
        pipe.execute()


def pending_samples(client: redis.Redis, run: str) -> list[tuple[str, int]]:
    """Every sample of the run that has no result yet, task by task."""
    tasks = sorted(client.hkeys(keys.expected(run)))
    pipe = client.pipeline(transaction=False)
    for task_id in tasks:
        pipe.hkeys(keys.pending(run, task_id))
    refs = []
    for task_id, indices in zip(tasks, pipe.execute(), strict=True):
        refs.extend((task_id, int(index)) for index in sorted(indices, key=int))
    return refs


def enqueue(client: redis.Redis, meta: RunMeta, refs: Sequence[tuple[str, int]], batch_size: int) -> int:
    """Queue the samples as jobs of up to batch_size each, at the run's priority; returns the number of
    jobs.

    Small runs get small jobs, so that every worker gets a share (up to 64 workers); from about a
    thousand samples on, the full batch, so that enqueueing (one Celery message costs ~0.4 ms) and
    Celery's own work per message are not the bottleneck. Runs share the workers by samples, not jobs
    (worker/queue/schedule.py), so small jobs give a run no more than its share.
    """
    from codeexec.worker.queue.ticks import send  # imports the Celery app, configured from the settings

    size = job_size(len(refs), batch_size)
    jobs = [Job(run=meta.run, samples=list(chunk)) for chunk in _chunks(refs, size)]
    send(client, meta.run, jobs, meta.priority, environment=meta.environment)
    return len(jobs)


def job_size(samples: int, batch_size: int) -> int:
    """Samples per job when `samples` are enqueued at once (enqueue() says why)."""
    return max(1, min(batch_size, samples // 64))


def _chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def resume(client: redis.Redis, run: str, samples_path: Path | None = None) -> int:
    """Enqueue again exactly the samples of the run that have no result; returns how many.

    If the producer died while storing the samples, the rest are stored first, from the run's samples
    file (which must be unchanged).
    """
    meta = runs.meta(client, run)
    if meta.status == "storing":
        problems = load_problems(meta.problems, meta.split, meta.challenge)
        samples = read_samples(samples_path or Path(meta.samples_path), problems, True, meta.treat_as)
        if samples.sha256 != meta.samples_sha256:
            raise InputError(f"{samples.path}: not the samples file run {run!r} was submitted with")
        store_samples(client, meta, problems, samples)
        meta.status = "stored"
        save_meta(client, meta)
    meta.status = "queued"  # before its jobs: a cancelled run's jobs are not taken back from a dead worker
    save_meta(client, meta)
    # Jobs still waiting (a producer killed while sending has more jobs than ticks) are replaced by a
    # job for every pending sample, each with its tick.
    Schedule(client, meta.environment).drop(run)
    refs = pending_samples(client, run)
    enqueue(client, meta, refs, get_settings().batch_size)
    return len(refs)


def cancel(client: redis.Redis, run: str) -> int:
    """Stop the run: its waiting jobs are dropped, the jobs workers hold finish, results are kept
    (`resume` carries on). Returns the number of samples dropped."""
    meta = runs.meta(client, run)
    meta.status = "cancelled"  # first: from now on a dead worker's job of the run is not sent again
    save_meta(client, meta)
    return Schedule(client, meta.environment).drop(run)


def parse_priority(priority: int | str) -> int:
    """A priority as the CLI and the API take it: "high", "normal", "low", or a whole number."""
    if isinstance(priority, int) and not isinstance(priority, bool):
        return priority
    text = str(priority).strip().lower()
    if text in PRIORITIES:
        return PRIORITIES[text]
    try:
        return int(text)
    except ValueError:
        raise InputError(f"priority {priority!r}: expected high, normal, low or a whole number") from None


def truth_run(client: redis.Redis, meta: RunMeta, make: bool) -> str:
    """The run of the canonical solutions of `meta`'s tasks, run as its samples were (problems, environment,
    isolation, limit): BigCodeBench's ground truth. Like BigCodeBench's cached ground truth it is one run, kept
    for every later run alike; submitted here if there is none and `make`. Its name."""
    tasks = sorted(runs.tasks(client, meta.run))
    alike = [meta.problems_sha256, meta.split, tasks, meta.environment, meta.isolation, meta.time_limit_s]
    name = "gt-" + hashlib.sha256(json.dumps(alike).encode()).hexdigest()[:16]
    if make and client.get(keys.meta(name)) is None:
        problems = load_problems(meta.problems, meta.split, meta.challenge)
        chosen = {task_id: problems[task_id] for task_id in tasks}
        samples = read_samples(
            write_canonical_samples(meta.problems, get_settings().data_dir / "samples", chosen), chosen
        )
        how = {"isolation": meta.isolation, "environment": meta.environment}
        truth = new_meta(name, meta.problems, samples, meta.time_limit_s, [1], meta.split, **how)
        submit(client, chosen, samples, truth, get_settings().batch_size)
    return name


def set_priority(client: redis.Redis, run: str, priority: int) -> RunMeta:
    """The run's priority from its next job on."""
    meta = runs.meta(client, run)
    meta.priority = priority
    save_meta(client, meta)
    Schedule(client, meta.environment).reprioritize(run, priority)
    return meta
