"""`codeexec report`: a run's pass@k and what it came to, and the files asked for (per sample, HTML, the
references' own results files)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from codeexec.producer.entry import flags
from codeexec.producer.local.backend import backend
from codeexec.producer.results.files import RESULTS_FILES, fit
from codeexec.producer.results.persample import write_per_sample
from codeexec.producer.run import Run
from codeexec.protocol.settings import get_settings

HELP = "pass@k of a run"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run")
    parser.add_argument("--k", type=flags.parse_k, metavar="1,10,100", help="pass@k to report (default: the run's)")
    parser.add_argument(
        "--samples", type=Path, metavar="PATH", help="the run's samples file, if it has moved (for --per-sample)"
    )
    flags.add_outputs(parser)


def run(args: argparse.Namespace) -> int:
    with backend(get_settings()) as client:
        found = Run.fetch(client, args.run)
        fit(found.meta, results_files_asked(args))
        return report_run(found, args.k, args, args.samples, make=False)


def results_files_asked(args: argparse.Namespace) -> list[str]:
    """The flags of the references' results files `args` asks for."""
    return [flag for flag, results_file in RESULTS_FILES.items() if getattr(args, results_file.dest)]


def report_run(run: Run, ks: list[int] | None, args: argparse.Namespace, moved: Path | None, make: bool) -> int:
    """Print the run's report and write the files asked for; `moved`: where its samples file is now, if
    not where it was submitted from (the run records that path: for eval, the one it just wrote); `make`: what
    a results file needs beside (BigCodeBench's ground truth) is made and waited for (eval)."""
    from codeexec.producer.entry.display import print_report, stderr

    report = run.report(ks)
    if args.per_sample:
        count = write_per_sample(run, args.per_sample, moved)
        stderr.print(f"wrote {count} lines to {args.per_sample}")
    if args.html:
        run.html(args.html, ks)
        stderr.print(f"wrote the HTML report to {args.html}")
    for flag in results_files_asked(args):
        results_file = RESULTS_FILES[flag]
        for line in results_file.write(run, getattr(args, results_file.dest), moved, make):
            stderr.print(line, soft_wrap=True)
    if args.json:
        document = report.model_dump(exclude={"tasks"})
        document["tasks"] = {task_id: task.model_dump() for task_id, task in report.tasks.items()}
        print(json.dumps(document))
    else:
        print_report(report, args.per_task)
    return 0
