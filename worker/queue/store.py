"""The worker's side of Redis: read a job's problem and samples, and record each result exactly once."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

import redis
from pydantic import BaseModel
from redis.backoff import ExponentialBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError
from redis.retry import Retry

from codeexec.protocol import keys
from codeexec.protocol.models import Problem, Sample, Truth
from codeexec.protocol.result import StoredResult
from codeexec.protocol.run import RunMeta

# One atomic step per result: the first write of (run, task, sample) wins; only that write removes the
# sample from pending and moves the task's n and c and the run's counters. A redelivered or duplicated
# job finds the field taken and changes nothing.
#   KEYS: results, pending, n, c, stats, c_base
#   ARGV: index, result JSON, task_id, outcome field, in n, passed, done field, protections field (field
#   names: protocol/keys.py; the last may be empty), base check passed (HumanEval+), the counts of tests
#   judged in the host and in the candidate's process, each after its field's name, the worker's field,
#   and the names of the fields of the first and the last result's time (Redis's clock: one for every host),
#   and the channel told of the result ("": none)
_RECORD = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 0 then
    return 0
end
redis.call('HDEL', KEYS[2], ARGV[1])
if ARGV[5] == '1' then redis.call('HINCRBY', KEYS[3], ARGV[3], 1) end
if ARGV[6] == '1' then redis.call('HINCRBY', KEYS[4], ARGV[3], 1) end
redis.call('HINCRBY', KEYS[5], ARGV[4], 1)
redis.call('HINCRBY', KEYS[5], ARGV[7], 1)
if ARGV[8] ~= '' then redis.call('HINCRBY', KEYS[5], ARGV[8], 1) end
if ARGV[9] == '1' then redis.call('HINCRBY', KEYS[6], ARGV[3], 1) end
if ARGV[11] ~= '0' then redis.call('HINCRBY', KEYS[5], ARGV[10], ARGV[11]) end
if ARGV[13] ~= '0' then redis.call('HINCRBY', KEYS[5], ARGV[12], ARGV[13]) end
if ARGV[14] ~= '' then redis.call('HINCRBY', KEYS[5], ARGV[14], 1) end
local now = redis.call('TIME')
now = now[1] .. '.' .. string.format('%06d', now[2])
redis.call('HSETNX', KEYS[5], ARGV[15], now)
redis.call('HSET', KEYS[5], ARGV[16], now)
if ARGV[17] ~= '' then redis.call('PUBLISH', ARGV[17], ARGV[3] .. '\t' .. ARGV[1]) end
return 1
"""

_PROBLEM_CACHE = 4096
_TRUTH_CACHE = 256  # a HumanEval+ truth is up to ~1 MB
_Model = TypeVar("_Model", bound=BaseModel)


def _cached(
    cache: OrderedDict[tuple[str, str], _Model],
    limit: int,
    key: tuple[str, str],
    hash_key: str,
    client: redis.Redis,
    model: type[_Model],
) -> _Model | None:
    """The model stored in field key[1] of hash_key, read once and kept (the `limit` last used)."""
    if key in cache:
        cache.move_to_end(key)
        return cache[key]
    raw = client.hget(hash_key, key[1])
    if raw is None:
        return None
    found = cache[key] = model.model_validate_json(raw)
    if len(cache) > limit:
        cache.popitem(last=False)
    return found


class _Backoff(ExponentialBackoff):
    """redis-py's exponential backoff, but that it stops retrying, with the reason, once `give_up` gives one."""

    def __init__(self, give_up: Callable[[], str | None]) -> None:
        super().__init__(cap=2.0, base=0.05)
        self.give_up = give_up

    def compute(self, failures: int) -> float:
        if (why := self.give_up()) is not None:
            raise ConnectionError(why)
        return super().compute(failures)


def connect(url: str, give_up: Callable[[], str | None] = lambda: None) -> redis.Redis:
    """A client that rides out a restart of the server: a command retries with backoff for about a minute,
    unless `give_up` says why the server will not be back (the private Valkey's keeper: producer/local/valkey.py).

    Retrying is safe for everything codeexec sends: writes are idempotent (HSET, HSETNX in the record
    script), except the delivery-attempt counter, where a rare extra count only brings the attempt
    limit a little closer.
    """
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        retry=Retry(_Backoff(give_up), 40),
        retry_on_error=[ConnectionError, TimeoutError, BusyLoadingError],
        health_check_interval=30,
    )


class WorkerStore:
    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self._record = client.register_script(_RECORD)
        self._problems: OrderedDict[tuple[str, str], Problem] = OrderedDict()
        self._truths: OrderedDict[tuple[str, str], Truth] = OrderedDict()
        self._metas: dict[str, RunMeta] = {}

    def problem(self, run: str, task_id: str) -> Problem | None:
        """The task's problem; a run's problems never change, so each process asks Redis once per task."""
        return _cached(self._problems, _PROBLEM_CACHE, (run, task_id), keys.problems(run), self.client, Problem)

    def truth(self, run: str, task_id: str) -> Truth | None:
        """The canonical solution's outputs for a HumanEval+ task, once a worker has computed them. Cached
        like problems: they never change once written."""
        return _cached(self._truths, _TRUTH_CACHE, (run, task_id), keys.truth(run), self.client, Truth)

    def keep_truth(self, run: str, task_id: str, truth: Truth) -> Truth:
        """Store the truth unless another worker stored one first; the one stored."""
        self.client.hsetnx(keys.truth(run), task_id, truth.model_dump_json())
        found = self.truth(run, task_id)
        assert found is not None
        return found

    def meta(self, run: str) -> RunMeta:
        """The run's metadata, read once per run and process (what workers use of it never changes)."""
        if run not in self._metas:
            raw = self.client.get(keys.meta(run))
            self._metas[run] = RunMeta.model_validate_json(raw) if raw else RunMeta.model_construct()
        return self._metas[run]

    def kept_truth(self, key: str) -> Truth | None:
        """A truth an earlier run computed for the same tests (evalplus.truth_key())."""
        raw = self.client.hget(keys.TRUTHS, key)
        return None if raw is None else Truth.model_validate_json(raw)

    def keep_for_later(self, key: str, truth: Truth) -> None:
        self.client.hsetnx(keys.TRUTHS, key, truth.model_dump_json())

    def runner_options(self, run: str) -> dict[str, object]:
        """How the run's candidates are run (RunnerConfig fields): its hash seed, isolation and limits."""
        meta = self.meta(run)
        return {**meta.runner, "hash_seed": meta.options.hash_seed, "isolation": meta.options.isolation}

    def note(self, run: str, text: str) -> None:
        """Say something about the run that its report shows (each note once)."""
        self.client.sadd(keys.notes(run), text)

    def claim(self, run: str, task_id: str, index: int) -> tuple[Sample | None, int]:
        """The sample if it still has no result (None for a duplicate delivery of a finished one), and
        how many deliveries of it there have been, this one included. One round trip."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hget(keys.pending(run, task_id), str(index))
        pipe.hincrby(keys.attempts(run, task_id), str(index), 1)
        raw, attempt = pipe.execute()
        return (None if raw is None else Sample.model_validate_json(raw)), int(attempt)

    def record(
        self,
        run: str,
        task_id: str,
        index: int,
        result: StoredResult,
        client: redis.client.Pipeline | None = None,
        protections: str = "",
        worker: str = "",
        channel: str = "",
    ) -> bool:
        """Store the result unless the sample has one already; True if this write counted.

        With a pipeline as `client`, the write is queued on it and the return value means nothing.
        `protections`: the run's stats field that counts what the candidate ran under (protocol/keys.py), if any;
        `worker`: the stats field that counts the results of the worker process that ran it, if any;
        `channel`: where the result's "task_id<TAB>index" is published once it counts (keys.done()), if anywhere.
        """
        written = self._record(
            keys=[
                keys.results(run, task_id),
                keys.pending(run, task_id),
                keys.n(run),
                keys.c(run),
                keys.stats(run),
                keys.c_base(run),
            ],
            args=[
                index,
                result.model_dump_json(exclude_defaults=True),  # fewer bytes in a 1M-result run
                task_id,
                keys.outcome_field(result.exit_code.value),
                int(result.counts_toward_n),
                int(result.exit_code == "pass"),
                keys.DONE,
                protections,
                int(result.base_status == "pass"),
                keys.JUDGED_HOST,
                result.host_compared,
                keys.JUDGED_IN_PROCESS,
                result.total - result.host_compared,
                worker,
                keys.FIRST_RESULT,
                keys.LAST_RESULT,
                channel,
            ],
            client=client,
        )
        return bool(written)
