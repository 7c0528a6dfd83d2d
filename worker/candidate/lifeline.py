"""Nothing the candidate starts outlives the host: the lifeline (the candidate's process tree killed as soon as
the host is gone) and, where the kernel allows one, a PID namespace of the candidate's own under an init.
Loaded by path in the candidate's interpreter (worker/candidate/__init__.py); child.py's main() and the zygote
(warm.py) use it.
"""

import _signal
import os
from _signal import SIGKILL

# Bound now, before any candidate code runs, so a candidate that reassigns them changes nothing here.
_read, _exit, _kill, _listdir = os.read, os._exit, os.kill, os.listdir


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
