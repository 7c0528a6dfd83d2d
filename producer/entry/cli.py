"""The ``codeexec`` command line: one module per command in producer/entry/commands/, found by scanning it.

Flags override ``CODEEXEC_*`` environment variables: they are written into the environment before
the settings are read, so the workers a command starts see them too.

The terminal display (codeexec.producer.entry.display, and with it rich) is imported by the commands that use it,
once their samples are submitted: the first sample need not wait for it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys
from types import ModuleType

import redis

from codeexec.producer.entry import commands, flags
from codeexec.producer.inputs.files import InputError
from codeexec.producer.local.lifetime import Stopped, stop_on_sigterm
from codeexec.producer.submission import version
from codeexec.protocol.settings import get_settings


def _scan() -> dict[str, ModuleType]:
    found = {
        info.name: importlib.import_module(f"{commands.__name__}.{info.name}")
        for info in pkgutil.iter_modules(commands.__path__)
    }
    return dict(sorted(found.items()))


#: Each command's module, by the command's name.
COMMANDS = _scan()


def build_parser(width: int | None = None) -> argparse.ArgumentParser:
    """The parser of every command; `width`: of its help and usage (default: the terminal's)."""

    def formatter(prog: str) -> argparse.HelpFormatter:
        return argparse.HelpFormatter(prog, width=width)

    parser = argparse.ArgumentParser(
        prog="codeexec",
        description="Queue-backed distributed evaluator for code generation.",
        formatter_class=formatter,
    )
    parser.add_argument("--version", action="version", version=f"codeexec {version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, module in COMMANDS.items():
        command = sub.add_parser(name, help=module.HELP, description=module.__doc__, formatter_class=formatter)
        flags.add_connection(command)
        module.add_flags(command)
    return parser


def synopsis(width: int = 116) -> str:
    """Every command's usage and what it does, as docs/commands.md opens (tests/test_docs.py holds them equal)."""
    parser = build_parser(width)
    commands_ = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    lines = []
    for name, command in commands_.choices.items():
        lines.append(f"# {COMMANDS[name].HELP}")
        lines.append(command.format_usage().removeprefix("usage: ").rstrip())
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    stop_on_sigterm()
    args = build_parser().parse_args(argv)
    for flag, variable in (("redis_url", "CODEEXEC_REDIS_URL"), ("data_dir", "CODEEXEC_DATA_DIR")):
        if getattr(args, flag, None):
            os.environ[variable] = str(getattr(args, flag))
    get_settings.cache_clear()
    try:
        return COMMANDS[args.command].run(args)
    except InputError as exc:
        print(f"codeexec: error: {exc}", file=sys.stderr)
        return 2
    except redis.RedisError as exc:
        print(f"codeexec: error: Redis: {exc}", file=sys.stderr)
        return 3
    except Stopped as stop:
        print(f"codeexec: stopped by {stop}", file=sys.stderr)
        return 128 + stop.signum
    except KeyboardInterrupt:
        print("codeexec: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
