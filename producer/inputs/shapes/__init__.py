"""The shapes a problems file's records may have, one module each, found by scanning this folder: each gives
SHAPE, a Shape (which records are of it, how one becomes a Problem, and its fields as an error names them).
producer/inputs/problems.py reads a file's records and gives each to the first shape that fits it, in the
shapes' order (those whose fields others also have go after them). docs/formats.md documents each.

What shapes of one family share is beside this folder: competitive.py (competitive programming's fields),
programs.py (languages), testfiles.py (a test file's tests), mbppplus.py (MBPP+'s arguments), leetcode.py
(rllm's prelude), asserts.py (HumanEval's check() split into asserts).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from codeexec.protocol.models import Problem


@dataclass(frozen=True)
class Reading:
    """How a file is read, beside each record: MBPP's challenge tests added (`challenge`), and the record's
    0-based place in its file (`position`: the task id of a shape that has none, DeepCoder's)."""

    challenge: bool = False
    position: int = 0


@dataclass(frozen=True)
class Shape:
    """A shape of problem records: `fields`, as an error lists them ("LiveCodeBench's (question_id, ...)");
    `order`, where it is tried; `fits(record)`, whether a record is of it; `problem(record, reading)`, the
    Problem it is (ValueError, or pydantic's ValidationError, says what is wrong with it)."""

    fields: str
    order: int
    fits: Callable[[dict[str, Any]], bool]
    problem: Callable[[dict[str, Any], Reading], Problem]


def _scan() -> list[Shape]:
    found = [importlib.import_module(f"{__name__}.{info.name}").SHAPE for info in pkgutil.iter_modules(__path__)]
    return sorted(found, key=lambda shape: shape.order)


#: Every shape, in the order they are tried.
SHAPES: list[Shape] = _scan()


def shape_of(record: dict[str, Any]) -> Shape:
    """The first shape that fits the record (the last, codeexec's own, takes any: its error says what it lacks)."""
    return next(shape for shape in SHAPES if shape.fits(record))
