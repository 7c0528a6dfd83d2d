"""Isolation "fork": a warm interpreter (a zygote) that forks one process per candidate.

A fresh interpreter per candidate spends most of its time starting Python (~8 ms of CPU for a
trivial candidate); a fork of a warm one costs about a millisecond. The zygote is started from a
clean exec exactly as a fresh candidate interpreter is (same command, same environment but for the
per-candidate HOME, TMPDIR and tree token), loads worker/candidate/warm.py and then only forks: it never runs
candidate code, never installs the guards, holds no state of Celery's or Redis' (it is exec'd, not
forked from the pool process), and its memory stays as it was started (each request allocates a
few bytes and frees them). worker/candidate/warm.py is its side of the protocol.

Each thread that runs candidates takes an idle zygote of the right kind (interpreter, flags,
environment: the hash seed is fixed when an interpreter starts; whether candidates get a PID namespace;
the denied modules, whose guards it builds once; the sandbox setting and posture, whose namespaces and
system call filter are the zygote's own; the modules it preloads, and the prelude it runs for stdin tests) or starts
one, and gives it back after the candidate's tree is gone: in a Celery pool process that is one zygote, started with its
first candidate. A zygote that dies, or answers nonsense, is discarded (the candidate in hand
becomes an infra_error, retried like any other) and the next candidate starts a new one.
"""

from __future__ import annotations

import array
import atexit
import marshal
import os
import secrets
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from codeexec.worker.process.proctree import TOKEN_VARIABLE, forget, spare
from codeexec.worker.process.seccomp import seccomp_filter

#: Where the host writes child.main()'s arguments for the forked process (worker/candidate/warm.py reads it).
CALL_FILE = ".codeexec_call"
#: How the detail of a candidate whose zygote died under it begins (an infra_error).
LOST = "the candidate's zygote was lost"
# How long an answer may take: a fork, or reaping a process that has ended or been SIGKILLed.
_ANSWER_S = 60.0


class ZygoteLost(Exception):
    """The zygote died or stopped answering: the candidate in hand is the machine's failure."""


class Zygote:
    """One zygote process and the host's end of its socket."""

    def __init__(
        self,
        command: list[str],
        head: str,
        env: dict[str, str],
        nest: bool,
        denied: list[str],
        sandbox: str,
        preload: tuple[str, ...] = (),
        prelude: str = "",
        posture: str = "strict",
        toolchains: tuple[str, ...] = (),
    ) -> None:
        """command: the interpreter and its flags; head: the code that imports serve(); nest: put each
        candidate in a PID namespace of its own; denied: the modules its candidates are denied, for
        the guards it prepares; sandbox: the setting; preload: modules it imports before its first fork;
        prelude: the code whose namespace its stdin tests' runners start from (worker/candidate/warm.py);
        posture, toolchains: the sandbox's posture, and the programs posture's toolchain directories
        (worker/candidate/sandbox.py)."""
        # Each candidate's process sets its own tree token (worker/process/proctree.py), but /proc shows a
        # process's environment as it was when its program started: a fork that does not exec shows
        # the zygote's. The zygote's own token makes those known to the cleanup too.
        self.token = secrets.token_hex(8)
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        seccomp = seccomp_filter(posture != "strict")
        try:
            self.process = subprocess.Popen(
                [
                    *command,
                    "-c",
                    f"{head}serve({theirs.fileno()}, {nest}, {denied!r}, {sandbox!r}, {seccomp!r}, "
                    f"{list(preload)!r}, {prelude!r}, {posture!r}, {tuple(toolchains)!r})\n",
                ],
                cwd="/",
                env={**env, TOKEN_VARIABLE: self.token},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                # Out of the worker's process group: Ctrl-C in a terminal is for the worker, which
                # then closes its end of the socket; that ends the zygote.
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        spare(self.process.pid)
        self.sock = ours
        self.sock.settimeout(_ANSWER_S)
        self.broken = False
        answer = self._ask(None)
        if not answer.startswith(b"ready "):
            raise self._lost(f"the zygote answered {answer[:80]!r}")
        # The process that forks the candidates' (the one started here, or its child in namespaces of
        # its own); the zygote's processes are these two.
        self.pids = {self.process.pid, int(answer[6:])}

    def fork(self, workdir: str, variables: dict[str, str], arguments: dict[str, object], fds: list[int]) -> int:
        """Start a candidate's process in workdir, with `variables` added to the zygote's environment and
        stdout, stderr, record and lifeline on `fds`, to run
        child.main(**arguments); its pid."""
        with open(os.path.join(workdir, CALL_FILE), "wb") as call:
            marshal.dump(arguments, call, 4)  # version 4: read by every Python 3.4+
        request = "\0".join(["run " + workdir, *(f"{name}={value}" for name, value in variables.items())]).encode()
        answer = self._ask(request, [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        if not answer.startswith(b"pid "):
            raise self._lost(f"the zygote answered {answer[:80]!r}")
        return int(answer[4:])

    def wait(self, block: bool = True) -> int | None:
        """waitpid() status of the last candidate's process, once it has ended (None: not yet)."""
        answer = self._ask(b"wait" if block else b"poll")
        if answer == b"running":
            return None
        if not answer.startswith(b"status "):
            raise self._lost(f"the zygote answered {answer[:80]!r}")
        return int(answer[7:])

    def _ask(self, request: bytes | None, ancillary: list[tuple[int, int, array.array]] | None = None) -> bytes:
        """Send `request` (None: nothing) and read the answer."""
        if self.broken:
            raise self._lost("the zygote died earlier in this candidate's run")
        try:
            if request is not None:
                self.sock.sendmsg([request], ancillary or [])
            answer = self.sock.recv(4096)
        except TimeoutError as exc:
            raise self._lost(f"the zygote did not answer within {_ANSWER_S:g} s") from exc
        except OSError as exc:  # EPIPE, ECONNRESET: its end is closed
            raise self._lost("the zygote died") from exc
        if not answer:
            raise self._lost("the zygote died")
        return answer

    def _lost(self, why: str) -> ZygoteLost:
        """Mark this zygote unusable and make sure it is gone (reaped): its children are then ours."""
        self.broken = True
        if self.process.poll() is None:
            self.process.kill()
        stderr = self._end()
        status = self.process.returncode
        how = f"exited with status {status}" if status >= 0 else f"was killed by signal {-status}"
        tail = " ".join(stderr.decode("utf-8", "replace").split())[-600:]
        return ZygoteLost(f"{why} (it {how}{'; stderr: ' + tail if tail else ''})")

    def close(self) -> None:
        """End the zygote: it exits when its end of the socket reads empty."""
        self._end()

    def _end(self) -> bytes:
        """Close our end of the socket and reap the zygote (killed if it lingers); what it wrote to stderr."""
        self.sock.close()
        try:
            _, stderr = self.process.communicate(timeout=_ANSWER_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, stderr = self.process.communicate()
        forget(self.process.pid)
        return stderr


class Forked:
    """A candidate's root process forked by a zygote, with what the runner and worker/process/proctree.py ask of a
    subprocess.Popen: pid, returncode, poll(), wait().

    Once its zygote is lost, the process (and whatever else of the candidate's) has been re-parented to
    this process, a child subreaper: it is then reaped here directly, and `lost` says why.
    """

    def __init__(self, zygote: Zygote, pid: int) -> None:
        self.zygote, self.pid = zygote, pid
        self.returncode: int | None = None
        self.lost: str | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._status(block=False)
        return self.returncode

    def wait(self) -> int:
        while self.returncode is None:
            self._status(block=True)
        return self.returncode

    def _status(self, block: bool) -> None:
        if self.lost is None:
            try:
                status = self.zygote.wait(block)
            except ZygoteLost as exc:
                self.lost = str(exc)
            else:
                if status is not None:
                    self.returncode = os.waitstatus_to_exitcode(status)
                return
        # The zygote is reaped (ZygoteLost says so), so this process was re-parented to us before.
        try:
            pid, status = os.waitpid(self.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:  # not ours after all (no subreaper): it is gone, its status with it
            self.returncode = -9
            return
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)


# Idle zygotes with their kind, the most recently used last; a worker keeps a few kinds warm at once
# (runs with different hash seeds, say).
_idle: list[tuple[tuple[object, ...], Zygote]] = []
_lock = threading.Lock()
_MAX_IDLE = 4


@contextmanager
def zygote(
    command: list[str],
    head: str,
    env: dict[str, str],
    nest: bool,
    denied: list[str],
    sandbox: str,
    preload: tuple[str, ...] = (),
    prelude: str = "",
    posture: str = "strict",
    toolchains: tuple[str, ...] = (),
) -> Iterator[Zygote]:
    """An idle zygote of this kind, started if there is none, for one candidate; given back after."""
    env_items = tuple(sorted(env.items()))
    kind = (os.getpid(), tuple(command), env_items, nest, tuple(denied), sandbox, preload, prelude, posture, toolchains)
    found = None
    with _lock:
        # Not a fork's copy of its parent's zygotes, nor one that died while idle (poll() reaps it).
        dead = [warm for key, warm in _idle if key[0] == os.getpid() and warm.process.poll() is not None]
        _idle[:] = [(key, warm) for key, warm in _idle if key[0] == os.getpid() and warm not in dead]
        for at in range(len(_idle) - 1, -1, -1):
            if _idle[at][0] == kind:
                found = _idle.pop(at)[1]
                break
    for warm in dead:
        warm.close()
    found = found or Zygote(command, head, env, nest, denied, sandbox, preload, prelude, posture, toolchains)
    try:
        yield found
    finally:
        if not found.broken:
            with _lock:
                _idle.append((kind, found))
                surplus = _idle.pop(0)[1] if len(_idle) > _MAX_IDLE else None
            if surplus is not None:
                surplus.close()


def idle_pids() -> set[int]:
    """The processes of this process's idle zygotes."""
    with _lock:
        return {pid for kind, warm in _idle if kind[0] == os.getpid() for pid in warm.pids}


def close_idle() -> None:
    """End this process's idle zygotes (the next candidate starts one again)."""
    with _lock:
        ours = [warm for kind, warm in _idle if kind[0] == os.getpid()]
        _idle.clear()
    for warm in ours:
        warm.close()


# A process that ends normally waits for its zygotes to end, rather than leave them to end as orphans
# of whoever adopts them (a subreaper that never reaps them would keep their zombies).
atexit.register(close_idle)
