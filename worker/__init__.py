"""codeexec's worker side: the Celery app and the parts a job goes through.

queue/      the Celery app (app.py), and how a worker takes a job from Redis, runs its samples and
            stores each result exactly once
judging/    what each sample runs as, and how its kind of test is judged
process/    the candidate's process, host side: start it, watch it, time it, kill its tree
candidate/  what runs inside the candidate's process (loaded there by path)

``celery -A codeexec.worker worker`` finds the app here, as ``app``. The worker side never imports
codeexec.producer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from celery import Celery


def __getattr__(name: str) -> Celery:
    # Loaded when asked for: the app reads the settings, and the candidate side's modules import
    # this package without needing Celery.
    if name != "app":
        raise AttributeError(f"module 'codeexec.worker' has no attribute {name!r}")
    from codeexec.worker.queue.app import app

    return app
