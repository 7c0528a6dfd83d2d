"""Where a command's Redis and workers come from: a shared Redis, or the private Valkey and local workers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from producer.inputs import InputError
from producer.lifetime import dies_with_parent
from producer.server import EmbeddedServer
from worker import keys
from worker.settings import Settings, get_settings
from worker.store import connect

WORKER_FLAGS = ["--loglevel=WARNING", "-Q", keys.QUEUE, "--without-mingle", "--without-gossip"]


class LocalWorkers:
    """A `celery worker` on this machine with `count` pool processes, logging to the data directory."""

    def __init__(self, count: int, data_dir: Path, redis_url: str) -> None:
        self.count = count
        self.env = dict(os.environ, CODEEXEC_REDIS_URL=redis_url)
        self.log = data_dir / "logs" / f"worker-{os.getpid()}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> LocalWorkers:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "producer.cli",
                    "worker",
                    f"--concurrency={self.count}",
                    f"--hostname=local-{os.getpid()}@%h",
                ],
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # Ctrl-C reaches the producer; it stops the workers in order
                # If the producer dies without stopping them, they die as if their host had: their
                # unacknowledged jobs go to the next worker, and Celery's pool processes and the
                # candidates follow their parents down (parent-death signal, lifeline).
                preexec_fn=dies_with_parent(signal.SIGKILL),
            )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Warm shutdown (finish the running job), then cold (unacknowledged jobs go back to the queue)."""
        if self.process is None:
            return
        for sig, grace in ((signal.SIGTERM, 10), (signal.SIGQUIT, 10), (signal.SIGKILL, 30)):
            if self.process.poll() is not None:
                break
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                continue
        self.process.wait()
        self.process = None


@contextmanager
def backend(settings: Settings, workers: int | None = None, run_jobs: bool = False) -> Iterator[redis.Redis]:
    """A Redis client for the command; with run_jobs, also local workers while the command lasts.

    Without a Redis URL the private Valkey is started (or joined) and, with run_jobs, one local
    worker process per core; with a URL, local workers start only when asked for (--workers N).
    """
    server = None if settings.redis_url else EmbeddedServer(settings.data_dir)
    local = None
    try:
        url = server.start() if server else settings.effective_redis_url
        _check_reachable(url)
        if workers is None:
            workers = settings.workers
        if workers is None:
            workers = (os.cpu_count() or 1) if server else 0
        if run_jobs and workers:
            local = LocalWorkers(workers, settings.data_dir, url).start()
        yield connect(url)
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
