"""The Celery task: evaluate the samples of one job and record each result exactly once."""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from functools import partial

from celery.signals import worker_init, worker_process_init

from codeexec.protocol import keys
from codeexec.protocol.models import Problem
from codeexec.protocol.result import Outcome, RunResult, StoredResult
from codeexec.protocol.settings import get_settings, with_preload
from codeexec.worker import environments
from codeexec.worker.judging.context import Context
from codeexec.worker.judging.kinds import kind_of
from codeexec.worker.judging.sample_program import program_for, unclosed_fence
from codeexec.worker.process.protections import check_at_start, summary
from codeexec.worker.process.zygote import LOST as ZYGOTE_LOST
from codeexec.worker.queue import ticks
from codeexec.worker.queue.celery_app import app
from codeexec.worker.queue.leases import Heart
from codeexec.worker.queue.store import WorkerStore, connect

log = logging.getLogger(__name__)
_stores: dict[int, WorkerStore] = {}
_hearts: dict[int, Heart] = {}


def store() -> WorkerStore:
    """This process's store: a prefork pool process must not share the parent's Redis connection."""
    pid = os.getpid()
    if pid not in _stores:
        _stores.clear()
        _stores[pid] = WorkerStore(connect(get_settings().effective_redis_url))
    return _stores[pid]


@worker_init.connect
def probe_protections(**_: object) -> None:
    """Before the pool starts: log what candidates run under here; exit if a required one is missing."""
    check_at_start()


@worker_process_init.connect
def heart(**_: object) -> Heart:
    """This process's heartbeat (worker/queue/leases.py), beating from the moment the pool process starts,
    with the environments it serves (worker/environments.py)."""
    pid = os.getpid()
    if pid not in _hearts:
        _hearts.clear()
        _hearts[pid] = Heart(store().client, environments.served(get_settings()))
        _hearts[pid].start()
    return _hearts[pid]


@app.task(name=ticks.TASK)
def evaluate(environment: str | None = None) -> None:
    """A tick: run the job the schedule of `environment` picks next (worker/queue/schedule.py), if one still
    waits."""
    with heart().next_job(environment) as job:
        for task_id, index in job.samples if job else []:
            evaluate_sample(store(), job.run, task_id, index)


def evaluate_sample(db: WorkerStore, run: str, task_id: str, index: int) -> None:
    sample, attempt = db.claim(run, task_id, index)
    problem = db.problem(run, task_id)
    if sample is None or problem is None:
        return  # recorded already: this is a duplicate or redelivered job
    problem = problem.for_sample(sample.language)
    meta = db.meta(run)
    kind = kind_of(problem.tests)
    if attempt > get_settings().max_attempts:
        # Every earlier delivery ended with its worker process dead (a crash that killed the worker,
        # not just the candidate): do not try again and again, record it.
        result = _died_each_time(problem.total, "the worker evaluating this sample", attempt - 1)
    elif meta.options.strict_verdicts and (unsplit := kind.in_process(problem.tests)):
        why = f"assertion {unsplit} is not one the host can compare, and the run has --strict-verdicts"
        result = RunResult.not_run(Outcome.ERROR, problem.total, why)
    elif (options := _options(db, run, problem)) is None:
        needed = meta.options.environment
        why = f"this worker has no environment {needed!r} (codeexec env build {needed})"
        result = RunResult.not_run(Outcome.INFRA_ERROR, problem.total, why)
    else:
        context = Context(meta=meta, problem=problem, options=options, store=db)
        once = partial(kind.judge, tests=problem.tests, context=context)
        result = _run(problem.total, program_for(problem, sample), once)
        if result.wall_clock_only:
            db.note(run, "time limits counted wall-clock time on some workers: their kernel gives no CPU-wait figure")
    under = keys.protections_field(socket.gethostname(), summary(result.protections)) if result.protections else ""
    stored = StoredResult.from_run(result)
    stored.host_compared = min(kind.host_compared(problem.tests), stored.total)
    ran_by = keys.worker_field(socket.gethostname(), os.getpid())
    channel = keys.done(run) if meta.notify else ""
    db.record(run, task_id, index, stored, protections=under, worker=ran_by, channel=channel)


def _options(db: WorkerStore, run: str, problem: Problem) -> dict[str, object] | None:
    """How the run's candidates of `problem` run here (RunnerConfig fields), in its environment; None if this
    worker has not got it (only a tick sent to it by hand brings it such a job)."""
    options = db.runner_options(run)
    needed = db.meta(run).options.environment
    if needed is not None:
        found = environments.load(get_settings().data_dir, needed)
        if found is None:
            return None
        options |= found.runner_options()
    return with_preload(options, problem.preload) if problem.preload else options


def _run(total: int, code: str | None, once: Callable[[str], RunResult]) -> RunResult:
    """Run the program; an infra_error (the machine's fault) is retried with backoff, then kept; one that
    trying again cannot mend (a toolchain this worker lacks) is kept at once."""
    if code is None:
        return unclosed_fence(total)
    attempts = get_settings().max_attempts
    zygote_lost = 0
    for attempt in range(1, attempts + 1):
        result = once(code)
        if result.exit_code is not Outcome.INFRA_ERROR or result.lasting:
            return result
        log.warning("infra_error (attempt %d of %d): %s", attempt, attempts, result.detail)
        zygote_lost += result.detail.startswith(ZYGOTE_LOST)
        if attempt < attempts:
            time.sleep(0.5 * 2**attempt)
    if zygote_lost == attempts:
        # As with a worker that dies under the same sample every time: without a PID namespace the
        # candidate can reach its zygote (its parent), and the rest of the machine did not fail meanwhile.
        return _died_each_time(total, "the zygote this sample was forked from", attempts)
    result.detail = f"{result.detail} (after {attempts} attempts)"
    return result


def _died_each_time(total: int, what: str, attempts: int) -> RunResult:
    return RunResult.not_run(Outcome.ERROR, total, f"{what} died on each of {attempts} attempts; not run again")
