"""The command line's flags that several commands share: the connection's (every command's), a run's inputs and
options (the options made from RunOptions' fields, protocol/run.py), what a report writes, the local workers; and
the flags' values codeexec checks, each saying what is wrong with one."""

from __future__ import annotations

import argparse
import enum
import typing
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from codeexec.producer.results.files import RESULTS_FILES
from codeexec.protocol.run import RunOptions


def add_connection(parser: argparse.ArgumentParser) -> None:
    """Where Redis is: every command's flags."""
    parser.add_argument(
        "--redis-url", metavar="URL", help="shared Redis/Valkey (env CODEEXEC_REDIS_URL); default: private Valkey"
    )
    parser.add_argument(
        "--data-dir", metavar="DIR", help="where the private Valkey keeps its data (env CODEEXEC_DATA_DIR)"
    )


def add_inputs(parser: argparse.ArgumentParser) -> None:
    """A run's problems, samples, name and options (eval, submit)."""
    parser.add_argument(
        "--problems",
        required=True,
        metavar="NAME|PATH",
        help="'humaneval', 'humanevalplus' or 'mbppplus' (EvalPlus's HumanEval+, MBPP+), 'bigcodebench', "
        "'bigcodebench-hard', another language's set ('multipl-e-humaneval-cpp', 'mbjsp', 'humaneval-x-java': "
        "docs/languages.md) or a problems file",
    )
    parser.add_argument(
        "--samples",
        required=True,
        type=Path,
        metavar="PATH|canonical",
        help="samples file (one JSON object a line), or 'canonical'",
    )
    parser.add_argument(
        "--run", metavar="NAME", help="name of the run (default: from the samples file name and the time)"
    )
    add_run_options(parser)


def add_outputs(parser: argparse.ArgumentParser) -> None:
    """What a report prints and writes (eval, report): the references' results files among them."""
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--per-sample", type=Path, metavar="OUT.jsonl", help="write one JSON line per sample")
    parser.add_argument("--per-task", action="store_true", help="also show n, c and pass@k for each task")
    parser.add_argument("--html", type=Path, metavar="OUT.html", help="also write the run's report as one HTML page")
    for results_file in RESULTS_FILES.values():
        parser.add_argument(results_file.flag, type=Path, metavar=results_file.metavar, help=results_file.help)


def add_workers(parser: argparse.ArgumentParser) -> None:
    """The local workers a command that runs jobs starts (eval, status, resume, serve)."""
    parser.add_argument(
        "--workers", type=int, metavar="N", help="local worker processes (default: cores without --redis-url)"
    )


def flag_of(name: str) -> str:
    """The flag of RunOptions' field `name`: its own `flag`, or `--` and its name."""
    return _extra(name, "flag") or "--" + name.replace("_", "-")


def _extra(name: str, what: str) -> str:
    extra = RunOptions.model_fields[name].json_schema_extra
    return str(extra.get(what) or "") if isinstance(extra, dict) else ""


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """A flag for each of RunOptions' fields, its help the field's description. A flag not given is left out
    of the options, which take their defaults."""
    for name, field in RunOptions.model_fields.items():
        flag = flag_of(name)
        if field.annotation is bool:
            parser.add_argument(flag, dest=name, action="store_true", default=None, help=field.description)
            continue
        choices = _choices(field)
        if choices is not None:  # argparse says what the choices are
            parser.add_argument(flag, dest=name, choices=choices, default=None, help=field.description)
        else:
            metavar = _extra(name, "metavar") or flag.removeprefix("--").replace("-", "_").upper()
            parser.add_argument(
                flag, dest=name, type=_checked(name, flag), default=None, metavar=metavar, help=field.description
            )


def run_options(args: argparse.Namespace) -> RunOptions:
    """The options a command's flags give (add_run_options())."""
    given = {name: getattr(args, name) for name in RunOptions.model_fields if getattr(args, name, None) is not None}
    return RunOptions.model_validate(given)


def option_value(name: str, text: str) -> Any:
    """`text` as RunOptions' field `name` takes it; ValueError saying what it expected."""
    try:
        return getattr(RunOptions.model_validate({name: text}), name)
    except ValidationError as exc:
        raise ValueError(exc.errors()[0]["msg"]) from None


def _checked(name: str, flag: str) -> typing.Callable[[str], Any]:
    def parse(text: str) -> Any:
        try:
            return option_value(name, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"{flag} {text!r}: {exc}") from None

    parse.__name__ = flag  # what argparse names in its own messages
    return parse


def _choices(field: FieldInfo) -> list[str] | None:
    """The values a field takes, where they are a few names (a Literal, an Enum's values)."""
    for kind in (field.annotation, *typing.get_args(field.annotation)):
        if typing.get_origin(kind) is typing.Literal:
            return [str(value) for value in typing.get_args(kind)]
        if isinstance(kind, type) and issubclass(kind, enum.Enum):
            return [str(member.value) for member in kind]
    return None


def parse_k(text: str) -> list[int]:
    """--k of a command that reads a run (report, compare)."""
    return _checked("k", "--k")(text)


def parse_priority(text: str) -> int:
    """A priority, as `codeexec priority` takes it."""
    return _checked("priority", "priority")(text)


def parse_names(text: str) -> list[str]:
    """A comma-separated list of names (modules, data packages)."""
    return [name for name in text.split(",") if name]
