"""`codeexec flower`: Celery's Flower monitor of the workers and their tasks (needs codeexec[monitor])."""

from __future__ import annotations

import argparse

from codeexec.producer.inputs.files import InputError

HELP = "Celery's Flower monitor (needs codeexec[monitor])"


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=int, default=5555, help="its port (default 5555)")


def run(args: argparse.Namespace) -> int:
    try:
        import flower  # noqa: F401 — only to say clearly that it is missing
    except ImportError:
        raise InputError("Flower is not installed: pip install 'codeexec[monitor]'") from None
    from codeexec.worker.queue.celery_app import app  # reads the settings: only once the flags are in the environment

    app.start(["flower", f"--port={args.port}"])
    return 0
