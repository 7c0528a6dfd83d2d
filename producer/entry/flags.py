"""The command line's flags that take a value codeexec checks: each parser says what is wrong with one."""

from __future__ import annotations

import argparse
import math

from codeexec.producer.inputs.files import InputError
from codeexec.producer.submit import parse_priority

DEFAULT_K = "1,10,100"


def parse_k(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--k {text!r}: expected whole numbers like 1,10,100") from None
    if not ks or any(k <= 0 for k in ks):
        raise argparse.ArgumentTypeError(f"--k {text!r}: every k must be a positive whole number")
    return sorted(set(ks))


def parse_names(text: str) -> list[str]:
    """A comma-separated list of names (modules, data packages)."""
    return [name for name in text.split(",") if name]


def parse_timeout(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout {text!r}: expected seconds, like 3 or 0.5") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"--timeout {text!r}: expected a positive, finite number of seconds")
    return value


def parse_hash_seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 4294967295:
        raise argparse.ArgumentTypeError(f"--hash-seed {text!r}: expected a whole number from 0 to 4294967295")
    return value


def parse_priority_flag(text: str) -> int:
    try:
        return parse_priority(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def parse_positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive number")
    return value
