"""Runs sharing the workers (worker/queue/schedule.py), with a real Valkey and real workers: a small run
submitted during a big one is served alongside it, priorities hold and can change while runs run, a
cancelled run stops and leaves Redis consistent, and jobs that lost their Celery messages still run.

Nothing here is timed: each check counts what the workers did (results, and the Redis-clock times of
a run's first and last result), which no load on the machine changes.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import redis

from codeexec.producer.run import job_size
from codeexec.protocol import keys
from codeexec.protocol.settings import get_settings
from codeexec.worker.queue.leases import in_flight
from helpers import Suite, Worker, assert_exact, codeexec, make_suite, report, submit, wait_done


def done(client: redis.Redis, run: str) -> int:
    return int(client.hget(keys.stats(run), keys.DONE) or 0)


def result_times(client: redis.Redis, run: str) -> tuple[float, float]:
    """When the run's first and latest results were recorded (Redis's clock)."""
    first, last = client.hmget(keys.stats(run), keys.FIRST_RESULT, keys.LAST_RESULT)
    return float(first), float(last)


#: A run's time limit where its worker is frozen: a candidate stopped with it is charged the time it was stopped
#: (a stopped process does not wait for a CPU), so the limit is far longer than any command run meanwhile.
FROZEN_TIMEOUT = ("--timeout", "60")


@contextmanager
def frozen(worker: Worker) -> Iterator[None]:
    """The worker and its pool stopped (SIGSTOP): no result is recorded and no job taken meanwhile."""
    os.killpg(worker.process.pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.killpg(worker.process.pid, signal.SIGCONT)


def folder(parent: Path, name: str) -> Path:
    (parent / name).mkdir()
    return parent / name


def samples_per_job(suite: Suite) -> int:
    """Samples per job, as producer/run.py's Run.enqueue() cuts them for a run this size."""
    return job_size(suite.total, get_settings().batch_size)


@pytest.mark.once  # what the other passes cross, at length
def test_a_small_run_submitted_mid_sweep_is_served_alongside_it(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    big = make_suite(folder(tmp_path, "big"), tasks=8, per_task=60, slow_s=0.02)  # 480 samples, jobs of 7
    small = make_suite(folder(tmp_path, "small"), tasks=8, per_task=4)  # 32 samples, jobs of 1
    worker = start_worker("w1", concurrency=2)
    submit(env, big, "big", *FROZEN_TIMEOUT)
    wait_done(client, "big", 20)
    with frozen(worker):
        big_before = done(client, "big")
        submit(env, small, "small")
    wait_done(client, "small", small.total, timeout=600)
    big_during = done(client, "big") - big_before
    # First in, first out, the big run's ~450 waiting samples would all come first. Shared, it gets
    # no more than the small run's 32 samples, plus, per pool process, a job in hand and a result on
    # its way to Redis as the worker froze, and a job a heartbeat after the freeze may have taken back;
    # and one job ahead.
    per_job = samples_per_job(big)
    assert big_during <= small.total + 2 * (per_job + 1 + per_job) + per_job, big_during
    assert done(client, "big") < big.total  # still running
    assert_exact(env, "small", small)
    assert_exact(env, "big", big)


def test_priorities_are_served_in_order(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suites = {name: make_suite(folder(tmp_path, name), tasks=4, per_task=6) for name in ("normal", "low", "high")}
    for name in ("normal", "low", "high"):  # all queued before any worker: first in would be "normal"
        submit(env, suites[name], name, *([] if name == "normal" else ["--priority", name]))
    start_worker("w1", concurrency=1)  # one process: one job at a time, in the schedule's order
    for name, suite in suites.items():
        assert_exact(env, name, suite)
    times = {name: result_times(client, name) for name in suites}
    assert times["high"][1] < times["normal"][0] and times["normal"][1] < times["low"][0], times
    listed = codeexec(env, "runs")
    assert listed.returncode == 0, listed.stderr
    assert {line.split()[0]: line for line in listed.stdout.splitlines()}["low"].count("priority low") == 1


@pytest.mark.once  # what the other passes cross, at length
def test_a_priority_changed_while_runs_run_applies_from_the_next_job(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    first = make_suite(folder(tmp_path, "first"), tasks=4, per_task=10, slow_s=0.02)  # 40 samples: jobs of 1
    second = make_suite(folder(tmp_path, "second"), tasks=4, per_task=10, slow_s=0.02)
    worker = start_worker("w1", concurrency=1)
    for name, suite in (("first", first), ("second", second)):
        submit(env, suite, name, *FROZEN_TIMEOUT)
    wait_done(client, "second", 3)
    with frozen(worker):
        first_before = done(client, "first")
        changed = codeexec(env, "priority", "second", "high")
        assert changed.returncode == 0, changed.stderr
        assert "priority high" in changed.stdout
        status = codeexec(env, "status", "second")
        assert status.returncode == 0 and "priority high" in status.stdout, status.stdout
    wait_done(client, "second", second.total)
    # At most: a result on its way to Redis as the worker froze, and the job in hand when it changed.
    assert done(client, "first") <= first_before + 2
    assert json.loads(client.get(keys.meta("second")))["options"]["priority"] == 10
    assert_exact(env, "first", first)
    bad = codeexec(env, "priority", "second", "urgent")
    assert bad.returncode == 2 and "high, normal, low or a whole number" in bad.stderr


def test_a_cancelled_run_stops_keeps_its_results_and_resumes(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=8, per_task=30, slow_s=0.02)  # 240 samples, jobs of 3
    worker = start_worker("w1", concurrency=2)
    submit(env, suite, "r", *FROZEN_TIMEOUT)
    wait_done(client, "r", 10)
    with frozen(worker):  # the run cannot end before its cancel, however long the command takes to start
        cancelled = codeexec(env, "cancel", "r")
        assert cancelled.returncode == 0, cancelled.stderr
        at_cancel = done(client, "r")
    waited = codeexec(env, "status", "r", "--wait")  # returns: a cancelled run will not finish
    assert waited.returncode == 0 and "cancelled" in waited.stdout + waited.stderr, waited
    deadline = time.monotonic() + 120
    while in_flight(client, "r"):  # the jobs in hand finish
        assert time.monotonic() < deadline
        time.sleep(0.05)
    final = done(client, "r")
    assert final - at_cancel <= 2 * samples_per_job(suite) and final < suite.total
    assert client.llen(keys.jobs("r")) == 0 and client.zscore(keys.ACTIVE, "r") is None

    # Consistent: every sample is a result or pending, never both; n and c count exactly the results.
    document = report(env, "r")
    for task_id, submitted in suite.n.items():
        results = client.hgetall(keys.results("r", task_id))
        pending = client.hkeys(keys.pending("r", task_id))
        assert set(results).isdisjoint(pending) and len(results) + len(pending) == submitted
        passed = sum((int(task_id[1:]) + int(sample)) % 3 != 0 for sample in results)  # make_suite's rule
        counted = document["tasks"].get(task_id, {"n": 0, "c": 0})
        assert (counted["n"], counted["c"]) == (len(results), passed)
    assert (
        document["n_done"] == final
        and f"cancelled: {final} of {suite.total} samples have a result" in document["notes"]
    )
    assert document["meta"]["status"] == json.loads(client.get(keys.meta("r")))["status"] == "cancelled"

    resumed = codeexec(env, "resume", "r", timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert_exact(env, "r", suite)


@pytest.mark.once  # what the other passes cross, at length
def test_jobs_whose_celery_messages_were_lost_still_run(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    # The ticks a dead host had reserved come back only after the visibility timeout: the workers see
    # jobs waiting with no tick queued, and send ticks for them (worker/queue/leases.py's Heart.wake).
    suite = make_suite(tmp_path, tasks=4, per_task=3)
    submit(env, suite, "lost")
    client.delete(keys.QUEUE)
    start_worker("w1", concurrency=1)
    waited = codeexec(env, "status", "lost", "--wait", timeout=600)
    assert waited.returncode == 0, waited.stderr
    assert "enqueued them again" not in waited.stderr  # not the command's repair: the workers' own
    assert_exact(env, "lost", suite)
