"""Kill and reap every process a candidate started, wherever it went.

A candidate runs as the leader of a session of its own, but its descendants can leave that session
(setsid), and a descendant whose parent dies is re-parented. To lose none of them:

- the host makes itself a child subreaper (Linux prctl), so an orphaned descendant is re-parented to
  the host instead of to init;
- every candidate gets a random token in its environment, which its descendants inherit; an orphan
  the host adopts is the current run's if it carries that token;
- cleanup SIGKILLs the candidate's process group (the root and every descendant that stayed in its
  session), reaps the root, then repeats over the orphans re-parented to the host, identified by
  session or token, until none is left. Without a subreaper it walks the tree through /proc first.

Cleanup touches no /proc entry of the candidate's processes when it can avoid it: a process whose
/proc directory has been looked up is dearer to reap (the kernel invalidates those dentries under a
lock at exit). With two workers that cost 1.2-1.6 ms of kernel time per candidate, as much as the
rest of the runner together (measured with perf; see the README's benchmark notes).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from functools import lru_cache

TOKEN_VARIABLE = "CODEEXEC_TREE"
_PR_SET_CHILD_SUBREAPER = 36


@lru_cache(maxsize=1)
def become_subreaper() -> bool:
    """Make orphaned descendants of this process come back to it. Once per process; False if refused."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


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


def carries_token(pid: int, token: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return token in environ.read().split(b"\0")
    except OSError:
        return False


def _sigkill(pids: set[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _is_ours(pid: int, session: int, marker: bytes) -> bool:
    """A child of this process that the candidate started: in its session, or carrying its token."""
    try:
        if os.getsid(pid) == session:  # a syscall, no /proc lookup; works on zombies too
            return True
    except OSError:
        return False
    return carries_token(pid, marker)


def kill_tree(root: subprocess.Popen[bytes], token: str) -> None:
    """SIGKILL root and all its descendants, including orphans adopted by this process; reap them."""
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    # The root leads a session and a process group of its own (start_new_session): killing the group
    # reaches every descendant that did not leave it. A group outlives its leader while members live.
    # Only while the root is unreaped: until then its pid (the group's id) cannot be reused.
    killed: set[int] = set()
    if root.returncode is None:
        killed = set() if become_subreaper() else set(descendants(root.pid))
        _sigkill(killed)
        try:
            os.killpg(root.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        root.wait()
    # What the root left behind is re-parented to us (we are a subreaper), zombies included.
    while True:
        adopted = {pid for pid in children("self") if pid in killed or _is_ours(pid, root.pid, marker)}
        if not adopted:
            return
        for pid in list(adopted):
            adopted.update(descendants(pid))
        _sigkill(adopted)
        killed |= adopted
        for pid in adopted:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:  # not our child (yet): it is re-parented to us once its parent dies
                pass
