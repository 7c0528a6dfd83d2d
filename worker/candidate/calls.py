"""HumanEval+ (EvalPlus) and call-based tests: inputs in, outputs out, the "calls" harness. Loaded by path in
the candidate's interpreter (worker/candidate/__init__.py); child.py's main() calls run_io() and writes the
record.
"""

import _signal
import marshal
import os
import sys
import time

from failures import describe, message_of
from values import output_entry

# Bound now, before any candidate code runs, so a candidate that reassigns them changes nothing here.
_open, _pread, _monotonic_ns, _setitimer = os.open, os.pread, time.monotonic_ns, _signal.setitimer

# With `io` (worker/judging/kinds/evalplus.py and calls.py build it) main() runs no assertions. As EvalPlus 0.3.1
# and LiveCodeBench do, it runs the program (after the prelude), takes its entry point (a method of a new
# Solution() with `instance`), and calls it on each input of each check in turn, with print() going
# nowhere (EvalPlus's swallow_io). The verdict is not made here: what each call returned goes to the host
# ("check" records, child.py), which compares it with the expected output.
#
#   io = {"entry_point": E, "plain": P, "checks": [[name, inputs, limits, budget, expected, tolerant], ...],
#         "prelude": code, "instance": bool, "all": bool, "view": V}  (the last four optional; "all": no
#         input stops a check; V: what of each output is sent, values.output_entry())
#   inputs    marshal data of the check's list of inputs, each a list of arguments or a dict of keyword
#             arguments (fresh objects for the candidate);
#   limits    seconds each call may be charged, or None: no limit (the canonical solution's own run);
#   budget    seconds the whole check may be charged, or None; the program's run counts toward the
#             first check's (EvalPlus runs it in each check's process, within that check's timeout);
#   expected  the digest of each expected output, or None (the canonical solution's run);
#   tolerant  indexes of inputs whose output may pass without being equal (a float tolerance, or an
#             oracle of EvalPlus's that compares something else: worker/judging/helpers/oracles.py).
# An output goes as its encode()d value, or as the digest of its canonical() bytes when those are
# longer than P. Like EvalPlus, a check stops at its first input that surely failed: it raised, it
# ran over its limit, or its digest is not the expected one (what cannot be sent has none) where no
# tolerance applies. Stopping only saves time; the host judges every input it is sent.
#
# A call is charged as the time limit charges a candidate (worker/process/timelimit.py): wall-clock time
# minus this thread's waits for a CPU, read from its schedstat, so a busy machine cannot push a
# call over its limit. SIGALRM, armed with the time left, interrupts a call that runs over.


class OverLimit(BaseException):
    """A call ran over its time limit."""


class OverBudget(BaseException):
    """A check ran over its time budget."""


class Discard:
    """Where print() goes during the program and its calls."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


class Charge:
    """Charged nanoseconds since a mark, with SIGALRM armed for a call's limit and a check's budget."""

    def __init__(self) -> None:
        try:
            self.fd: int | None = _open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:  # no figure: charge wall-clock time
            self.fd = None
        self.check = self.call = self.now()
        self.limit: int | None = None
        self.budget: int | None = None

    def now(self) -> tuple[int, int | None]:
        waited = None
        if self.fd is not None:
            try:
                waited = int(_pread(self.fd, 128, 0).split()[1])
            except (OSError, IndexError, ValueError):  # the candidate closed it
                pass
        return _monotonic_ns(), waited

    def since(self, mark: tuple[int, int | None], now: tuple[int, int | None]) -> int:
        wall = now[0] - mark[0]
        if mark[1] is None or now[1] is None:
            return wall
        return max(0, wall - max(0, now[1] - mark[1]))

    def start_check(self, budget: float | None) -> None:
        self.check, self.budget = self.now(), None if budget is None else int(budget * 1e9)

    def start_call(self, limit: float | None) -> None:
        self.call, self.limit = self.now(), None if limit is None else int(limit * 1e9)
        self.arm(self.call)

    def stop(self) -> int:
        """Disarm; the nanoseconds the call was charged."""
        _setitimer(_signal.ITIMER_REAL, 0)
        return self.since(self.call, self.now())

    def arm(self, now: tuple[int, int | None]) -> None:
        left = []
        if self.budget is not None:
            left.append(self.budget - self.since(self.check, now))
            if left[-1] <= 0:
                raise OverBudget
        if self.limit is not None:
            left.append(self.limit - self.since(self.call, now))
            if left[-1] <= 0:
                raise OverLimit
        if left:
            # Then again every 50 ms, should the candidate swallow what the alarm raises.
            _setitimer(_signal.ITIMER_REAL, max(min(left), 1_000_000) / 1e9, 0.05)

    def alarm(self, signum: int, frame: object) -> None:
        self.arm(self.now())


class MissingEntryPoint(Exception):
    """The program defines no such function (or Solution has no such method)."""


def entry_point(namespace: dict[str, object], name: str, instance: bool):
    """The function the calls go to: namespace[name], or with `instance`, Solution().name."""
    owner = namespace.get("Solution") if instance else None
    if instance:
        if not callable(owner):
            raise MissingEntryPoint("the program defines no class Solution")
        owner = owner()
    function = getattr(owner, name, None) if instance else namespace.get(name)
    if not callable(function):
        where = "Solution has no method" if instance else "the program defines no function"
        raise MissingEntryPoint(f"{where} {name!r}")
    return function


def run_io(candidate: str, io: dict, report) -> tuple[str, str, str | None]:
    """(outcome, detail, message) of running the program and calling it on every input (see above);
    `report(name, outputs, stopped)` sends each check's "check" record (child.py)."""
    charge = Charge()
    _signal.signal(_signal.SIGALRM, charge.alarm)
    checks = io["checks"]
    real_stdout, real_stderr = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = Discard()
    namespace: dict[str, object] = {}
    charge.start_check(checks[0][3] if checks else None)
    charge.start_call(None)
    try:
        exec(io.get("prelude", ""), namespace)
        exec(candidate, namespace)
        charge.stop()
    except OverBudget:  # the program's own run used up the first check's budget
        charge.stop()
        for name, *_ in checks:
            report(name, [], "budget")
        return "pass", "", None
    except BaseException as exc:
        charge.stop()
        compiling = exc.__traceback__ is None or exc.__traceback__.tb_next is None
        if compiling and isinstance(exc, (SyntaxError, ValueError)):
            return "syntax_error", describe(exc), message_of(exc)
        return "error", describe(exc), message_of(exc)
    finally:
        sys.stdout, sys.stderr = real_stdout, real_stderr
    try:
        function = entry_point(namespace, io["entry_point"], io.get("instance", False))
    except MissingEntryPoint as exc:
        return "error", str(exc), None
    except BaseException as exc:  # Solution() raised
        return "error", describe(exc), message_of(exc)
    for number, (name, inputs, limits, budget, expected, tolerant) in enumerate(checks):
        if number:
            charge.start_check(budget)
        outputs: list[list[object]] = []
        stopped = None
        tolerated = set(tolerant)
        sys.stdout = sys.stderr = Discard()
        try:
            for index, arguments in enumerate(marshal.loads(inputs)):
                digest = ""
                try:
                    charge.start_call(None if limits is None else limits[index])
                    value = function(**arguments) if type(arguments) is dict else function(*arguments)
                    ns = charge.stop()
                    entry, digest = output_entry(value, io["plain"], io.get("view"))
                except OverBudget:
                    charge.stop()
                    stopped = "budget"
                    break
                except BaseException as exc:
                    ns = charge.stop()
                    entry = ["limit", None] if isinstance(exc, OverLimit) else ["raised", describe(exc)]
                if limits is not None and ns > limits[index] * 1e9:
                    entry = ["limit", None]
                outputs.append([*entry, digest, ns])
                if expected is None:
                    if entry[0] == "limit":
                        break
                elif io.get("all"):  # every input runs, whatever came of the last (call-based tests)
                    continue
                elif entry[0] in ("raised", "limit") or (index not in tolerated and digest != expected[index]):
                    break  # it surely failed here: EvalPlus stops a check at its first failure
        finally:
            sys.stdout, sys.stderr = real_stdout, real_stderr
        report(name, outputs, stopped)
    return "pass", "", None
