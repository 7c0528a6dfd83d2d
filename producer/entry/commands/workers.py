"""`codeexec workers`: every worker seen in the last hour: its host, pid, environments, the run and the
samples it holds, its last heartbeat."""

from __future__ import annotations

import argparse
import json

from codeexec.producer.local.backend import backend
from codeexec.protocol.settings import get_settings
from codeexec.worker.queue import leases

HELP = "workers seen in the last hour"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON array instead of a table")


def run(args: argparse.Namespace) -> int:
    from codeexec.producer.entry.display import print_workers

    with backend(get_settings()) as client:
        listed = leases.workers(client)
        if args.json:
            print(json.dumps([worker.model_dump() for worker in listed]))
        elif listed:
            print_workers(client, listed)
        else:
            print("no worker has been seen in the last hour")
    return 0
