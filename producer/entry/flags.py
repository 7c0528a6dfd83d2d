"""The command line's flags that are a run's options, made from RunOptions' fields (protocol/run.py), and the
flags of other commands that take a value codeexec checks: each says what is wrong with one."""

from __future__ import annotations

import argparse
import enum
import typing
from typing import Any

from pydantic import ValidationError
from pydantic.fields import FieldInfo

from codeexec.protocol.run import RunOptions


def flag_of(name: str) -> str:
    """The flag of RunOptions' field `name`: its own `flag`, or `--` and its name."""
    extra = RunOptions.model_fields[name].json_schema_extra
    given = extra.get("flag") if isinstance(extra, dict) else None
    return str(given) if given else "--" + name.replace("_", "-")


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
            metavar = flag.removeprefix("--").replace("-", "_").upper()
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
