"""What the competitive-programming shapes (producer/inputs/shapes/: LiveCodeBench's, APPS', CodeContests',
DeepCoder's, LeetCodeDataset's, MapCoder's and codeexec's own ``cases``) share: reading their records'
fields, each raising ValueError that says what is wrong (producer/inputs/problems.py adds the file and line).
Each of those shapes makes a Problem with StdinTests or CallTests (protocol/kinds.py)."""

from __future__ import annotations

import ast
import json
import math
from typing import Any

from codeexec.producer.inputs.files import json_error

_NUMBER_NAMES = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def task_id_of(record: dict[str, Any], fields: tuple[str, ...], position: int) -> str:
    """The first of `fields` the record has, as text; else its place in the file."""
    for field in fields:
        value = record.get(field)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    return str(position)


def from_json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line, column = json_error(exc)
        at = f"line {line} of the text, {column}" if "\n" in text else column
        raise ValueError(f"{where}: malformed JSON: {exc.msg} ({at})") from None


def json_lines(text: str, where: str) -> list[Any]:
    """LiveCodeBench's call input: one JSON value (argument) a line."""
    return [from_json(line, f"{where}, line {number}") for number, line in enumerate(text.split("\n"), start=1)]


def texts(items: list[Any], what: str) -> list[str]:
    """Each of a list of stdin inputs or outputs as text (as_text()), named "<what> <number>" in an error."""
    return [as_text(item, f"{what} {number}") for number, item in enumerate(items, start=1)]


def as_text(value: Any, where: str) -> str:
    """A stdin test's input or output: text, or a list of lines (APPS writes some so)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise ValueError(f"{where}: expected text, got {type(value).__name__}")


def python_value(text: str, where: str) -> Any:
    """A value written in Python or JSON notation (LeetCode writes null, true, false, and inf; DeepCoder's
    files hold str() of their tests)."""
    if text.strip() in _NUMBER_NAMES:
        return _NUMBER_NAMES[text.strip()]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"{where}: not a value in Python or JSON notation: {text[:80]!r}") from None
