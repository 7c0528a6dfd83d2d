"""Leases, with real Valkey and Celery workers and default settings: a dead worker's jobs run again
within seconds, a slow one keeps its work, a frozen one loses it and counts nothing twice."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis
from test_distributed import assert_exact, report, submit, wait_done

from codeexec.protocol import keys
from codeexec.worker.queue.leases import LEASE_S, in_flight, workers
from helpers import Worker, codeexec, make_suite, wait_until, write_jsonl


def test_a_worker_killed_whole_costs_seconds_not_the_visibility_timeout(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=6, per_task=5, slow_s=0.3)
    doomed = start_worker("doomed")
    start_worker("survivor")
    submit(env, suite, "death")
    wait_done(client, "death", 4)
    holds = lambda: any(w.run == "death" and w.pid in doomed.pool_pids() for w in workers(client))  # noqa: E731
    wait_until(holds, "the doomed worker never held a job")
    doomed.kill_whole()
    killed = time.monotonic()
    assert_exact(env, "death", suite)
    # The figure: within 60 s of the kill (the visibility timeout alone would be over an hour).
    assert time.monotonic() - killed < 60


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_a_slow_worker_keeps_its_work(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    # Each candidate runs past a lease (a pool process beats while its candidate runs): no sample is
    # handed out twice, so each was delivered once.
    problems = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "t", "assertions": ["assert True"], "timeout_s": 25}])
    slow = f"import time\ntime.sleep({LEASE_S + 3})\n"
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t", "completion": slow}] * 2)
    start_worker("w1")
    start_worker("w2")
    out = codeexec(env, "submit", "--problems", str(problems), "--samples", str(samples), "--run", "slow")
    assert out.returncode == 0, out.stderr
    assert codeexec(env, "status", "slow", "--wait").returncode == 0
    assert client.hgetall(keys.attempts("slow", "t")) == {"0": "1", "1": "1"}
    task = report(env, "slow")["tasks"]["t"]
    assert (task["n"], task["c"]) == (2, 2)


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_a_frozen_worker_loses_its_work_and_resumed_counts_nothing_twice(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=2, per_task=3, slow_s=1.0)
    frozen = start_worker("frozen")
    submit(env, suite, "frozen")
    wait_until(lambda: in_flight(client, "frozen") > 0, "the worker never took a job")
    os.killpg(frozen.process.pid, signal.SIGSTOP)
    try:
        start_worker("thawed")
        assert_exact(env, "frozen", suite)  # the other worker did all, the frozen one's job included
    finally:
        os.killpg(frozen.process.pid, signal.SIGCONT)
    # Resumed, it finishes the job it held and writes results that were written already: ignored.
    wait_until(lambda: in_flight(client, "frozen") == 0, "the resumed worker never let go of its job")
    document = assert_exact(env, "frozen", suite)
    assert sum(document["outcomes"].values()) == suite.total


def test_status_shows_workers_and_says_when_there_is_none(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker], client: redis.Redis
) -> None:
    suite = make_suite(tmp_path, tasks=2, per_task=2)
    submit(env, suite, "alone")
    out = codeexec(env, "status", "alone")
    assert out.returncode == 0, out.stderr
    assert "alone: 0 / 4 samples done; 0 in flight, 4 waiting" in out.stdout
    assert "no live worker is taking this run's samples" in out.stdout
    worker = start_worker("w1")
    assert codeexec(env, "status", "alone", "--wait").returncode == 0
    out = codeexec(env, "status", "alone")
    assert "alone: 4 / 4 samples done (complete); 0 in flight, 0 waiting" in out.stdout
    assert "no live worker" not in out.stdout
    assert str(worker.pool_pids()[0]) in out.stdout  # the workers table: its pool process
    listed = json.loads(codeexec(env, "workers", "--json").stdout)
    assert any(row["pid"] == worker.pool_pids()[0] and row["alive"] for row in listed)
