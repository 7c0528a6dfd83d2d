"""`codeexec submit`: submit a run and print its name, at once (`codeexec status RUN --wait` waits)."""

from __future__ import annotations

import argparse
import sys

from codeexec.producer.entry import flags
from codeexec.producer.local.backend import backend
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, prepare
from codeexec.protocol.settings import get_settings

HELP = "submit a run and print its id"


def add_flags(parser: argparse.ArgumentParser) -> None:
    flags.add_inputs(parser)


def run(args: argparse.Namespace) -> int:
    submission = submission_of(args)
    with backend(get_settings()) as client:
        Run.submit(client, submission)
    print(submission.meta.run)
    return 0


def submission_of(args: argparse.Namespace) -> Submission:
    """The run the flags ask for, its every input read and checked before anything is written anywhere."""
    return prepare(
        args.problems,
        args.samples,
        flags.run_options(args),
        run=args.run,
        warn=lambda message: print(f"codeexec: {message}", file=sys.stderr),
    )
