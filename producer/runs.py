"""The producer's read side of Redis: a run as submit.py stored it and the workers recorded it
(worker/queue/store.py, WorkerStore), read here and nowhere else. The service's waits read the same keys
with an asyncio client (service/dispatch.py), and decode what they read with results() and result() below.

    meta(run)                      the run as submitted (RunMeta)
    progress(run)                  samples with a result, samples submitted
    tasks(run)                     each task's number of samples
    counts(run)                    each task's n, c and base c; the run's counters and notes
    task_results(run, task_ids)    each task's stored results, by sample index
    result_fields(run, task_ids)   the same as plain JSON objects, for a pass over every result of a large run
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import redis

from codeexec.producer.inputs.files import InputError
from codeexec.protocol import keys
from codeexec.protocol.models import RunMeta
from codeexec.protocol.result import StoredResult


def meta(client: redis.Redis, run: str) -> RunMeta:
    """The run as submitted; InputError if there is no such run."""
    raw = client.get(keys.meta(run))
    if raw is None:
        raise InputError(f"no run named {run!r} (codeexec runs lists them)")
    return RunMeta.model_validate_json(raw)


def progress(client: redis.Redis, run: str) -> tuple[int, int]:
    """(samples with a result, samples submitted)."""
    submitted = meta(client, run).n_samples
    return int(client.hget(keys.stats(run), keys.DONE) or 0), submitted


def tasks(client: redis.Redis, run: str) -> dict[str, int]:
    """Each of the run's tasks, and how many samples it has."""
    return {task_id: int(count) for task_id, count in client.hgetall(keys.expected(run)).items()}


@dataclass(frozen=True)
class Counts:
    """What the record script keeps moving as results land: per task, n (results that count), c (passed)
    and c_base (passed the base check); per run, the counters of keys.stats (outcomes, protections,
    workers, times) and the workers' notes."""

    expected: dict[str, int]
    n: dict[str, int]
    c: dict[str, int]
    c_base: dict[str, int]
    stats: dict[str, str]
    notes: set[str]


def counts(client: redis.Redis, run: str) -> Counts:
    pipe = client.pipeline(transaction=False)
    for key in (keys.expected(run), keys.n(run), keys.c(run), keys.c_base(run), keys.stats(run)):
        pipe.hgetall(key)
    pipe.smembers(keys.notes(run))
    expected, n, c, c_base, stats, notes = pipe.execute()
    whole = [{task_id: int(value) for task_id, value in table.items()} for table in (expected, n, c, c_base)]
    return Counts(*whole, stats=stats, notes=set(notes))


def result(raw: str) -> StoredResult:
    """One result as the record script stored it."""
    return StoredResult.model_validate_json(raw)


def results(stored: Mapping[str, str]) -> dict[int, StoredResult]:
    """A task's results as HGETALL gives them (sample index -> JSON), decoded."""
    return {int(index): result(raw) for index, raw in stored.items()}


def task_results(client: redis.Redis, run: str, task_ids: Iterable[str]) -> dict[str, dict[int, StoredResult]]:
    """Each task's results, by sample index: one read per task, in one round trip."""
    task_ids = list(task_ids)
    pipe = client.pipeline(transaction=False)
    for task_id in task_ids:
        pipe.hgetall(keys.results(run, task_id))
    return {task_id: results(found) for task_id, found in zip(task_ids, pipe.execute(), strict=True)}


def result_fields(client: redis.Redis, run: str, task_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """Each task's results as plain JSON objects (a StoredResult's fields), unordered: for a pass over every
    result of a run of a million, where validating each would cost more than the pass."""
    task_ids = list(task_ids)
    pipe = client.pipeline(transaction=False)
    for task_id in task_ids:
        pipe.hvals(keys.results(run, task_id))
    return {task_id: list(map(json.loads, found)) for task_id, found in zip(task_ids, pipe.execute(), strict=True)}
