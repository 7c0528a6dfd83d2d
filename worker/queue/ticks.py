"""Ticks: the Celery messages that each wake a worker to take one job. The jobs themselves wait in
the schedule (schedule.py), so a tick carries nothing, and a tick too many finds no job and does nothing.

The producer sends a run's first ticks; leases.py sends them again for the jobs of a gone worker.
"""

from __future__ import annotations

import redis

from codeexec.protocol import keys
from codeexec.protocol.run import Job
from codeexec.worker.queue.celery_app import app
from codeexec.worker.queue.schedule import Schedule

#: The Celery task a tick runs (tasks.py, evaluate).
TASK = "codeexec.evaluate"


def send(
    client: redis.Redis, run: str, jobs: list[Job], priority: int, front: bool = False, environment: str | None = None
) -> None:
    """Queue the jobs for the schedule of the run's environment, then a tick for each (never a tick
    before its job)."""
    Schedule(client, environment).add(run, jobs, priority, front)
    send_ticks(len(jobs), environment)


def send_ticks(count: int, environment: str | None = None) -> None:
    """`count` Celery messages, each of which has a worker that serves `environment` take one of its jobs."""
    with app.producer_or_acquire() as producer:
        for _ in range(count):
            app.send_task(TASK, kwargs={"environment": environment}, queue=keys.queue(environment), producer=producer)
