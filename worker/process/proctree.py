"""Kill and reap every process a candidate started, wherever it went.

Where the kernel allows it, a candidate runs in a PID namespace of its own (worker/candidate/child.py
says how), under the namespace's init. The candidate's root process is the init itself (isolation "fork":
a zygote's child, which the zygote reaps only when the host asks: worker/process/zygote.py) or the keeper
that forked it (isolation "fresh": the host's child), and everything the candidate starts is inside.
That makes cleanup correct by construction: SIGKILL the root's process group (the keeper, the init,
and whatever stayed in the session), reap the root, then reap the init if it was re-parented to us.
The init dies of that SIGKILL; its death makes the kernel SIGKILL everything left in the namespace,
and its exit completes only once the namespace is empty, so reaping it is proof that nothing is
left. The init never leaves the root's session, and getsid() works on a zombie, so it is found
without looking at the candidate's processes at all.

Without a namespace (the kernel refused one, or the setting is off) the same steps are a best
effort: the host is a child subreaper (Linux prctl), so an orphaned descendant comes back to it;
every candidate gets a random token in its environment, which its descendants inherit; cleanup
repeats over the orphans re-parented to the host, identified by session or token, until none is
left. A descendant that leaves the session *and* clears its environment cannot be told from the
host's other children, and is not killed: see docs/security.md.

Cleanup touches no /proc entry of the candidate's processes when it can avoid it: a process whose
/proc directory has been looked up is dearer to reap (the kernel invalidates those dentries under a
lock at exit). With two workers that cost 1.2-1.6 ms of kernel time per candidate, as much as the
rest of the runner together (measured with perf; see docs/benchmarks.md).
"""

from __future__ import annotations

import ctypes
import os
import secrets
import signal
import time
from functools import lru_cache
from typing import Protocol

TOKEN_VARIABLE = "CODEEXEC_TREE"
_PR_SET_CHILD_SUBREAPER = 36
# How long an adopted process may stay undecided (its environment unreadable: between the new
# program's memory and its environment, in exec) before it is left alone.
_UNDECIDED_ROUNDS = 1000


def prctl(option: int, value: int) -> bool:
    """Linux prctl(option, value); False where it is refused or there is none."""
    try:
        return _libc().prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


@lru_cache(maxsize=1)
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@lru_cache(maxsize=1)
def become_subreaper() -> bool:
    """Make orphaned descendants of this process come back to it. Once per process; False if refused."""
    return prctl(_PR_SET_CHILD_SUBREAPER, 1)


def children(pid: int | str) -> list[int]:
    """Direct children of pid, over all its threads (a child belongs to the thread that forked it)."""
    found: list[int] = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as listing:
                found.extend(int(child) for child in listing.read().split())
        except OSError:
            continue
    return found


def descendants(pid: int) -> list[int]:
    found, stack = [], [pid]
    while stack:
        for child in children(stack.pop()):
            found.append(child)
            stack.append(child)
    return found


def _sigkill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def ticks() -> int:
    """Now, in the clock ticks since boot that /proc/<pid>/stat gives a process's start time in."""
    return int(time.clock_gettime(time.CLOCK_BOOTTIME) * _TICKS_PER_S)


_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
# The candidates' root processes this process is running now, from any thread.
_roots: set[int] = set()
# Children of this process that are no candidate's though they may look it: the zygotes, which carry a
# tree token of their own (worker/process/zygote.py).
_spared: set[int] = set()


def spare(pid: int) -> None:
    """Never take this child of ours for a candidate's (until forget())."""
    _spared.add(pid)


def forget(pid: int) -> None:
    _spared.discard(pid)


class Root(Protocol):
    """A candidate's root process as cleanup needs it: a subprocess.Popen, or one a zygote forked."""

    pid: int
    returncode: int | None

    def wait(self) -> int: ...


class CandidateTree:
    """One candidate's processes: from before its root is started until every one of them is reaped."""

    def __init__(self) -> None:
        become_subreaper()
        self.token = secrets.token_hex(8)
        self.markers = {f"{TOKEN_VARIABLE}={self.token}".encode()}
        self.born = ticks()
        self.root: Root | None = None

    @property
    def environment(self) -> dict[str, str]:
        """What the root's environment must hold, for its descendants to inherit."""
        return {TOKEN_VARIABLE: self.token}

    def started(self, root: Root, inherited: str | None = None) -> None:
        """`inherited`: the token in the environment the root was started with, if not this tree's own.
        (A zygote's fork shows the zygote's environment in /proc until it execs: worker/process/zygote.py.)"""
        self.root = root
        _roots.add(root.pid)
        if inherited is not None:
            self.markers.add(f"{TOKEN_VARIABLE}={inherited}".encode())

    def belongs(self, pid: int) -> bool | None:
        """Whether a child of this process is this candidate's: in its session, carrying its token, or
        a zombie born since the candidate was (and no other candidate's root). None: cannot tell yet
        (a process in exec() shows an empty environment for a moment, one exiting an unreadable one)."""
        assert self.root is not None
        try:
            if os.getsid(pid) == self.root.pid:  # a syscall, no /proc lookup; works on zombies too
                return True
        except OSError:
            return False  # reaped meanwhile
        try:
            with open(f"/proc/{pid}/environ", "rb") as environ:
                variables = environ.read()
        except OSError:
            # A zombie's (ESRCH, on some kernels), or one exiting, whose memory is gone: without privilege
            # EACCES, and taking that for "not the candidate's" left its orphans, re-parented to us only
            # once its exit is done, to outlive the run. Its state says (it is a zombie soon).
            variables = b""
        if variables:
            return not self.markers.isdisjoint(variables.split(b"\0"))
        try:
            with open(f"/proc/{pid}/stat", "rb") as stat:
                fields = stat.read().rpartition(b") ")[2].split()
        except OSError:
            return False
        if fields[0] != b"Z":
            return None
        # A zombie has no environment left. One that left the session and exited by itself would
        # otherwise stay a zombie of the host for good; what this takes for the candidate's could only
        # be a child that some other code of this process started during the run and has not reaped.
        return int(fields[19]) >= self.born and pid not in _roots

    def kill(self, contained: bool) -> None:
        """SIGKILL the root and all its descendants, including orphans adopted by this process; reap them.

        `contained`: the candidate runs in a PID namespace of its own (its "started" record says so).
        """
        root = self.root
        if root is None:
            return
        try:
            self._kill(root, contained)
        finally:
            _roots.discard(root.pid)

    def _kill(self, root: Root, contained: bool) -> None:
        # The root leads a session and a process group of its own (start_new_session): killing the
        # group reaches every descendant that did not leave it. A group outlives its leader while
        # members live. Only while the root is unreaped: until then its pid (the group's id) cannot be
        # reused.
        killed: set[int] = set()
        if root.returncode is None:
            # Without a namespace, the tree as it stands is worth its /proc lookups: whatever is in it
            # is the candidate's, whatever it does next.
            killed = set() if contained and become_subreaper() else set(descendants(root.pid))
            _sigkill(killed)
            try:
                os.killpg(root.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            root.wait()
        # What the root left behind was re-parented to us (we are a subreaper), zombies included: the
        # namespace's init, or without a namespace every orphan. Killing an adopted process and
        # reaping it brings its own children back to us in turn: each round reaches a generation deeper.
        undecided_rounds = 0
        while True:
            adopted, undecided = set(), False
            for pid in children("self"):
                if pid in _spared:
                    continue
                belongs = pid in killed or self.belongs(pid)
                if belongs is None:
                    undecided = True
                elif belongs:
                    adopted.add(pid)
            if adopted:
                _sigkill(adopted)
                killed |= adopted
                for pid in adopted:
                    try:
                        os.waitpid(pid, 0)
                    except ChildProcessError:  # reaped by another thread's cleanup meanwhile
                        pass
            elif undecided and undecided_rounds < _UNDECIDED_ROUNDS:
                undecided_rounds += 1
                time.sleep(0.001)
            else:
                return
