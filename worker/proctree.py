"""Kill and reap every process a candidate started, wherever it went.

A candidate runs as the leader of a session of its own, but its descendants can leave that session
(setsid), and a descendant whose parent dies is re-parented. To lose none of them:

- the host makes itself a child subreaper (Linux prctl), so an orphaned descendant is re-parented to
  the host instead of to init;
- every candidate gets a random token in its environment, which its descendants inherit; an orphan
  the host adopts is the current run's if it carries that token;
- cleanup walks the candidate's tree through /proc while its root lives, SIGKILLs everything, reaps
  the root, then repeats over the adopted orphans until none is left.
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


def kill_tree(root: subprocess.Popen[bytes], token: str) -> None:
    """SIGKILL root and all its descendants, including orphans adopted by this process; reap them."""
    marker = f"{TOKEN_VARIABLE}={token}".encode()
    killed: set[int] = set()
    if root.returncode is None:
        killed = {root.pid, *descendants(root.pid)}
        _sigkill(killed)
        root.wait()
    # Everything the root left behind is now re-parented to us: adopted orphans carry our token;
    # zombies we killed above no longer show an environment but are in `killed`.
    while True:
        adopted = {pid for pid in children("self") if pid in killed or carries_token(pid, marker)}
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
