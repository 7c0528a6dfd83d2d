"""`codeexec eval`: submit a run, wait for its results, and report it."""

from __future__ import annotations

import argparse

from codeexec.producer.entry import flags
from codeexec.producer.entry.commands.report import report_run, results_files_asked
from codeexec.producer.entry.commands.submit import submission_of
from codeexec.producer.local.backend import backend
from codeexec.producer.results.files import fit
from codeexec.producer.run import Run, server_id
from codeexec.protocol.settings import get_settings

HELP = "submit, run, wait and report"


def add_flags(parser: argparse.ArgumentParser) -> None:
    flags.add_inputs(parser)
    flags.add_outputs(parser)
    flags.add_workers(parser)


def run(args: argparse.Namespace) -> int:
    submission = submission_of(args)
    settings = get_settings()
    meta = submission.meta
    fit(meta, results_files_asked(args))  # before it is judged
    with backend(settings, args.workers, run_jobs=True) as client:
        from codeexec.producer.entry.display import stderr, wait_for

        serving = server_id(client)  # a restart once the run is submitted is said, however soon it comes
        submitted = Run.submit(client, submission)
        stderr.print(f"run [bold]{meta.run}[/]: {meta.n_samples} samples over {meta.n_tasks} tasks")
        try:
            wait_for(submitted, show=not args.json, serving=serving)
        except KeyboardInterrupt:
            stderr.print(f"interrupted; nothing is lost: [bold]codeexec status {meta.run} --wait[/] carries on")
            raise
        return report_run(submitted, None, args, None, make=True)
