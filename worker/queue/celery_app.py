"""The Celery app: ``celery -A codeexec.worker worker`` finds it, as codeexec.worker.app.

Each setting below is chosen for one property of a sweep: every sample is counted exactly once
even when workers, hosts or Redis die along the way. References are to Celery's configuration docs.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import sys
from pathlib import Path
from types import ModuleType

from codeexec.protocol import keys
from codeexec.protocol.settings import get_settings


def _installed(name: str) -> ModuleType:
    """The installed library `name`, even where a module of that name of the user's own comes first
    on sys.path: Python puts a script's directory (or, for -c and -m, the working directory) there,
    and a celery.py beside the script that uses codeexec's API must not stand in for Celery."""
    where = Path(importlib.metadata.distribution(name).locate_file("")).resolve()
    module = sys.modules.get(name)
    if module is None:
        sys.path.insert(0, str(where))
        try:
            module = importlib.import_module(name)
        finally:
            sys.path.remove(str(where))
    if not Path(module.__file__ or "").resolve().is_relative_to(where):
        raise ImportError(f"{name} is {module.__file__} here, not the library codeexec needs: it was imported first")
    return module


Celery = _installed("celery").Celery


def broker_url(redis_url: str) -> str:
    """kombu spells a unix socket redis+socket:///path where redis-py spells it unix:///path."""
    if redis_url.startswith("unix://"):
        return "redis+socket://" + redis_url.removeprefix("unix://")
    return redis_url


settings = get_settings()
app = Celery("codeexec", include=["codeexec.worker.queue.tasks"])
app.conf.update(
    broker_url=broker_url(settings.effective_redis_url),
    # Jobs go to a queue of their own, so codeexec can share a Redis with other Celery apps.
    task_default_queue=keys.QUEUE,
    # Results go to codeexec's own keys, written once per sample by the task (worker/queue/store.py); a
    # Celery result backend would be a second copy nobody reads.
    task_ignore_result=True,
    # task_acks_late: acknowledge a job only once it has run, so that a job whose worker dies is
    # delivered again instead of lost. The record script makes the second delivery harmless.
    task_acks_late=True,
    # task_reject_on_worker_lost: when the pool process running a job is killed (SIGKILL, the OOM
    # killer), requeue the job; by default Celery acknowledges it and the sample would be lost.
    task_reject_on_worker_lost=True,
    # worker_prefetch_multiplier = 1: a process reserves only the job it is running. Jobs take seconds,
    # so a deeper buffer gains nothing and strands jobs in a busy (or dying) worker.
    worker_prefetch_multiplier=1,
    broker_transport_options={
        # visibility_timeout: a job not acknowledged after this long is handed to another worker (it
        # is how the jobs of a worker host that died whole come back). It must exceed the longest job,
        # or a slow job would run twice at once: see Settings.effective_visibility_timeout_s.
        "visibility_timeout": settings.effective_visibility_timeout_s,
        # Look for such jobs every 5 s rather than kombu's default of every 10 x 10 s.
        "unacked_restore_interval": 5,
        "unacked_restore_throttle": 1,
    },
    # Ride out a restart of Redis: a worker keeps reconnecting instead of exiting, and its consumer
    # cleans up the lost connection without ending it (consumer.py says how Celery's own would).
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,
    worker_consumer="codeexec.worker.queue.consumer:Consumer",
    # JSON only: a worker never unpickles what arrives from a shared Redis.
    task_serializer="json",
    accept_content=["json"],
    # Workers log to stderr at WARNING; a sweep of a million samples must not log a line per job.
    worker_hijack_root_logger=False,
)
