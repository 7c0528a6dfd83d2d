"""A run in Redis, and everything the producer reads and writes of it, as rq's Job owns its key: the command
line, the Python API and the service each hold a Run. What the workers write of it (each result, exactly once,
and the counters it moves) is worker/queue/store.py's; every key is named in protocol/keys.py.

    Run.submit(client, submission)   store the run, each problem once and each sample, and enqueue its jobs
    Run.fetch(client, name)          the run as stored (InputError if there is none)
    run.save()                       its meta again (its status, its priority)
    run.progress() / tasks() / counts() / task_results() / result_fields()
                                     what its workers recorded
    run.pending() / enqueue()        its samples with no result, and jobs of them
    run.resume() / cancel() / set_priority()
    run.wait()                       until every sample has a result, sending again what a lost job left
    run.report() / results() / html()
                                     what it came to (producer/results/)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import redis

from codeexec.producer.inputs.files import InputError, read_jsonl, write_whole
from codeexec.producer.inputs.problems import load_problems
from codeexec.producer.inputs.samples import SampleSet, read_samples
from codeexec.producer.local.backend import restart_notice, unreachable
from codeexec.producer.results.report import Counts, RunReport, build_report
from codeexec.producer.submission import Submission, check_run_name
from codeexec.producer.submission import options as run_options
from codeexec.protocol import keys
from codeexec.protocol.models import Problem
from codeexec.protocol.result import StoredResult
from codeexec.protocol.run import Job, RunMeta
from codeexec.protocol.settings import get_settings
from codeexec.worker.queue.leases import in_flight, workers
from codeexec.worker.queue.schedule import Schedule

_PIPELINE_CHUNK = 5000  # commands per round trip while storing

#: Progress is polled every _POLL_S, from _FIRST_POLL_S doubling: a run of a few samples on warm
#: workers ends within milliseconds, and should not wait half a second to be told.
_FIRST_POLL_S, _POLL_S = 0.005, 0.5
_STALL_S = 30.0  # no progress and no job anywhere for this long: jobs were lost, send them again
_STALL_AFTER_RESTART_S = 2.0  # the same, once Redis was seen restarted (its last second may be lost)
_ALONE_S = 5.0  # no progress and no live worker for this long: say so
NO_WORKER = (
    "no live worker is taking this run's samples: start one where it reaches this Redis (codeexec worker), "
    "or on the private Valkey, codeexec status RUN --wait"
)


class Run:
    """A run stored in Redis: its meta (RunMeta, as submitted) and its keys, through one client."""

    def __init__(self, client: redis.Redis, meta: RunMeta) -> None:
        self.client, self.meta = client, meta

    def __repr__(self) -> str:
        return f"Run({self.name!r})"

    @property
    def name(self) -> str:
        return self.meta.run

    # -- storing ------------------------------------------------------------------------------------------

    @classmethod
    def fetch(cls, client: redis.Redis, name: str) -> Run:
        """The run called `name`; InputError if there is no such run."""
        raw = client.get(keys.meta(name))
        if raw is None:
            raise InputError(f"no run named {name!r} (codeexec runs lists them)")
        return cls(client, RunMeta.model_validate_json(raw))

    def refresh(self) -> RunMeta:
        """Its meta as Redis holds it now (a cancel, a priority set elsewhere)."""
        self.meta = Run.fetch(self.client, self.name).meta
        return self.meta

    def save(self) -> None:
        self.client.set(keys.meta(self.name), self.meta.model_dump_json())

    @classmethod
    def submit(cls, client: redis.Redis, submission: Submission) -> Run:
        """Store the run, its problems and samples, and enqueue its jobs. The input is valid already
        (producer/submission.py)."""
        problems, samples, meta = submission
        check_run_name(meta.run)
        run = cls(client, meta)
        # Claiming the name is the first write: a taken name changes nothing in Redis.
        if not client.set(keys.meta(meta.run), meta.model_dump_json(), nx=True):
            raise InputError(f"a run named {meta.run!r} exists already (codeexec report/resume {meta.run})")
        client.zadd(keys.RUNS, {meta.run: meta.created})
        run.store(problems, samples)
        meta.status = "stored"
        run.save()
        run.enqueue([(line.task_id, line.index) for line in samples.lines])
        if run.refresh().status == "cancelled":  # while its jobs were being sent
            Schedule(client, meta.options.environment).drop(meta.run)
            return run
        run.meta = meta
        meta.status = "queued"
        run.save()
        return run

    def store(self, problems: Mapping[str, Problem], samples: SampleSet) -> None:
        """Store each problem once and each sample without a result."""
        done: dict[str, set[str]] = {}
        pipe = self.client.pipeline(transaction=False)
        for task_id, count in samples.per_task.items():
            self.add_task(pipe, task_id, problems[task_id], count)
            pipe.hkeys(keys.results(self.name, task_id))
        replies = pipe.execute()
        for task_id, finished in zip(samples.per_task, replies[2::3], strict=True):
            done[task_id] = set(finished)
        for chunk in _chunks(samples.lines, _PIPELINE_CHUNK):
            for line in chunk:
                if str(line.index) not in done[line.task_id]:
                    pipe.hset(keys.pending(self.name, line.task_id), str(line.index), line.sample.model_dump_json())
            pipe.execute()

    def add_task(self, pipe: redis.client.Pipeline, task_id: str, problem: Problem, samples: int) -> None:
        """A task's problem and its number of samples, on `pipe` (two commands)."""
        pipe.hset(keys.problems(self.name), task_id, problem.model_dump_json())
        pipe.hset(keys.expected(self.name), task_id, samples)

    def forget(self, task_ids: Sequence[str], pipe: Any) -> None:
        """Remove the tasks and all they left: their problem, samples, results, counts (queued on `pipe`, a
        pipeline of a client of either kind: the service forgets from its event loop)."""
        for task_id in task_ids:
            for key in (keys.results, keys.pending, keys.attempts):
                pipe.delete(key(self.name, task_id))
            for hash_key in (keys.problems, keys.expected, keys.n, keys.c, keys.c_base, keys.truth):
                pipe.hdel(hash_key(self.name), task_id)
            pipe.zrem(keys.requests(self.name), task_id)

    # -- jobs ---------------------------------------------------------------------------------------------

    def enqueue(self, refs: Sequence[tuple[str, int]], batch_size: int | None = None) -> int:
        """Queue the samples as jobs of up to batch_size each (default: the setting's), at the run's
        priority; returns the number of jobs.

        Small runs get small jobs, so that every worker gets a share (up to 64 workers); from about a
        thousand samples on, the full batch, so that enqueueing (one Celery message costs ~0.4 ms) and
        Celery's own work per message are not the bottleneck. Runs share the workers by samples, not jobs
        (worker/queue/schedule.py), so small jobs give a run no more than its share.
        """
        from codeexec.worker.queue.ticks import send  # imports the Celery app, configured from the settings

        size = job_size(len(refs), batch_size or get_settings().batch_size)
        jobs = [Job(run=self.name, samples=list(chunk)) for chunk in _chunks(refs, size)]
        send(self.client, self.name, jobs, self.meta.options.priority, environment=self.meta.options.environment)
        return len(jobs)

    def pending(self) -> list[tuple[str, int]]:
        """Every sample of the run that has no result yet, task by task."""
        tasks = sorted(self.client.hkeys(keys.expected(self.name)))
        pipe = self.client.pipeline(transaction=False)
        for task_id in tasks:
            pipe.hkeys(keys.pending(self.name, task_id))
        refs = []
        for task_id, indices in zip(tasks, pipe.execute(), strict=True):
            refs.extend((task_id, int(index)) for index in sorted(indices, key=int))
        return refs

    def resume(self, samples_path: Path | None = None) -> int:
        """Enqueue again exactly the samples of the run that have no result; returns how many.

        If the producer died while storing the samples, the rest are stored first, from the run's samples
        file (which must be unchanged).
        """
        meta = self.refresh()
        if meta.status == "storing":
            options = meta.options
            problems = load_problems(meta.problems, options.split, options.challenge)
            samples = read_samples(samples_path or Path(meta.samples_path), problems, True, options.treat_as)
            if samples.sha256 != meta.samples_sha256:
                raise InputError(f"{samples.path}: not the samples file run {self.name!r} was submitted with")
            self.store(problems, samples)
            meta.status = "stored"
            self.save()
        meta.status = "queued"  # before its jobs: a cancelled run's jobs are not taken back from a dead worker
        self.save()
        # Jobs still waiting (a producer killed while sending has more jobs than ticks) are replaced by a
        # job for every pending sample, each with its tick.
        Schedule(self.client, meta.options.environment).drop(self.name)
        refs = self.pending()
        self.enqueue(refs)
        return len(refs)

    def cancel(self) -> int:
        """Stop the run: its waiting jobs are dropped, the jobs workers hold finish, results are kept
        (`resume` carries on). Returns the number of samples dropped."""
        self.refresh().status = "cancelled"  # first: from now on a dead worker's job of the run is not sent again
        self.save()
        return Schedule(self.client, self.meta.options.environment).drop(self.name)

    def set_priority(self, priority: int | str) -> None:
        """Serve the run at this priority ("high", "normal", "low", or a number) from its next job on."""
        options = self.refresh().options
        self.meta.options = run_options(options.model_dump() | {"priority": priority})
        self.save()
        Schedule(self.client, options.environment).reprioritize(self.name, self.meta.options.priority)

    # -- what the workers recorded ------------------------------------------------------------------------

    def progress(self) -> tuple[int, int]:
        """(samples with a result, samples submitted)."""
        return int(self.client.hget(keys.stats(self.name), keys.DONE) or 0), self.meta.n_samples

    def tasks(self) -> dict[str, int]:
        """Each of the run's tasks, and how many samples it has."""
        return {task_id: int(count) for task_id, count in self.client.hgetall(keys.expected(self.name)).items()}

    def counts(self) -> Counts:
        """What the record script keeps moving as results land (producer/results/report.py, Counts)."""
        pipe = self.client.pipeline(transaction=False)
        for key in (keys.expected, keys.n, keys.c, keys.c_base, keys.stats):
            pipe.hgetall(key(self.name))
        pipe.smembers(keys.notes(self.name))
        expected, n, c, c_base, stats, notes = pipe.execute()
        whole = [{task_id: int(value) for task_id, value in table.items()} for table in (expected, n, c, c_base)]
        return Counts(*whole, stats=stats, notes=set(notes))

    def task_results(self, task_ids: Iterable[str]) -> dict[str, dict[int, StoredResult]]:
        """Each task's results, by sample index: one read per task, in one round trip."""
        task_ids = list(task_ids)
        pipe = self.client.pipeline(transaction=False)
        for task_id in task_ids:
            pipe.hgetall(keys.results(self.name, task_id))
        return {task_id: results(found) for task_id, found in zip(task_ids, pipe.execute(), strict=True)}

    def result_fields(self, task_ids: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
        """Each task's results as plain JSON objects (a StoredResult's fields), unordered: for a pass over every
        result of a run of a million, where validating each would cost more than the pass."""
        task_ids = list(task_ids)
        pipe = self.client.pipeline(transaction=False)
        for task_id in task_ids:
            pipe.hvals(keys.results(self.name, task_id))
        found = pipe.execute()
        return {task_id: list(map(json.loads, values)) for task_id, values in zip(task_ids, found, strict=True)}

    # -- waiting ------------------------------------------------------------------------------------------

    def wait(
        self,
        progress: Callable[[int, int], object] | None = None,
        say: Callable[[str], object] = lambda message: None,
        serving: str | None = None,
    ) -> RunReport:
        """Block until every sample has a result (or the run is cancelled), telling `progress` (done, total) as
        it moves and `say` what a user should know; the report.

        If the run stops moving while no job is queued or held by a worker (a Redis that lost its last
        second of writes can lose jobs), the samples still pending are enqueued again; the record script
        makes any duplicate harmless. A Redis that was restarted meanwhile (the private Valkey, started again
        by whoever keeps it: producer/local/valkey.py) is said, and looked at for such samples at once:
        restarted since `serving` (server_id() before the run was submitted), else since the wait began.
        If Redis cannot be reached for longer than the client retries, the error says how to carry on.
        """
        try:
            self._wait(progress, say, server_id(self.client) if serving is None else serving)
        except redis.ConnectionError as exc:
            raise redis.ConnectionError(unreachable(self.client, self.name, exc)) from None
        return self.report()

    def _wait(self, progress: Callable[[int, int], object] | None, say: Callable[[str], object], server: str) -> None:
        done, total = self.progress()
        last_change, last_done = time.monotonic(), done
        warned_alone = False
        stall_s = _STALL_S
        pause = _FIRST_POLL_S
        if done >= total:  # done before it was first looked at: said once
            if progress is not None:
                progress(done, total)
            self._serving(server, say)
        while done < total:
            time.sleep(pause)
            pause = min(2 * pause, _POLL_S)
            done, total = self.progress()
            if (now_serving := self._serving(server, say)) != server:
                server = now_serving
                stall_s = _STALL_AFTER_RESTART_S  # what its last second lost is sent again soon
            if progress is not None and done != last_done:
                progress(done, total)
            if done != last_done:
                last_change, last_done = time.monotonic(), done
            elif time.monotonic() - last_change > _ALONE_S and not warned_alone and (alone := self.alone()):
                say(alone)
                warned_alone = True
            elif time.monotonic() - last_change > stall_s:
                self._repair(say)
                last_change = time.monotonic()
            if done < total and self.refresh().status == "cancelled":
                say(f"run {self.name} was cancelled with {done} of {total} samples done (codeexec resume carries on)")
                return

    def _serving(self, server: str, say: Callable[[str], object]) -> str:
        """The server's id now; said where it is not `server`'s (it was started again since)."""
        now = server_id(self.client)
        if now != server:
            say(f"{restart_notice(self.client)}; the run goes on, nothing is lost")
        return now

    def alone(self) -> str | None:
        """What to say if no live worker takes the run's samples (none that serves its environment); None if one
        does."""
        environment = self.meta.options.environment
        serving = [
            w for w in workers(self.client) if w.alive and (environment is None or environment in w.environments)
        ]
        return None if serving else no_worker(environment)

    def in_flight(self) -> int:
        """Its samples in the jobs workers hold."""
        return in_flight(self.client, self.name)

    def _repair(self, say: Callable[[str], object]) -> None:
        """The run has not moved for _STALL_S. If nothing of it waits, nothing wakes a worker (no Celery
        message queued) and no worker holds a job of it, its pending samples have no job left (a Redis that
        lost its last second of writes): send them again. The record script makes any duplicate harmless.
        (Jobs that wait with no Celery message are the workers' to wake: worker/queue/leases.py's Heart.wake.)"""
        meta = self.refresh()
        environment = meta.options.environment
        waiting = Schedule(self.client, environment).waiting(self.name)
        if meta.status != "queued" or self.client.llen(keys.queue(environment)) or self.in_flight() or waiting:
            return  # its producer is still storing or sending, or something is on its way
        lost = self.pending()
        if lost:
            say(f"no job left for {len(lost)} pending sample(s): enqueued them again")
            self.enqueue(lost)

    # -- what it came to ----------------------------------------------------------------------------------

    def report(self, k: Sequence[int] | None = None, intervals: bool = True) -> RunReport:
        """pass@k (with intervals), per task n and c, outcomes: what `codeexec report --json` prints."""
        return build_report(self.meta, self.counts(), k, intervals=intervals)

    def results(self, samples_path: Path | None = None) -> Iterator[Any]:
        """Each sample of the run's samples file, in its order, with its result (None: not yet): a SampleResult
        (producer/results/persample.py) each."""
        from codeexec.producer.results.persample import with_results

        path = Path(samples_path or self.meta.samples_path)
        return with_results(self, read_jsonl(path))

    def html(self, path: str | Path, k: Sequence[int] | None = None) -> Path:
        """Write the run's HTML page (producer/results/html_report.py) to `path`."""
        from codeexec.producer.results.breakdown import breakdown
        from codeexec.producer.results.html_report import render_run

        report = self.report(k)
        return write_whole(Path(path), render_run(report, breakdown(self, report.tasks)))


def result(raw: str) -> StoredResult:
    """One result as the record script stored it."""
    return StoredResult.model_validate_json(raw)


def results(stored: Mapping[str, str]) -> dict[int, StoredResult]:
    """A task's results as HGETALL gives them (sample index -> JSON), decoded."""
    return {int(index): result(raw) for index, raw in stored.items()}


def server_id(client: redis.Redis) -> str:
    """The server's run id: a new one each time it starts ("" where INFO is refused, as an ACL may)."""
    try:
        return str(client.info("server").get("run_id", ""))
    except redis.ResponseError:
        return ""


def no_worker(environment: str | None) -> str:
    """What to say of a run no live worker takes the samples of."""
    if environment is None:
        return NO_WORKER
    return (
        f"no live worker has the environment {environment!r} this run's candidates need: build it where a worker "
        f"runs (codeexec env build {environment}) and start the worker there, or on the private Valkey, "
        "codeexec status RUN --wait"
    )


def job_size(samples: int, batch_size: int) -> int:
    """Samples per job when `samples` are enqueued at once (Run.enqueue() says why)."""
    return max(1, min(batch_size, samples // 64))


def _chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
