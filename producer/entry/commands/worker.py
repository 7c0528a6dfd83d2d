"""`codeexec worker`: a Celery worker with codeexec's settings, on the queues of the environments built here
(= celery -A codeexec.worker worker -Q codeexec[,codeexec.env.NAME...])."""

from __future__ import annotations

import argparse

from codeexec.producer.local.workers import WORKER_FLAGS, queues
from codeexec.protocol.settings import get_settings
from codeexec.worker import environments

HELP = "run a worker (celery worker with codeexec's settings)"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--concurrency", type=int, help="pool processes (default: cores)")
    parser.add_argument("--hostname", help="worker name (default: celery@<host>)")


def run(args: argparse.Namespace) -> int:
    from codeexec.worker.queue.celery_app import app  # reads the settings: only once the flags are in the environment

    argv = ["worker", *WORKER_FLAGS, "-Q", queues(environments.served(get_settings()))]
    if args.concurrency:
        argv.append(f"--concurrency={args.concurrency}")
    if args.hostname:
        argv.append(f"--hostname={args.hostname}")
    app.worker_main(argv)
    return 0
