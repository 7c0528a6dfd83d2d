"""Leases: a worker holds its jobs only while it is alive to say so, so that a dead host costs seconds.

Celery gives a job back when the worker running it acknowledges or rejects it; if the pool process
dies, Celery's main process rejects the job at once (task_reject_on_worker_lost). If the whole host
dies, nothing is left to reject it, and kombu restores it only after its visibility timeout, which
must exceed the longest job (hours, with the wall-clock ceiling). Leases make that seconds:

- every worker process has a heartbeat thread; every HEARTBEAT_S it records that it is alive
  (keys.WORKERS, keys.worker) and renews the lease of the job it is running (keys.LEASES,
  keys.lease), in one script, on Redis's clock (hosts' clocks need not agree);
- on the same beat it looks for leases LEASE_S past their renewal: their workers are dead, or frozen.
  One script hands each such lease to exactly one looker and pushes its expiry on, so that if that
  looker dies before it is done, another takes it over; the looker enqueues again, as a new job, the
  samples of the job that still have no result, then deletes the lease;
- the record script keeps the first result of a sample, so a job delivered twice (the new one, the
  old one when kombu restores it, or the old worker's if it was only frozen and carries on) never
  counts twice, and a sample delivered again counts one more attempt (a sample that takes its
  host down every time is recorded as such after CODEEXEC_MAX_ATTEMPTS).

The figures: a heartbeat every 2 s, a lease of 10 s. Five missed beats in a row mean a worker is
gone, not merely slow (a loaded machine or a Redis restart delays a beat by far less; a candidate,
however long it runs, runs in another process and never holds the beat up). A dead host's jobs are
enqueued again within 10 + 2 s of its death, and run as soon as a worker is free.

A job and its lease are taken out together, in one script (worker/queue/schedule.py): no job is ever held
without a lease, and a job cut short by an exception lets its lease expire, to be sent again the same
way. What a worker's main process reserves and a dead host loses is a tick (a Celery message that
carries no job); it comes back only with the visibility timeout, so on each beat, when jobs wait and
no tick is queued, one process sends ticks for them (Heart.wake).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import redis
from pydantic import BaseModel

from codeexec.protocol import keys
from codeexec.protocol.run import Job, RunMeta
from codeexec.worker.languages import found_here
from codeexec.worker.queue.schedule import Schedule

log = logging.getLogger(__name__)

HEARTBEAT_S = 2.0
LEASE_S = 10.0
_FORGET_WORKER_S = 3600.0  # how long a dead worker stays listed (as dead) before it is forgotten
_REAP_AT_ONCE = 16

# KEYS: WORKERS, worker hash, LEASES. ARGV: worker id, lease seconds, forget seconds, host, pid,
# started, environments (JSON), languages (JSON), [lease id].
_BEAT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('HSET', KEYS[2], 'last', now, 'host', ARGV[4], 'pid', ARGV[5], 'started', ARGV[6], 'environments', ARGV[7],
           'languages', ARGV[8])
redis.call('EXPIRE', KEYS[2], math.ceil(tonumber(ARGV[3])))
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if ARGV[9] then redis.call('ZADD', KEYS[3], 'XX', now + tonumber(ARGV[2]), ARGV[9]) end
"""

# KEYS: LEASES. ARGV: lease seconds, most. Leases past their expiry, each pushed on by a lease so
# that no other looker takes it meanwhile: [id, id, ...].
_EXPIRED = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))
for _, id in ipairs(expired) do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), id) end
return expired
"""


class Lease(BaseModel):
    """A job as a worker holds it."""

    job: Job
    worker: str
    taken: float  # unix time (the worker's clock, for people)


class Worker(BaseModel):
    """What `codeexec status` shows of a worker process."""

    id: str
    host: str
    pid: int
    started: float
    run: str = ""
    samples: int = 0  # in the job in hand
    last: float  # its last heartbeat, on Redis's clock
    alive: bool
    environments: list[str] = []  # besides its own Python (worker/environments.py)
    languages: list[str] | None = None  # those whose toolchain it has (worker/languages/); None: not said


class Heart:
    """This process's heartbeat and the job it holds; one per worker process (see beating()).
    `environments`: those the worker serves besides its own Python (worker/environments.py)."""

    def __init__(self, client: redis.Redis, environments: list[str] | None = None) -> None:
        self.client = client
        self.host, self.pid, self.started = socket.gethostname(), os.getpid(), time.time()
        self.id = f"{self.host}:{self.pid}:{secrets.token_hex(2)}"
        self.lease: str | None = None
        self.environments = list(environments or [])
        self.languages = found_here()
        self._beat = client.register_script(_BEAT)
        self._expired = client.register_script(_EXPIRED)
        self.schedules = {name: Schedule(client, name) for name in [None, *self.environments]}
        self._stopped = threading.Event()

    def beat(self) -> None:
        args = [self.id, LEASE_S, _FORGET_WORKER_S, self.host, self.pid, self.started, json.dumps(self.environments),
                json.dumps(self.languages)]  # fmt: skip
        if self.lease:
            args.append(self.lease)
        self._beat(keys=[keys.WORKERS, keys.worker(self.id), keys.LEASES], args=args)

    @contextmanager
    def next_job(self, environment: str | None = None) -> Iterator[Job | None]:
        """The job the schedule of `environment` picks (worker/queue/schedule.py), with a lease held on it
        while it runs; None if no job waits (another tick took it, or its run was cancelled), or this worker
        does not serve the environment (a tick routed here by hand)."""
        schedule = self.schedules.get(environment)
        taken = schedule.take(LEASE_S, self.id) if schedule is not None else None
        if taken is None:
            yield None
            return
        lease_id, job = taken
        self.client.hset(keys.worker(self.id), mapping={"run": job.run, "samples": len(job.samples)})
        self.lease = lease_id
        try:
            yield job
        except BaseException:
            # Cut short (Redis gone for longer than the client retries, a bug): the lease is no longer
            # renewed, expires, and the job's undone samples are sent again, as for a dead worker.
            self.lease = None
            raise
        else:
            self.lease = None
            pipe = self.client.pipeline(transaction=False)
            pipe.zrem(keys.LEASES, lease_id)
            pipe.delete(keys.lease(lease_id))
            pipe.hset(keys.worker(self.id), mapping={"run": "", "samples": 0})
            pipe.execute()

    def take_over_expired(self) -> int:
        """Enqueue again what the jobs of dead workers left undone; how many samples."""
        from codeexec.worker.queue import ticks  # the Celery app: configured when first imported

        again = 0
        for lease_id in self._expired(keys=[keys.LEASES], args=[LEASE_S, _REAP_AT_ONCE]):
            raw = self.client.get(keys.lease(lease_id))
            undone = self._undone(Lease.model_validate_json(raw).job) if raw else None
            meta = RunMeta.model_validate_json(self.client.get(keys.meta(undone.run))) if undone else None
            if undone and meta.status != "cancelled":
                # Ahead of the run's other jobs, at its priority now. If this fails part-way, the lease
                # comes round again: a job queued twice runs its samples once.
                try:
                    environment = meta.options.environment
                    ticks.send(
                        self.client, undone.run, [undone], meta.options.priority, front=True, environment=environment
                    )
                except Exception as exc:
                    log.warning("sending again the job of a gone worker: %s: %s", type(exc).__name__, exc)
                    continue
                count = len(undone.samples)
                again += count
                log.warning("a worker holding %d sample(s) of run %s is gone: sent again", count, undone.run)
            pipe = self.client.pipeline(transaction=False)
            pipe.zrem(keys.LEASES, lease_id)
            pipe.delete(keys.lease(lease_id))
            pipe.execute()
        return again

    def wake(self) -> int:
        """Jobs waiting with no Celery message queued to wake a worker for them: ticks a dead host had
        reserved (back only after the visibility timeout) or a send that failed part-way. One process
        per beat, anywhere, sends a tick for each, up to one per worker process; a tick too many finds
        no job and does nothing. Each environment the worker serves is woken so too. Returns the ticks sent."""
        from codeexec.worker.queue import ticks  # the Celery app: configured when first imported

        sent = 0
        for environment, schedule in self.schedules.items():
            if self.client.llen(keys.queue(environment)) or not self.client.exists(keys.active(environment)):
                continue
            if not self.client.set(keys.waker(environment), self.id, nx=True, px=int(HEARTBEAT_S * 1000)):
                continue
            count = min(schedule.waiting_jobs(), self.client.zcard(keys.WORKERS))
            ticks.send_ticks(count, environment)
            sent += count
        return sent

    def _undone(self, job: Job) -> Job | None:
        """The samples of the job that still have no result, as a job; None if there are none."""
        pipe = self.client.pipeline(transaction=False)
        for task_id, index in job.samples:
            pipe.hexists(keys.pending(job.run, task_id), str(index))
        undone = [sample for sample, pending in zip(job.samples, pipe.execute(), strict=True) if pending]
        return Job(run=job.run, samples=undone) if undone else None

    def start(self) -> None:
        threading.Thread(target=self._run, name="codeexec-heartbeat", daemon=True).start()

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        while True:
            try:
                self.beat()
                self.take_over_expired()
                self.wake()
            except Exception as exc:
                # Whatever it is (Redis restarting: a RedisError from the beat, kombu's OperationalError
                # from sending a tick), the next beat tries again: a heart that stopped would make a live
                # worker look dead.
                log.warning("heartbeat: %s: %s", type(exc).__name__, exc)
            if self._stopped.wait(HEARTBEAT_S):
                return


def workers(client: redis.Redis) -> list[Worker]:
    """Every worker seen within the last hour, live ones first."""
    now = float(client.time()[0])
    ids = client.zrange(keys.WORKERS, 0, -1, withscores=True)
    pipe = client.pipeline(transaction=False)
    for worker_id, _ in ids:
        pipe.hgetall(keys.worker(worker_id))
    found = []
    for (worker_id, last), fields in zip(ids, pipe.execute(), strict=True):
        if "host" not in fields:  # not beaten yet
            continue
        found.append(
            Worker(
                id=worker_id,
                host=fields["host"],
                pid=int(fields["pid"]),
                started=float(fields["started"]),
                run=fields.get("run", ""),
                samples=int(fields.get("samples", 0)),
                last=last,
                alive=now - last < LEASE_S,
                environments=json.loads(fields.get("environments") or "[]"),
                languages=json.loads(fields["languages"]) if "languages" in fields else None,
            )
        )
    return sorted(found, key=lambda worker: (not worker.alive, worker.host, worker.pid))


def languages_served(client: redis.Redis) -> set[str] | None:
    """The languages some live worker has the toolchain of; None where no live worker says (none is alive, or
    one is of a codeexec that does not say)."""
    alive = [worker for worker in workers(client) if worker.alive]
    if not alive or any(worker.languages is None for worker in alive):
        return None
    return {name for worker in alive for name in worker.languages or ()}


def in_flight(client: redis.Redis, run: str) -> int:
    """Samples of the run in jobs that live workers hold."""
    lease_ids = client.zrange(keys.LEASES, 0, -1)
    raws = client.mget([keys.lease(lease_id) for lease_id in lease_ids]) if lease_ids else []
    jobs = [Lease.model_validate_json(raw).job for raw in raws if raw]
    return sum(len(job.samples) for job in jobs if job.run == run)
