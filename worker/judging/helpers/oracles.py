"""EvalPlus 0.3.1's special oracles: the tasks whose outputs it does not judge by == alone
(unsafe_execute() in evalplus/eval/__init__.py; its helpers in evalplus/eval/_special_oracle.py).

EvalPlus picks them by the entry point's name (the producer does the same: producer/inputs/mbppplus.py), and
an EvalPlusTests names the one its task has (protocol/kinds.py, Oracle):

- "find_zero" (HumanEval/32): the output passes where the polynomial given is within atol of 0.
- MBPP+'s, which replace `out == expected` and then go on to the usual float tolerance:
  - "set": set(out) == set(expected) (similar_elements, find_char_long, common_in_nested_lists,
    extract_singly, larg_nnum, intersection_array, find_dissimilar, Diff);
  - "not_none": the expected output is whether the canonical solution returned something other than
    None (its outputs are re.Match objects); a bool output is compared with that, any other passes
    where it is not None (check_str, text_match_three, text_starta_endb);
  - "any": whatever the call returns passes (are_equivalent, Mbpp/164);
  - "or_zero": == or 0 (sum_div, Mbpp/295);
  - "surface_area": == or within atol of round() of the pyramid's area with the height taken as the
    perpendicular one (surface_Area, Mbpp/581);
  - "digit_distance": == or the digit distance of the two numbers padded with zeros to one length
    (digit_distance_nums, Mbpp/558).

Where the host needs more than a digest, the candidate's process is told what to send
(values.output_entry()'s views): the canonical solution's truth of a "not_none" task is whether it
returned something ("present"), and a "set" task's output that cannot be sent as it is (a generator)
goes as the set of its items ("items"), as big as WHOLE_BYTES before it is digested.
"""

from __future__ import annotations

import math
from typing import Any

from codeexec.worker.candidate.values import PLAIN_BYTES, WHOLE_BYTES


def views(oracle: str) -> tuple[str | None, str | None]:
    """What the candidate's process sends of each output (values.output_entry()): for the canonical
    solution's run, and for a sample's."""
    return ("present" if oracle == "not_none" else None), ("items" if oracle == "set" else None)


def plain_bytes(oracle: str) -> int:
    """Outputs whose canonical bytes are longer go as digests: a set is compared as a set, not by ==."""
    return WHOLE_BYTES if oracle == "set" else PLAIN_BYTES


def host_decides(oracle: str) -> bool:
    """Whether a call can pass without returning the expected output's digest: then the host judges each
    input (the candidate's process does not stop a check at a different digest). Under every oracle but ==."""
    return oracle != "equal"


def unsent_passes(oracle: str, expected: Any) -> bool | None:
    """Whether an output the host has no value of (a large one, sent as a digest, or one that cannot be
    sent: an object) passes: something returned that is neither None nor a bool. None where the oracle
    needs the value itself."""
    if oracle == "any":
        return True
    if oracle == "not_none":
        return expected is True
    return None


def matches(oracle: str, out: Any, expected: Any, arguments: list[Any], atol: float) -> bool:
    """EvalPlus's exact_match: out == expected, or what the oracle takes instead (`atol`: the tolerance
    as it stood before this input, which surface_area uses). It may raise, as EvalPlus's does: a fail."""
    equal = bool(out == expected)
    if oracle == "set":
        return set(out) == set(expected)
    if oracle == "not_none":
        return out == expected if isinstance(out, bool) else expected == (out is not None)
    if oracle == "any":
        return True
    if oracle == "or_zero":
        return equal or out == 0
    if oracle == "surface_area":
        return equal or abs(out - _surface_area(*arguments)) <= atol
    if oracle == "digit_distance":
        return equal or out == _digit_distance(*arguments)
    return equal


def find_zero(arguments: list[Any], out: Any, atol: float) -> bool:
    """HumanEval/32: the polynomial (the first argument) at `out` is within `atol` of 0."""
    return abs(_poly(*arguments, out)) <= atol


def _poly(xs: list[Any], x: float) -> float:
    """The polynomial xs at x, summed left to right as EvalPlus's sum() does on Python 3.11 (the
    references' Python; from 3.12 sum() of floats is compensated, which moves outputs near the 1e-4
    tolerance across it)."""
    total = 0
    for i, coeff in enumerate(xs):
        total += coeff * math.pow(x, i)
    return total


def _surface_area(base_edge: float, height: float) -> int:
    """A square pyramid's surface, `height` the perpendicular one, rounded (EvalPlus's Mbpp/581 oracle)."""
    slant = math.sqrt((base_edge / 2) ** 2 + height**2)
    return round(base_edge**2 + 2 * base_edge * slant)


def _digit_distance(first: int, second: int) -> int:
    """The sum of the differences of the digits of two numbers, the shorter padded with zeros in front
    (EvalPlus's Mbpp/558 oracle)."""
    a, b = str(first), str(second)
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width), strict=True))
