"""codeexec's worker side: the Celery app and the parts a job goes through, each depending only on those
below it.

queue/      the Celery app (celery_app.py), and how a worker takes a job from Redis, runs its samples and
            stores each result exactly once
judging/    what each sample runs as, and how its kind of test is judged (a module per kind)
languages/  each language a program may be in (a module per language)
compilers/  compiling once: what a compile made, kept; what is built once; compilers kept running
process/    the candidate's process, host side: start it, watch it, time it, kill its tree
candidate/  what runs inside the candidate's process (loaded there by path)
environments.py  a problem set's libraries: where they are built, and which a worker serves

``celery -A codeexec.worker worker`` finds the app here, as ``app``. The worker side never imports
codeexec.producer; the producer imports of it only ENTRY_POINTS, below (tests/test_layout.py holds both).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from celery import Celery

#: The worker's modules the producer may import, and what it takes of each: the worker's documented entry
#: points. Everything else of the worker is its own business.
ENTRY_POINTS = {
    "codeexec.worker.queue.celery_app": "the Celery app (`codeexec worker`, Flower), configured from the settings",
    "codeexec.worker.queue.ticks": "send(): a run's jobs queued, each with the tick that wakes a worker for it",
    "codeexec.worker.queue.schedule": "Schedule: a run's waiting jobs, dropped, counted or served at a priority",
    "codeexec.worker.queue.leases": "the workers seen, and the samples they hold",
    "codeexec.worker.queue.store": "connect(): a Redis client that rides out a restart of the server",
    "codeexec.worker.judging.kinds": "the kinds of test: what each says of itself (KINDS, kind_of())",
    "codeexec.worker.judging.kinds.evalplus": "inputs_of(): an EvalPlus task's inputs, for its results file",
    "codeexec.worker.judging.kinds.program": "self_test(): a language's self-test, for `codeexec doctor --check`",
    "codeexec.worker.judging.sample_program": "the program a sample runs as (program_for(), extract_code())",
    "codeexec.worker.languages": "the languages: their names, packages and toolchains (LANGUAGES, name_of())",
    "codeexec.worker.environments": "a problem set's environments: where they are built, which a worker serves",
    "codeexec.worker.process.runner": "run_candidate(): one candidate, in this process's runner",
    "codeexec.worker.process.protections": "what candidates run under here, for `codeexec doctor`",
    "codeexec.worker.process.proctree": "prctl(): a command's own servers and workers die with it",
    "codeexec.worker.process.workfiles": "path_parts(): what a request's file path may be",
    "codeexec.worker.candidate.values": "encode(): values as a candidate's process reads them (MBPP+'s arguments)",
}


def __getattr__(name: str) -> Celery:
    # Loaded when asked for: the app reads the settings, and the candidate side's modules import
    # this package without needing Celery.
    if name != "app":
        raise AttributeError(f"module 'codeexec.worker' has no attribute {name!r}")
    from codeexec.worker.queue.celery_app import app

    return app
