"""`codeexec resume`: enqueue again exactly the samples of a run that have no result (of a cancelled run too),
and wait for them."""

from __future__ import annotations

import argparse
from pathlib import Path

from codeexec.producer.entry import flags
from codeexec.producer.local.backend import backend
from codeexec.producer.run import Run
from codeexec.protocol.settings import get_settings

HELP = "enqueue again the samples with no result"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run")
    parser.add_argument("--samples", type=Path, metavar="PATH", help="the run's samples file, if it has moved")
    flags.add_workers(parser)


def run(args: argparse.Namespace) -> int:
    from codeexec.producer.entry.display import stderr, wait_for

    with backend(get_settings(), args.workers, run_jobs=True) as client:
        found = Run.fetch(client, args.run)
        count = found.resume(args.samples)
        stderr.print(f"enqueued {count} sample(s) with no result")
        wait_for(found)
    return 0
