"""`codeexec server`: the private Valkey in the foreground, for several commands to share, until Ctrl-C."""

from __future__ import annotations

import argparse

from codeexec.producer.inputs.files import InputError
from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.protocol.settings import get_settings

HELP = "run the private Valkey in the foreground"


def add_flags(parser: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    server = EmbeddedServer(get_settings().data_dir)
    if server.running():
        raise InputError(f"a private Valkey is serving {server.data_dir} already ({server.url})")
    try:
        server.start()
        # Inside the try: a signal that arrives as this line is written (whoever reads it may stop us
        # at once) must still stop the server in order.
        print(f"serving {server.url} (data in {server.data_dir}); Ctrl-C stops it", flush=True)
        server.wait()
    finally:
        server.stop()
    return 0
