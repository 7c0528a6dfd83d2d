"""`codeexec priority`: serve a run at another priority, from its next job on."""

from __future__ import annotations

import argparse

from codeexec.producer.entry import flags
from codeexec.producer.local.backend import backend
from codeexec.producer.run import Run
from codeexec.protocol.run import priority_name
from codeexec.protocol.settings import get_settings

HELP = "change a run's priority while it runs"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run")
    parser.add_argument("priority", type=flags.parse_priority, help="high, normal, low or a whole number")


def run(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        found = Run.fetch(client, args.run)
        found.set_priority(args.priority)
    print(f"{args.run}: priority {priority_name(found.meta.options.priority)} from its next job on")
    return 0
