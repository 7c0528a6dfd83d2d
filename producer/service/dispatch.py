"""The HTTP service's side of Redis (producer/service/endpoints.py): its requests become jobs of one long-lived run,
and their results come back as workers record them.

    a /run_code request   a task of its own (a fresh id) whose problem is a Script, with one sample
    a batch               a task per test set, whose problem is the set's CaseTests, with a sample per
                          code that names it

Its jobs wait in the same schedule as every run's (worker/queue/schedule.py), as the jobs of one run
(Settings.serve_run), so the service and the evaluations share the workers by the fair-share rule, and
more workers on more hosts serve it as they serve any run. The run's meta asks workers to publish each
result as they record it (RunMeta.notify, keys.done()); one subscription per server hands each to whoever
waits for it, and a poll every second finds any a lost message left out.

Every task is listed in keys.requests() with the time it may be forgotten; sweep() forgets those past it
(problem, samples, results and counts), whoever submitted them: a server that died mid-request leaves
nothing behind for long.

Redis may be restarted under a server (the private Valkey's keeper, producer/local/valkey.py, starts it again
from its append-only file, which lacks at most its last second). Once the server sees a new Redis, every
task it waits for is sent again as it stands: the samples with no result, and the whole task if its
submission was in that lost second. The record script keeps each sample's first result only. Whoever
waits for a task's results waits Redis out, and then reads them all again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import redis
import redis.asyncio

from codeexec.producer.inputs.files import InputError
from codeexec.producer.run import Run, result, results
from codeexec.producer.submission import version
from codeexec.protocol import keys
from codeexec.protocol.models import Problem, Sample
from codeexec.protocol.result import StoredResult
from codeexec.protocol.run import RunMeta, RunOptions
from codeexec.protocol.settings import RUN_SETTINGS, Settings
from codeexec.worker.queue.leases import languages_served
from codeexec.worker.queue.store import connect

log = logging.getLogger(__name__)

_CONNECTIONS = 64  # of one server to Redis, besides its thread pool's (submit())
_POLL_S = 1.0  # how often results are looked for besides the published ones (a lost message)
_SWEEP_S = 30.0
#: What Redis gone (killed, restarting, a network down) raises; once so, it is tried again after _AGAIN_S.
_REDIS_GONE = (redis.ConnectionError, redis.TimeoutError, OSError)
_AGAIN_S = 1.0
_SWEEP_BATCH = 500
# How long the live workers' languages are taken as they were said: a worker that comes with a new one is
# sent its requests this much later at most.
_LANGUAGES_KEPT_S = 5.0


class Overloaded(Exception):
    """More of the service's jobs wait for a worker than it takes (Settings.serve_max_queued)."""

    def __init__(self, waiting: int, retry_after_s: int) -> None:
        super().__init__(f"{waiting} jobs are waiting for a worker; try again in {retry_after_s} s")
        self.retry_after_s = retry_after_s


@dataclass
class Dispatch:
    """One server's view of the service's run: submit tasks, wait for their results, forget them."""

    run: Run
    aio: redis.asyncio.Redis
    max_queued: int
    keep_s: float
    _watchers: dict[str, list[asyncio.Queue[int]]] = field(default_factory=dict)
    _queued: list[tuple[list[tuple[str, Problem, list[Sample]]], asyncio.Future[None]]] = field(default_factory=list)
    _flushing: asyncio.Task[None] | None = None
    #: What this server submitted, by task, for as long as someone waits for the task (a Redis restart).
    _submitted: dict[str, tuple[Problem, list[Sample]]] = field(default_factory=dict)
    _server_id: str = ""
    _listening: asyncio.Task[None] | None = None
    _closing: bool = False
    _languages: tuple[float, set[str] | None] = (-math.inf, None)

    @classmethod
    def open(cls, url: str, settings: Settings) -> Dispatch:
        # A bounded pool that makes a request wait for a connection, rather than fail, when all are in use.
        pool = redis.asyncio.BlockingConnectionPool.from_url(
            url, max_connections=_CONNECTIONS, timeout=None, decode_responses=True, health_check_interval=30
        )
        aio = redis.asyncio.Redis(connection_pool=pool)
        client = connect(url)
        meta = service_meta(settings)
        with contextlib.suppress(InputError):  # none yet
            meta.options.priority = Run.fetch(client, meta.run).meta.options.priority  # by `codeexec priority`
        run = Run(client, meta)
        run.save()
        return cls(run, aio, settings.serve_max_queued, settings.serve_keep_s)

    @property
    def client(self) -> redis.Redis:
        return self.run.client

    @property
    def name(self) -> str:
        return self.run.name

    async def languages(self) -> set[str] | None:
        """The languages some live worker has the toolchain of; None where that is not known (no worker is
        alive yet, or one does not say)."""
        said_at, said = self._languages
        if time.monotonic() - said_at > _LANGUAGES_KEPT_S:
            said = await asyncio.to_thread(languages_served, self.client)
            self._languages = (time.monotonic(), said)
        return said

    # -- submitting ----------------------------------------------------------------------------------------

    async def submit(self, tasks: list[tuple[str, Problem, list[Sample]]]) -> None:
        """Store each task's problem and samples and queue them; raises Overloaded (nothing of them stored)
        if too many jobs of the service wait already. Requests that come while a queueing is under way
        are queued together by the next one: one round of Redis commands and of Celery messages for all
        of them, which is what a request costs the server under load."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queued.append((tasks, done))
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush())
        await done

    async def _flush(self) -> None:
        while self._queued:
            batch, self._queued = self._queued, []
            try:  # in a thread: the Celery messages are sent synchronously
                outcomes = await asyncio.to_thread(self._store, [tasks for tasks, _ in batch])
            except Exception as exc:  # Redis is gone: each request says so
                outcomes = [exc] * len(batch)
            for (_, done), outcome in zip(batch, outcomes, strict=True):
                if done.done():
                    continue
                if outcome is None:
                    done.set_result(None)
                else:
                    done.set_exception(outcome)

    def _store(self, requests: list[list[tuple[str, Problem, list[Sample]]]]) -> list[Exception | None]:
        """Store and queue the requests' tasks, but those that come when too many jobs wait: (Overloaded or
        None) for each request."""
        pipe = self.client.pipeline(transaction=False)
        pipe.llen(keys.jobs(self.name))
        pipe.get(keys.meta(self.name))
        waiting, raw_meta = pipe.execute()
        # Run.refresh()'s read, in the same round trip: its priority, which `codeexec priority serve` sets.
        self.run.meta = RunMeta.model_validate_json(raw_meta)
        outcomes: list[Exception | None] = []
        forget_at = time.time() + self.keep_s
        refs: list[tuple[str, int]] = []
        for tasks in requests:
            if waiting >= self.max_queued:
                outcomes.append(Overloaded(waiting, retry_after_s=max(1, min(30, waiting // 200))))
                continue
            outcomes.append(None)
            for task_id, problem, samples in tasks:
                self._write(pipe, task_id, problem, samples, forget_at)
                refs.extend((task_id, index) for index in range(len(samples)))
                waiting += 1
        if refs:
            pipe.execute()
            self.run.enqueue(refs)
        return outcomes

    def _write(
        self, pipe: redis.client.Pipeline, task_id: str, problem: Problem, samples: list[Sample], forget_at: float
    ) -> None:
        """A task's problem and samples, kept until forget_at."""
        self._submitted[task_id] = problem, samples
        pipe.zadd(keys.requests(self.name), {task_id: forget_at})
        self.run.add_task(pipe, task_id, problem, len(samples))
        pending = {str(index): sample.model_dump_json() for index, sample in enumerate(samples)}
        pipe.hset(keys.pending(self.name, task_id), mapping=pending)

    # -- results ---------------------------------------------------------------------------------------

    async def results(self, task_id: str, total: int) -> AsyncIterator[tuple[int, StoredResult]]:
        """Each result of the task as it is recorded, (index, StoredResult), those recorded already first,
        until `total` have come (decoded as producer/run.py decodes a run's results)."""
        seen: set[int] = set()
        queue: asyncio.Queue[int] = asyncio.Queue()
        self._watchers.setdefault(task_id, []).append(queue)
        read_all = True  # at first, and once Redis is back: whatever was recorded meanwhile woke no one
        try:
            while len(seen) < total:
                try:
                    if read_all:
                        found = results(await self.aio.hgetall(keys.results(self.name, task_id)))
                        read_all = False
                    elif (index := await queue.get()) in seen:
                        continue
                    else:
                        raw = await self.aio.hget(keys.results(self.name, task_id), str(index))
                        found = {} if raw is None else {index: result(raw)}
                except _REDIS_GONE as exc:
                    # Redis restarting (the private Valkey's keeper): wait it out, as listen() does; the
                    # results stay in Redis, and the samples lost with it are sent again (_send_again).
                    log.warning("the service lost Redis while waiting for %s (%s); trying again", task_id, exc)
                    await asyncio.sleep(_AGAIN_S)
                    read_all = True
                    continue
                for index, stored in sorted(found.items()):
                    if index not in seen:
                        seen.add(index)
                        yield index, stored
        finally:
            self._watchers[task_id].remove(queue)
            if not self._watchers[task_id]:
                del self._watchers[task_id]
                self._submitted.pop(task_id, None)

    async def result(self, task_id: str) -> StoredResult:
        """The result of a one-sample task (a /run_code request), once it is recorded."""
        async for _, stored in self.results(task_id, 1):
            return stored
        raise AssertionError("unreachable: results() yields until one has come")

    def start(self) -> None:
        """Listen (listen()) until close()."""
        self._listening = asyncio.create_task(self.listen())

    async def listen(self) -> None:
        """Hand each published result to whoever waits for it; poll for any whose message was lost; sweep.
        Runs until close()."""
        last_poll = last_sweep = 0.0
        while not self._closing:
            try:
                async with self.aio.pubsub() as pubsub:
                    await pubsub.subscribe(keys.done(self.name))
                    try:  # a new one each time Redis starts
                        server_id = str((await self.aio.info("server")).get("run_id", ""))
                    except redis.ResponseError:  # INFO refused (an ACL): restarts go unseen
                        server_id = ""
                    if self._server_id and server_id != self._server_id:
                        await asyncio.to_thread(self._send_again)
                    self._server_id = server_id
                    while not self._closing:
                        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=_POLL_S)
                        if message is not None:
                            task_id, _, index = message["data"].partition("\t")
                            self._wake(task_id, int(index))
                        now = time.monotonic()
                        if now - last_poll >= _POLL_S:
                            last_poll = now
                            await self._poll()
                        if now - last_sweep >= _SWEEP_S:
                            last_sweep = now
                            await self.sweep()
            except asyncio.CancelledError:
                raise
            except _REDIS_GONE as exc:
                log.warning("the service lost Redis (%s); trying again", exc)
                await asyncio.sleep(_AGAIN_S)

    def _send_again(self) -> None:
        """Send again what the server waits for and a restarted Redis lacks (see the module's text)."""
        tasks = list(self._watchers)
        pipe = self.client.pipeline(transaction=False)
        for task_id in tasks:
            pipe.hexists(keys.problems(self.name), task_id)
            pipe.hkeys(keys.pending(self.name, task_id))
        found = pipe.execute()
        refs: list[tuple[str, int]] = []
        pipe = self.client.pipeline(transaction=False)
        for task_id, kept, pending in zip(tasks, found[::2], found[1::2], strict=True):
            if kept:
                refs.extend((task_id, int(index)) for index in pending)
            elif task_id in self._submitted:
                problem, samples = self._submitted[task_id]
                self._write(pipe, task_id, problem, samples, time.time() + self.keep_s)
                refs.extend((task_id, index) for index in range(len(samples)))
        pipe.execute()
        if refs:
            self.run.refresh()
            self.run.enqueue(refs)
        log.warning("Redis was restarted: sent again %d sample(s) with no result", len(refs))

    def _wake(self, task_id: str, index: int) -> None:
        for queue in self._watchers.get(task_id, []):
            queue.put_nowait(index)

    async def _poll(self) -> None:
        tasks = list(self._watchers)
        if not tasks:
            return
        pipe = self.aio.pipeline(transaction=False)
        for task_id in tasks:
            pipe.hkeys(keys.results(self.name, task_id))
        for task_id, indices in zip(tasks, await pipe.execute(), strict=True):
            for index in indices:
                self._wake(task_id, int(index))

    # -- forgetting ------------------------------------------------------------------------------------

    async def forget(self, task_ids: list[str]) -> None:
        """Remove the tasks and all they left: their problem, samples, results, counts."""
        if not task_ids:
            return
        pipe = self.aio.pipeline(transaction=False)
        for task_id in task_ids:
            self._submitted.pop(task_id, None)
        self.run.forget(task_ids, pipe)
        await pipe.execute()

    async def sweep(self) -> int:
        """Forget the tasks whose time is past (a client that never came back, a server gone)."""
        due = await self.aio.zrangebyscore(keys.requests(self.name), "-inf", time.time(), start=0, num=_SWEEP_BATCH)
        due = [task_id for task_id in due if task_id not in self._watchers]
        await self.forget(due)
        return len(due)

    async def close(self) -> None:
        """Stop listening, and let go of Redis. listen() ends by _closing, not only by its cancel: a cancel
        that comes as get_message's read times out can be lost inside redis-py (the read returns None, and
        the loop goes on: seen 11 times in 300 cancels with a 10 ms read), which left a server's shutdown,
        and a test, waiting for listen() for good."""
        self._closing = True
        if self._listening is not None:
            self._listening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listening
        with contextlib.suppress(Exception):
            await self.aio.aclose()
        self.client.close()


def service_meta(settings: Settings) -> RunMeta:
    """The service's run: its jobs' problems carry everything a worker needs (a script, stdin or call-based
    tests), and its results are published as they are recorded."""
    options = RunOptions(
        k=[1], timeout_s=settings.timeout_s, hash_seed=settings.hash_seed, isolation=settings.isolation
    )
    return RunMeta(
        run=settings.serve_run,
        created=time.time(),
        status="queued",
        options=options,
        problems="service",
        samples_path="",
        samples_sha256="",
        n_samples=0,
        n_tasks=0,
        kinds=["call", "script", "stdin"],
        relaxed=True,
        notify=True,
        runner=settings.model_dump(mode="json", include=RUN_SETTINGS),
        version=version(),
    )
