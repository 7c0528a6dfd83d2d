"""The APPS comparison cascade, in its two living forms (worker/judging/helpers/outputs.py names the modes):

- ``apps``: hendrycks/apps' eval/testing_util.py. An output passes at the first step that accepts it:
  the whole text equal once stripped (or once each line is stripped); the lines equal to the expected
  ones stripped, blank lines left out; one number a line, within np.allclose's tolerance; the set of
  each line's set of tokens equal (so token order, line order and repeats do not matter); the same with
  every token rounded to 3 decimals.
- ``prime``: the same cascade as verl's prime_code (and LiveCodeBench before 2025, and tinker-cookbook)
  have it: without the two set steps, and with no float comparison when both sides are all digits.

A call's value: ``==`` with a tuple taken as a list, or equal to the first item of an expected list
(APPS wraps expected values so), or a list of tuples equal to it as lists. (Each mode's prelude:
worker/judging/helpers/outputs.py.)
"""

from __future__ import annotations

import math
from typing import Any

_RTOL, _ATOL = 1e-05, 1e-08  # np.allclose's defaults


def same_stdout(actual: str, expected: str, sets: bool) -> bool:
    """The cascade on a program's output; `sets`: APPS' set steps (and its float step without the digits
    guard), else prime_code's."""
    output = actual.splitlines()
    if "\n".join(output).strip() == expected.strip():
        return True
    if "\n".join(line.strip() for line in output).strip() == expected.strip():
        return True
    wanted = [line.strip() for line in expected.split("\n") if line]
    if output == wanted:
        return True
    output = [line for line in output if line]
    if output == wanted:
        return True
    if _close_numbers(output, wanted, digits_guard=not sets):
        return True
    if not sets:
        return False
    got_sets = {frozenset(line.split()) for line in output if line.split()}
    if got_sets == {frozenset(line.split()) for line in wanted}:
        return True
    try:
        rounded = {frozenset(round(float(token), 3) for token in line.split()) for line in output if line.split()}
        return rounded == {frozenset(round(float(token), 3) for token in line.split()) for line in wanted}
    except (ValueError, OverflowError):
        return False


def _close_numbers(output: list[str], wanted: list[str], digits_guard: bool) -> bool:
    """One number a line on both sides, each within np.allclose's tolerance of the expected one.
    prime_code skips this when every pair is all digits; so does it, as zip(strict=True) raises, when
    every pair it got to was and the counts differ."""
    if digits_guard and all(a.isdigit() and b.isdigit() for a, b in zip(output, wanted, strict=False)):
        return False
    try:
        got, want = [float(line) for line in output], [float(line) for line in wanted]
    except ValueError:
        return False
    return len(got) == len(want) and all(_close(a, b) for a, b in zip(got, want, strict=True))


def _close(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= _ATOL + _RTOL * abs(b)


def same_value(actual: Any, expected: Any) -> bool:
    """A call's value as APPS and prime_code compare it."""
    if isinstance(actual, tuple):
        actual = list(actual)
    try:
        if actual == expected:
            return True
        if isinstance(expected, list) and expected and actual == expected[0]:
            return True
        if isinstance(actual, list) and actual and isinstance(actual[0], tuple):
            return bool([list(item) for item in actual] == expected[0])
    except Exception:  # == on odd values, or an expected value with no first item
        return False
    return False
