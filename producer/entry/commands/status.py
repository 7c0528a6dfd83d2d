"""`codeexec status`: where a run's samples are (done, in flight, waiting), its priority and the live workers;
with --wait, wait for it (on the private Valkey, starting workers). With no run, the runs there are."""

from __future__ import annotations

import argparse

from codeexec.producer.entry import flags
from codeexec.producer.entry.commands.runs import print_runs
from codeexec.producer.local.backend import backend
from codeexec.producer.run import Run
from codeexec.protocol.settings import get_settings

HELP = "progress of a run (with none: the runs)"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run", nargs="?", help="the run (default: list the runs, as `codeexec runs` does)")
    parser.add_argument("--wait", action="store_true", help="wait for the run to finish (re-attach)")
    flags.add_workers(parser)


def run(args: argparse.Namespace) -> int:
    from codeexec.producer.entry.display import print_status, wait_for

    with backend(get_settings(), args.workers, run_jobs=args.wait and args.run is not None) as client:
        if args.run is None:
            return print_runs(client, as_json=False)
        found = Run.fetch(client, args.run)  # a clear error for a run that does not exist
        if args.wait:
            wait_for(found)
        print_status(found)
    return 0
