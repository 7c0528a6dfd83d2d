"""`codeexec stop`: stop the data directory's warm private Valkey and local workers now (they stop by
themselves once idle: docs/commands.md, "Warm workers")."""

from __future__ import annotations

import argparse

from codeexec.producer.local import resident
from codeexec.protocol.settings import get_settings

HELP = "stop the warm private Valkey and local workers now"


def add_flags(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    data_dir = get_settings().data_dir.expanduser().resolve()
    print("stopped the warm workers" if resident.stop(data_dir) else f"no warm workers serve {data_dir}")
    return 0
