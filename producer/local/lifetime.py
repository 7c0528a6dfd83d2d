"""The processes codeexec starts for itself (the private Valkey, local workers) end with the process
that started them, however it ends: the command, or the resident that keeps them warm between
commands (producer/local/resident.py), which a command's Ctrl-C or SIGTERM stops in turn.

- SIGTERM (what `kill`, systemd and `docker stop` send) is handled like Ctrl-C: the command unwinds,
  and its `finally` blocks stop its workers and its server in order.
- A command that cannot unwind (SIGKILL, the OOM killer, a crash) takes its children with it through
  the kernel: each child is started with a parent-death signal (Linux PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from types import FrameType

from codeexec.worker.process.proctree import prctl

_PR_SET_PDEATHSIG = 1


class Stopped(KeyboardInterrupt):
    """The command was asked to stop by a signal other than Ctrl-C's."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def stop_on_sigterm() -> None:
    """Unwind on the first SIGTERM as on Ctrl-C; a second one ends the command at once (the children
    still go, by their parent-death signal)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        signal.signal(signum, signal.SIG_DFL)
        raise Stopped(signum)

    signal.signal(signal.SIGTERM, stop)


def dies_with_parent(signum: int) -> Callable[[], None]:
    """A preexec_fn: the child gets `signum` when this process (the thread starting it) ends."""
    parent = os.getpid()

    def arm() -> None:
        prctl(_PR_SET_PDEATHSIG, signum)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return arm
