"""Only the candidate's own process decides its verdict: what a process forked from it writes to the
record socket is never taken (worker/candidate/child.py says who writes the record,
worker/process/watch.py how the host knows the writer).

Each candidate below forks, and each of its forks would, without that, write a record of its own that
races with the candidate's; every one is run hundreds of times, counted, under each supported Python
in both isolation modes, and must give the verdict of the candidate's own process every time.
"""

from __future__ import annotations

import collections
import textwrap
import time

import pytest

from codeexec.protocol.result import Outcome
from codeexec.worker.process import watch
from codeexec.worker.process.runner import run_candidate
from helpers import stress

RUNS = stress(10, 100)  # a Python and isolation each
pytestmark = [pytest.mark.usefixtures("candidate_interpreter", "isolation"), pytest.mark.once]  # stress loops

# Host-compared, host-compared with a message the host answers for during the run (worker/process/split.py),
# and run in the candidate's process: each way an assertion is judged.
ASSERTIONS = ["assert f() == 1", "assert f() == 1, 'f is ' + str(f())", "assert f() in (1,)"]
# A "finished" record that says every assertion passed, with the values a right f() sends (the child's
# own encoding: its `values` module) and the runner's secret, found by a gc search (tests/test_forge.py):
# the host, were it to take it, would judge it a pass. A process forked from the candidate writes it.
FORGE = """
    import gc, json, os, sys
    found = next(
        o for o in gc.get_objects()
        if callable(o) and 'record' in getattr(getattr(o, '__code__', None), 'co_freevars', ())
    )
    cells = dict(zip(found.__code__.co_freevars, (cell.cell_contents for cell in found.__closure__)))
    secret = dict(zip(('record_fd', 'nonce'), cells['record']))
    entry, digest = sys.modules['values'].output_entry(1, 1024)
    claim = [[None, None, *entry, digest], [None, None, *entry, digest], [True, None]]
    line = json.dumps({'nonce': secret['nonce'], 'event': 'finished', 'outcome': 'pass', 'detail': '',
                       'message': None, 'assertions': claim}) + '\\n'
    line = line.encode()
"""

CANDIDATES = {
    # The issue's first: the fork falls through to the end of the module, where its f() is wrong.
    "a fork that runs on": """
        import os
        child = os.fork() == 0
        def f():
            return 2 if child else 1
    """,
    # The issue's second: the sandbox refuses the grandchild's exec, and the PermissionError it raises
    # ends its module code: its record would be an error.
    "a detaching fork whose exec is refused": """
        import os
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv('/bin/sleep', ['sleep', '5'])
            os._exit(0)
        def f():
            return 1
    """,
    # Several forks, each running every assertion (and asking the host about the second) with its own,
    # wrong f(), and ending as the candidate's process would: at the record.
    "forks that each run the assertions": """
        import os
        child = False
        for _ in range(4):
            if os.fork() == 0:
                child = True
                break
        def f():
            return 2 if child else 1
    """,
    # A fork that writes a forged "pass" with the right nonce; the candidate's process waits for it to
    # be written before its own wrong answer is judged.
    "a fork that forges a pass, first": FORGE
    + """
    child = os.fork()
    if child == 0:
        os.write(secret['record_fd'], line)
        os._exit(0)
    os.waitpid(child, 0)
    def f():
        return 2
    """,
}
VERDICTS = {
    "a fork that runs on": Outcome.PASS,
    "a detaching fork whose exec is refused": Outcome.PASS,
    "forks that each run the assertions": Outcome.PASS,
    "a fork that forges a pass, first": Outcome.ASSERTION_FAIL,
}


# The forger of the last candidate, had it the capability to write in the name of the candidate's
# process: it claims that process's pid as its credentials (SCM_CREDENTIALS). The kernel allows the
# claim to a process holding CAP_SYS_ADMIN over its PID namespace, which the candidate's processes
# would hold in the user namespace theirs is made in, but for the sandbox's "capabilities".
CREDENTIAL_FORGE = (
    FORGE
    + """
    import struct
    globals()['__file__'] = os.__file__  # the import guard lets the installed Python's files import socket
    import socket
    child = os.fork()
    if child == 0:
        claim = struct.pack('3i', os.getppid(), os.getuid(), os.getgid())
        sock = socket.socket(fileno=os.dup(secret['record_fd']))
        try:
            sock.sendmsg([line], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, claim)])
        except PermissionError:  # the kernel refuses the claim: a plain write, then
            os.write(secret['record_fd'], line)
        os._exit(0)
    os.waitpid(child, 0)
    def f():
        return 2
"""
)


def verdicts(code: str, runs: int = RUNS, **limits: object) -> collections.Counter[tuple[str, str]]:
    """How often each (outcome, detail) came out of `runs` runs of the candidate."""
    seen: collections.Counter[tuple[str, str]] = collections.Counter()
    for _ in range(runs):
        result = run_candidate(textwrap.dedent(code), ASSERTIONS, 5.0, **limits)
        seen[result.exit_code.value, result.detail] += 1
    return seen


@pytest.mark.parametrize("candidate", list(CANDIDATES))
def test_the_verdict_is_the_candidates_own_every_time(candidate: str) -> None:
    seen = verdicts(CANDIDATES[candidate])
    assert len(seen) == 1 and next(iter(seen))[0] == VERDICTS[candidate], seen


def test_a_fork_cannot_claim_the_candidates_credentials() -> None:
    seen = verdicts(CREDENTIAL_FORGE)
    assert list(seen) == [("assertion_fail", "assertion 1 of 3 failed: AssertionError")], seen
    # The control: with the sandbox off the candidate keeps its capabilities, and the forgery wins.
    assert verdicts(CREDENTIAL_FORGE, 1, sandbox="off") == {("pass", ""): 1}


# ---- what else races with the record ------------------------------------------------------------------
#
# Output that reaches its pipe before the record reaches its socket counts toward the caps, whichever
# the host reads first: the host reads all the pipes hold before it judges a "finished" record. With a
# cap of 1,000 bytes, 1,001 fit in the pipe without waking the host before the record is written.
OUTPUT_BEFORE_THE_RECORD = {
    "the candidate's process": """
        import os
        os.write(1, b'x' * 1001)
        def f():
            return 1
    """,
    "a fork, waited for": """
        import os
        child = os.fork()
        if child == 0:
            os.write(1, b'x' * 1001)
            os._exit(0)
        os.waitpid(child, 0)
        def f():
            return 1
    """,
}


@pytest.mark.parametrize("writer", list(OUTPUT_BEFORE_THE_RECORD))
def test_output_written_before_the_record_counts_every_time(writer: str) -> None:
    seen = verdicts(OUTPUT_BEFORE_THE_RECORD[writer], output_bytes=1000)
    assert seen == {("error", "output overflow"): RUNS}, seen


# The time limit against the host: while the candidate's process waits on the host (for the answer to a
# "value" line, for room in a pipe it filled), the host's lateness is not charged (worker/process/timelimit.py).
# Here the host is made late on purpose, far past the limit: on a busy machine it is late by the
# scheduler's doing, and the charge must not depend on it.
LATE_S = 0.25


def test_the_host_answering_late_is_not_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    answer = watch.test

    def late(*arguments: object) -> object:
        time.sleep(LATE_S)
        return answer(*arguments)

    monkeypatch.setattr(watch, "test", late)
    asking = ["assert f() == 1, 'f is ' + str(f())"] * 4  # each value is answered during the run
    result = run_candidate("def f():\n    return 1\n", asking, 2 * LATE_S)
    assert (result.exit_code, result.detail) == ("pass", ""), result


def test_the_host_reading_a_full_pipe_late_is_not_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    read = watch.Watch._read

    def late(state: watch.Watch, fd: int, poller: object, drain: bool = False) -> object:
        if fd == state.stdout_fd:
            time.sleep(LATE_S / 4)
        return read(state, fd, poller, drain)

    monkeypatch.setattr(watch.Watch, "_read", late)
    # Eight pipefuls: the candidate waits for the host to read each one, LATE_S / 4 late.
    code = "import os\nos.write(1, b'x' * (8 << 16))\ndef f():\n    return 1\n"
    result = run_candidate(code, ["assert f() == 1"], LATE_S, output_bytes=1 << 20)
    assert (result.exit_code, result.detail) == ("pass", ""), result
