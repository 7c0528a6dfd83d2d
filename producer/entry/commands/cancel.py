"""`codeexec cancel`: drop a run's waiting jobs; the jobs workers hold finish, and results are kept (`codeexec
resume` carries on)."""

from __future__ import annotations

import argparse

from codeexec.producer.local.backend import backend
from codeexec.producer.run import Run
from codeexec.protocol.settings import get_settings

HELP = "drop a run's waiting jobs (results are kept)"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run")


def run(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        dropped = Run.fetch(client, args.run).cancel()
    print(f"cancelled {args.run}: dropped {dropped} waiting sample(s); jobs in hand finish; resume carries on")
    return 0
