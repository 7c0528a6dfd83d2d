"""The child-side runner script: runs one candidate in a process of its own. Start reading here.

The host (worker/process/runner.py) never imports this file. In isolation mode "fresh", for each candidate
it writes a small script into the candidate's fresh temporary directory, which loads this module
(from its cached bytecode) and makes one call

    main(**{candidate, harness, given, denied, nonce, pid_namespace, sandbox}, record_fd=R, lifeline_fd=L,
         seccomp=F, script=sys.argv[0])

with the arguments written by repr(), and starts a fresh interpreter on it (``python -s``, with an
environment of the host's making: what ``-I`` gives, but for PYTHONHASHSEED). In mode "fork" the same
interpreter is started once, as a zygote, on warm.py's serve(), and forks a process per candidate
that calls main() (worker/process/zygote.py is the host's side of it).

main() at the end is the whole run, top to bottom; above it, the harnesses, one of which runs the program
(its assertions, its calls, its stdin tests, a test file, another language's steps), each writing its own lines
of the record. Each other step is a module beside this one, in the order a run meets them (a module more costs
a fresh candidate a fraction of a millisecond to load: docs/benchmarks.md has the figure; a zygote's forks
none):

    record.py       the record the host reads, each line described where it is written
    lifeline.py     the lifeline to the host, and the PID namespace nothing the candidate starts outlives
    sandbox.py      the kernel's sandbox: network namespace, seccomp, Landlock, no capabilities
    namespaces.py   the namespaces a candidate's process makes (network, PID), and entering a zygote's
    guard.py        the import guard, installed before the candidate's code runs
    failures.py     how the candidate's exceptions are told, and its output flushed toward its caps
    assertions.py   the candidate's program, then its assertions (HumanEval, MBPP)
    calls.py        its program, then its entry point called on each input (HumanEval+, call-based tests)
    forked_runs.py  stdin tests: the program as a script on each test's input, a fork of this process
                    per test; and the steps of a program in another language (a compiler, the program)
    testfile.py     tests that are a test file (unittest, pytest), run after the program as one module
    bigcodebench_harness.py  what BigCodeBench's harness sets up around a task (its process functions)
    values.py       the safe encoding of what is sent, and digests of large values
    warm.py         the zygote (isolation "fork"): one warm interpreter, a fork per candidate

Every import here is paid once per candidate, so only modules the interpreter has already loaded or
built-in modules are used: importing ``json`` alone would add ~6 ms to an ~8 ms start-up, and even
an extension module such as ``_json`` or ``resource`` costs ~0.14 ms to load. (That is why the host
sets this process's resource limits from outside, with prlimit, before letting it run.)
"""

import _thread
import os

# The other sections of this script, each a module beside it (worker/candidate/__init__.py).
from assertions import run
from calls import run_io
from failures import flush_output
from forked_runs import run_steps, run_tests
from guard import guards
from lifeline import contain, die_with_host, start_under_init
from namespaces import new_namespaces
from record import ask, clock, own, send
from sandbox import (
    Plan,
    clear_scratch,
    confine,
    confined,
    missing,
    prepare,
    restrict_calls,
    ruleset,
)
from testfile import run_suite

# Bound now, before any candidate code runs, so a candidate that reassigns os.write or os._exit
# cannot keep the runner from reporting or from exiting.
_write, _read, _exit, _getpid = os.write, os.read, os._exit, os.getpid


# ---- the harnesses: how the program runs, and what it records -------------------------------------
#
# The host names one (worker/process/runner.py, Harness) and what it is `given`. Each makes the call that
# runs the program its way, with what writes its own lines of the record, for main() to make: main() calls
# the runner itself (assertions.py's, calls.py's, forked_runs.py's, testfile.py's), so that the candidate's code runs as
# many frames deep whatever its harness (a recursion limit meets every program alike). The call returns
# the "finished" line's outcome, detail and message, and the assertions' entries where there are any.


def _assertions(candidate: str, given: list, record: tuple, _: tuple) -> tuple:
    """The program, then each assertion in the namespace it leaves (assertions.py); "value" lines."""
    return run, (candidate, given, lambda *value: ask(*record, *value))


def _calls(candidate: str, given: dict, record: tuple, _: tuple) -> tuple:
    """The program, then its entry point called on each input of each check (calls.py); "check" lines."""

    def report(name: str, outputs: list, stopped: str | None) -> None:
        send(*record, "check", name=name, outputs=outputs, stopped=stopped)

    return run_io, (candidate, given, report)


def _forks(candidate: str, given: dict, record: tuple, sandboxed: tuple) -> tuple:
    """A confined fork of this process per test: the program as a script on a stdin test's input (run_tests()),
    or a step of another language's program, a compiler or the program (run_steps()); "starting" and "test"
    lines."""
    plan, rules, protections = sandboxed
    # kill(-1) between tests is this namespace's only where the runner is its second process.
    contained = protections["pid_namespace"] == "on" and _getpid() == 2

    def starting(index: int) -> None:
        send(*record, "starting", stamp=True, index=index)

    def report(index: int, ended: str, detail: str, printed: tuple, status: int | None, *times: int) -> bool:
        fields = {"ended": ended, "detail": detail, "stdout": printed[0], "stderr": printed[1], "status": status}
        times_of = dict(zip(("ns", "began", "clock"), times, strict=True)) | {"waited": clock()["waited"]}
        send(*record, "test", index=index, **times_of, **fields)
        return _read(record[0], 1) == b"c"

    confinement = (plan, rules, {name: protections[name] for name in ("filesystem", "signals", "capabilities")})
    if "steps" in given:
        return run_steps, (given, contained, confinement, starting, report)
    return run_tests, (candidate, given, contained, confinement, starting, report)


def _suite(candidate: str, given: dict, record: tuple, _: tuple) -> tuple:
    """The program and a test file as one module, then the file's tests (testfile.py); "unit" lines."""

    def report(name: str, ended: str, detail: str) -> None:
        send(*record, "unit", name=name, ended=ended, detail=detail)

    return run_suite, (candidate, given, report)


HARNESSES = {"assertions": _assertions, "calls": _calls, "stdin": _forks, "steps": _forks, "suite": _suite}
_CONFINED_PER_TEST = {"stdin", "steps"}  # runs none of the program in this process: each test's process is confined


def main(
    candidate: str,
    harness: str,
    given: object,
    denied: list[str],
    nonce: str,
    record_fd: int,
    lifeline_fd: int,
    pid_namespace: str,
    sandbox: str,
    seccomp: bytes | None = None,
    script: str | None = None,
    forked: tuple | None = None,
    posture: str = "strict",
    toolchains: tuple = (),
    stack: int | None = None,
) -> None:
    """Run the candidate and write the record; never returns. `harness`: how the program runs (HARNESSES),
    with `given`: the assertions, each whole or split (assertions.py), the checks' inputs (calls), the tests'
    inputs (stdin), or the test file (suite). `pid_namespace`, `sandbox`: the settings ("auto": where the
    kernel allows, "require", "off"). `seccomp`: a fresh interpreter's system call filter, which the host
    builds (worker/process/seccomp.py, seccomp_filter()); a zygote's forks have it attached already.
    `script`: the file a fresh interpreter was started on, removed first (it holds the nonce; the candidate
    has no business reading it). `forked`: what the zygote that forked this process made for it (warm.py,
    become_candidate()), else None. `posture`: the sandbox's (sandbox.py: "strict", "relaxed", or "programs"
    with its `toolchains`), which a zygote's forks have from it. `stack`: a fresh interpreter's stack limit,
    which it sets itself (the host sets every other limit, and a fork's stack limit, with prlimit)."""
    if script is not None:
        os.unlink(script)
    # The host sets our resource limits (prlimit), then sends "g" down the lifeline: no candidate
    # code runs before they are in place. b"" instead means the host is gone already.
    if _read(lifeline_fd, 1) != b"g":
        _exit(1)
    if forked is None:  # a fresh interpreter: the namespaces and the system call filter are ours to make
        if stack is not None:
            import resource

            resource.setrlimit(resource.RLIMIT_STACK, (stack, stack))
        protections = new_namespaces(pid_namespace != "off", sandbox != "off", posture == "relaxed")
        plan = prepare(sandbox, seccomp, posture, toolchains)
        protections["syscalls"] = restrict_calls(plan)
        rules = ruleset(plan, ".")
        if isinstance(plan, Plan):
            plan.close()
        install_guards = None
        if protections["pid_namespace"] == "on":
            contain(lifeline_fd)
    else:
        protections, plan, rules, install_guards = forked
        if protections["pid_namespace"] == "on":
            start_under_init(lifeline_fd)
    clear_scratch(plan)  # a zygote's, shared by its candidates one after another
    # In the candidate's own process from here, but where the harness confines each test's process instead.
    protections |= confined(plan, rules) if harness in _CONFINED_PER_TEST else confine(plan, rules)
    absent = missing(protections, pid_namespace, sandbox)
    if absent:
        _write(2, f"codeexec: required, and not in place: {', '.join(absent)}\n".encode())
        _exit(1)
    if protections["pid_namespace"] != "on":
        _thread.start_new_thread(die_with_host, (lifeline_fd,))
    (install_guards or guards(denied))()
    own()
    send(record_fd, nonce, "started", stamp=True, protections=protections)

    runner, arguments = HARNESSES[harness](candidate, given, (record_fd, nonce), (plan, rules, protections))
    outcome, detail, message, *entries = runner(*arguments)
    results = entries[0] if entries else []

    # Everything the candidate printed must reach the host (and its output cap) before the verdict.
    flush_output()
    send(record_fd, nonce, "finished", stamp=True, outcome=outcome, detail=detail, message=message, assertions=results)
    # Not sys.exit: lingering threads, atexit hooks and children of the candidate must not delay
    # the verdict. The host kills whatever is left.
    _exit(0)
