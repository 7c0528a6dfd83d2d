"""How a competitive-programming test's output is compared with the expected one, in each judging mode,
and what each mode runs before the program (its prelude). The modes are the reference judges' own
rules, reimplemented from their source (docs/judging.md says which quirks are kept and which are not):

- ``lcb``: LiveCodeBench's current grader (lcb_runner/evaluation/testing_util.py, 2025-05). stdout: the
  whole output stripped and split into lines, each line stripped; as many lines as expected, each equal,
  or equal as a list of Decimal tokens. A call's value: ``==``, a tuple taken as a list. Its prelude
  star-imports 18 standard modules, and raises the recursion limit and the digits an int may print.
- ``exact``: verl's SandboxFusion path: stdout equal once trailing newlines are removed; a call's value
  equal as JSON. No prelude: the program runs as it is.
- ``apps``: hendrycks/apps' cascade: stripped text, stripped lines, np.allclose for one number a line,
  then token sets (order-insensitive) and tokens rounded to 3 decimals; its prelude.
- ``prime``: the same cascade as verl's prime_code, LiveCodeBench before 2025 and tinker-cookbook have
  it, without the set steps; their prelude. (Both: worker/judging/helpers/cascade.py.)
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from codeexec.protocol.kinds import JudgeMode
from codeexec.worker.judging.helpers import cascade

# LiveCodeBench's prelude: star imports of these modules, plain imports of all but builtins and typing,
# then sys.setrecursionlimit(50000). Its driver also lets ints print 50,000 digits (the default 4,300
# would make printing a large int raise); its children inherit that, ours are told. prime_code's prelude
# (LiveCodeBench's before 2025) imports the same, with a recursion limit of 600,000.
_LCB_MODULES = [
    *("string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random", "statistics"),
    *("itertools", "functools", "operator", "io", "sys", "json", "builtins", "typing"),
]
_IMPORTS = "".join(f"from {name} import *\n" for name in _LCB_MODULES) + "".join(
    f"import {name}\n" for name in _LCB_MODULES if name not in ("builtins", "typing")
)
# APPS' own imports; numpy only where the candidates' Python has it (a reference run always had).
_APPS_PRELUDE = """import sys
import time
import itertools
from itertools import accumulate, product, permutations, combinations
import collections
from collections import Counter, OrderedDict, deque, defaultdict, ChainMap
from functools import lru_cache
import math
from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2
import fractions
from typing import List, Tuple
try:
    import numpy as np
except ImportError:
    pass
import random
import heapq
from heapq import *
"""
_APPS_MODULES = [
    *("sys", "time", "itertools", "collections", "functools", "math", "fractions", "typing", "numpy"),
    *("random", "heapq"),
]
#: What each mode runs before the program, in its namespace.
PRELUDES: dict[str, str] = {
    "lcb": _IMPORTS
    + "sys.setrecursionlimit(50000)\n"
    + "if hasattr(sys, 'set_int_max_str_digits'):\n    sys.set_int_max_str_digits(50000)\n",
    "exact": "",
    "apps": _APPS_PRELUDE,
    "prime": _IMPORTS + "sys.setrecursionlimit(6 * 10**5)\n",
}
#: What a warm interpreter imports once, so that no test pays the prelude's imports (worker/process/zygote.py).
PRELOADS: dict[str, list[str]] = {"lcb": _LCB_MODULES, "exact": [], "apps": _APPS_MODULES, "prime": _LCB_MODULES}


def same_stdout(mode: JudgeMode, actual: str, expected: str) -> bool:
    """Whether a stdin test's output passes in `mode`."""
    if mode == "exact":
        return actual.rstrip("\n") == expected.rstrip("\n")
    if mode in ("apps", "prime"):
        return cascade.same_stdout(actual, expected, sets=mode == "apps")
    return _lcb_stdout(actual, expected)


def _lcb_stdout(actual: str, expected: str) -> bool:
    got, want = _stripped_lines(actual), _stripped_lines(expected)
    if len(got) != len(want):
        return False
    for line, wanted in zip(got, want, strict=True):
        if line == wanted:
            continue
        numbers, wanted_numbers = _decimals(line), _decimals(wanted)
        if numbers is None or wanted_numbers is None or numbers != wanted_numbers:
            return False
    return True


def _stripped_lines(text: str) -> list[str]:
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> list[Decimal] | None:
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def same_value(mode: JudgeMode, actual: Any, expected: Any) -> bool:
    """Whether a call's value passes in `mode`."""
    if mode == "exact":
        try:
            return json.dumps(actual, sort_keys=True) == json.dumps(expected, sort_keys=True)
        except (TypeError, ValueError):
            return False
    if mode in ("apps", "prime"):
        return cascade.same_value(actual, expected)
    if isinstance(actual, tuple):
        actual = list(actual)
    try:
        return bool(actual == expected)
    except Exception:  # an object whose == raises (decoded values are plain, but an array's is ambiguous)
        return False


def excerpt(text: str, room: int = 60) -> str:
    """A short view of an output for a result's detail: all of it, or its start and its end."""
    if len(text) <= room:
        return text
    half = room // 2 - 2
    return f"{text[:half]}...{text[-half:]}"
