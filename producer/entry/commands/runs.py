"""`codeexec runs`: every run the Redis holds, oldest first: its status, samples done, pass@1, priority,
isolation, when it started and how long it took."""

from __future__ import annotations

import argparse
import json
import time

import redis

from codeexec.producer.entry.api import Codeexec
from codeexec.producer.local.backend import backend
from codeexec.protocol.run import priority_name
from codeexec.protocol.settings import get_settings

HELP = "list runs"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON array instead of lines")


def run(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        return print_runs(client, args.json)


def print_runs(client: redis.Redis, as_json: bool) -> int:
    rows = Codeexec(client).runs()
    if as_json:
        print(json.dumps([row.model_dump() for row in rows]))
        return 0
    for row in rows:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.created))
        score = "-" if row.pass_at_1 is None else f"pass@1 {100 * row.pass_at_1:.2f}%"
        took = "-" if row.took_s is None else f"took {row.took_s:.1f} s"
        priority = f"priority {priority_name(row.priority)}"
        print(
            f"{row.run}  {row.status}  {row.done}/{row.samples} samples  {score}  {priority}  {row.isolation}  "
            f"{started}  {took}"
        )
    if not rows:
        print("no run yet (codeexec eval or codeexec submit makes one)")
    return 0
