"""Where a command's Redis and workers come from: a shared Redis, or the private Valkey and local workers."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from codeexec.producer.inputs.files import InputError
from codeexec.producer.local import resident
from codeexec.producer.local.valkey import EmbeddedServer, gone_for_good, runs_lost
from codeexec.producer.local.workers import LocalWorkers
from codeexec.protocol.settings import Settings, embedded_socket, get_settings
from codeexec.worker.queue.store import connect


@contextmanager
def backend(settings: Settings, workers: int | None = None, run_jobs: bool = False) -> Iterator[redis.Redis]:
    """A Redis client for the command; with run_jobs, also local workers while the command lasts.

    Without a Redis URL the private Valkey is started (or joined) and, with run_jobs, one local
    worker process per core: the warm ones of producer/local/resident.py while CODEEXEC_KEEP_WARM_S is
    above 0, else the command's own. With a URL, local workers start only when asked for (--workers N).
    """
    if workers is None:
        workers = settings.workers
    if settings.redis_url:
        with _started(settings, None, workers if run_jobs and workers else 0) as url:
            yield connect(url)
        return
    if workers is None:
        workers = os.cpu_count() or 1
    data_dir = settings.data_dir.expanduser().resolve()
    with resident.using(data_dir) as users:
        if run_jobs and workers and settings.keep_warm_s > 0:
            with resident.attach(users, data_dir, workers, settings.keep_warm_s) as url:
                if url:
                    _check_reachable(url)
                    yield connect(url, partial(gone_for_good, data_dir))
                    return
        with _started(settings, EmbeddedServer(data_dir), workers if run_jobs else 0) as url:
            yield connect(url, partial(gone_for_good, data_dir))


@contextmanager
def _started(settings: Settings, server: EmbeddedServer | None, workers: int) -> Iterator[str]:
    """The server, if given (started, or joined if it serves already), and `workers` local workers,
    for as long as the command lasts; yields the URL."""
    local = None
    try:
        url = server.start() if server else settings.effective_redis_url
        if server and server.process:
            server.keep_up()  # this command started it: it starts it again if it exits
        _check_reachable(url)
        if workers:
            local = LocalWorkers(workers, settings.data_dir, url).start()
        yield url
    finally:
        if local:
            local.stop()
        if server:
            server.stop()


@contextmanager
def private_backend(data_dir: Path, workers: int) -> Iterator[redis.Redis]:
    """backend() on a private Valkey in data_dir, for the benchmarks: the settings (and so every
    codeexec process started meanwhile, and the Celery app) point there while it lasts."""
    os.environ.pop("CODEEXEC_REDIS_URL", None)
    os.environ["CODEEXEC_DATA_DIR"] = str(data_dir)
    os.environ["CODEEXEC_KEEP_WARM_S"] = "0"  # workers that start and stop with the benchmark
    get_settings.cache_clear()
    with backend(get_settings(), workers, run_jobs=True) as client:
        yield client


def _check_reachable(url: str) -> None:
    """Fail fast with a clear message (the command clients retry for a minute, for restarts)."""
    client = redis.Redis.from_url(url, socket_connect_timeout=2, socket_timeout=5, retry=Retry(NoBackoff(), 0))
    deadline = time.monotonic() + 5
    while True:
        try:
            client.ping()
            return
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            if time.monotonic() > deadline:
                raise InputError(f"cannot reach Redis at {url}: {exc}") from None
            time.sleep(0.2)


def where(client: redis.Redis) -> str:
    """The server a client talks to, as a person would name it."""
    kwargs = client.connection_pool.connection_kwargs
    if "path" in kwargs:
        private = Path(kwargs["path"]) == embedded_socket(get_settings().data_dir)
        return "the private Valkey" if private else f"Redis at {kwargs['path']}"
    return f"Redis at {kwargs.get('host')}:{kwargs.get('port')}"


def restart_notice(client: redis.Redis) -> str:
    """What to say of a server seen restarted."""
    if where(client) == "the private Valkey":
        return "the private Valkey stopped, and was started again from its append-only file"
    return f"{where(client)} was restarted"


def unreachable(client: redis.Redis, run: str, exc: redis.ConnectionError) -> str:
    """What to say when Redis stays out of reach while a command waits for `run`: why, and how to carry on."""
    if where(client) == "the private Valkey" and runs_lost(get_settings().data_dir):
        return f"the private Valkey: {exc}: run {run} cannot be carried on"
    carry_on = f"`codeexec status {run} --wait` carries on"
    return f"{where(client)}: {exc}\nnothing recorded is lost: once it is back, {carry_on}"
