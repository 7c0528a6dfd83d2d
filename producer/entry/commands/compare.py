"""`codeexec compare`: run B against run A on the tasks they share: pass@k of each, the difference and its
interval, the tasks gained and lost."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from codeexec.producer.entry import flags
from codeexec.producer.entry.api import compare_runs, comparison_html
from codeexec.producer.local.backend import backend
from codeexec.protocol.settings import get_settings

HELP = "run B against run A: pass@k, interval, tasks"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("a", metavar="RUN_A")
    parser.add_argument("b", metavar="RUN_B")
    parser.add_argument("--k", type=flags.parse_k, metavar="1,10,100", help="pass@k to compare (default: run A's)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--html", type=Path, metavar="OUT.html", help="also write the comparison as one HTML page")


def run(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        comparison = compare_runs(client, args.a, args.b, args.k)
    if args.html:
        comparison_html(comparison, args.html)
        print(f"codeexec: wrote the comparison to {args.html}", file=sys.stderr)
    if args.json:
        print(comparison.model_dump_json(exclude=set() if comparison.left_out else {"left_out"}))
        return 0
    from codeexec.producer.entry.display import print_comparison

    print_comparison(comparison)
    return 0
