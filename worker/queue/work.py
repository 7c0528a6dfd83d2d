"""A worker: Celery's worker on codeexec's app (app.py), with codeexec's flags and the queues it serves.

`codeexec worker` runs work(); the local workers a command starts (producer/local/workers.py) run this module,
`python -m codeexec.worker.queue.work`, which imports none of the command line's producer side: that is
~0.6 s of CPU of each worker's start (1.35 s through the command line against 0.77 s, docs/development.md).
"""

from __future__ import annotations

import argparse
import sys

from codeexec.protocol import keys
from codeexec.protocol.settings import get_settings
from codeexec.worker import environments

#: Celery's flags for a codeexec worker: warnings only; no mingle or gossip (workers learn nothing from each
#: other: what they share is in Redis).
WORKER_FLAGS = ["--loglevel=WARNING", "--without-mingle", "--without-gossip"]


def queues(served: list[str]) -> str:
    """The Celery queues a worker that serves the environments `served` consumes (-Q): its own Python's, and
    theirs."""
    return ",".join(keys.queue(name) for name in [None, *served])


def work(concurrency: int | None = None, hostname: str | None = None) -> None:
    """Run a worker until it is stopped, on the settings in the environment (read now: flags first)."""
    from codeexec.worker.queue.app import app  # reads the settings: only once the flags are in the environment

    argv = ["worker", *WORKER_FLAGS, "-Q", queues(environments.served(get_settings()))]
    if concurrency:
        argv.append(f"--concurrency={concurrency}")
    if hostname:
        argv.append(f"--hostname={hostname}")
    app.worker_main(argv)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codeexec.worker.queue.work", description=__doc__)
    parser.add_argument("--concurrency", type=int, help="pool processes (default: cores)")
    parser.add_argument("--hostname", help="worker name (default: celery@<host>)")
    args = parser.parse_args(argv)
    work(args.concurrency, args.hostname)
    return 0


if __name__ == "__main__":
    sys.exit(main())
