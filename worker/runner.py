"""Run one candidate program against its assertions (or, for HumanEval+, on its inputs: the outputs
come back in the RunResult's checks for worker/evalplus.py to judge), in a process of its own.

The host side of the runner. For each candidate it makes a temporary directory and starts the
candidate's process with a minimal environment and closed stdin: forked from a warm zygote
(isolation "fork", worker/zygote.py), or a fresh interpreter on a script that loads worker/child.py
and calls its main() (isolation "fresh"). It then watches three descriptors — its stdout, its stderr and
its private record socket — with poll() against a deadline (worker/timelimit.py). Whatever happens,
the candidate's whole process tree is killed and reaped before the RunResult is returned.
"""

from __future__ import annotations

import fcntl
import logging
import math
import os
import re
import resource
import secrets
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from worker.proctree import CandidateTree
from worker.result import AssertionOutcome, Check, Outcome, RunResult
from worker.sandbox import seccomp_filter
from worker.settings import MAX_TIMEOUT_S, MIN_TIMEOUT_S, RunnerConfig, runner_config
from worker.split import Split, judge, split, test
from worker.timelimit import Limit
from worker.zygote import LOST as ZYGOTE_LOST
from worker.zygote import Forked, ZygoteLost, zygote

__all__ = [
    "AssertionOutcome",
    "Outcome",
    "RunResult",
    "extract_code",
    "run_candidate",
    "score_code_exec",
    "unclosed_fence",
]

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<ticks>`{3,})(?P<info>[^`\n]*)$")
_RECORD_BYTES = 16 << 20
_TAIL_CHARS = 600
log = logging.getLogger(__name__)


def extract_code(text: str) -> str | None:
    """The first fenced code block of a model's answer, the whole text if it has no fence, or None.

    A fence is a line of three or more backticks, optionally indented and followed by a language
    tag; it closes at a line of at least as many backticks. None means a fence was opened and never
    closed (typically a generation cut off by its token limit): such an answer is not run at all.
    """
    lines = text.splitlines()
    for start, line in enumerate(lines):
        opening = _FENCE.match(line)
        if opening is None:
            continue
        indent, ticks = len(opening["indent"]), len(opening["ticks"])
        for end in range(start + 1, len(lines)):
            closing = _FENCE.match(lines[end])
            if closing and len(closing["ticks"]) >= ticks and not closing["info"].strip():
                body = lines[start + 1 : end]
                return "\n".join(_strip_indent(row, indent) for row in body) + ("\n" if body else "")
        return None
    return text


def _strip_indent(line: str, width: int) -> str:
    """Remove up to `width` leading spaces, as CommonMark does inside an indented fence."""
    return line[min(width, len(line) - len(line.lstrip(" "))) :]


def clamp_timeout(timeout_s: float) -> float:
    if math.isnan(timeout_s):
        raise ValueError("timeout_s is NaN")
    return min(max(float(timeout_s), MIN_TIMEOUT_S), MAX_TIMEOUT_S)


def score_code_exec(generation: str, assertions: Sequence[str], timeout_s: float = 3.0, **limits: object) -> RunResult:
    """Extract the code from a model's answer (see extract_code), then run it (see run_candidate)."""
    code = extract_code(generation)
    if code is None:
        return unclosed_fence(len(assertions))
    return run_candidate(code, assertions, timeout_s, **limits)


def unclosed_fence(total: int) -> RunResult:
    """The result of an answer whose code fence never closes: a syntax error, and nothing was run."""
    return RunResult(
        exit_code=Outcome.SYNTAX_ERROR,
        score=0.0,
        passed=0,
        total=total,
        detail="a ``` code fence is never closed; nothing was run",
    )


def run_candidate(
    code: str, assertions: Sequence[str], timeout_s: float = 3.0, io: dict | None = None, **limits: object
) -> RunResult:
    """Run `code`, then each assertion in the namespace it leaves; never raises for what the code does.

    `timeout_s` is clamped to [0.1, 30] and counts from the moment the candidate starts. `limits`
    override the RunnerConfig fields of the settings (memory_bytes=..., interpreter=..., ...); an
    unknown name is a TypeError. `io`: call the program on inputs instead (worker/evalplus.py builds
    it, and the timeout, which is not clamped: its checks' budgets are EvalPlus's, up to a minute each).
    """
    config = runner_config(**limits)
    timeout = clamp_timeout(timeout_s) if io is None else max(timeout_s, MIN_TIMEOUT_S)
    assertions = list(assertions)
    began = time.monotonic()
    try:
        workdir = tempfile.mkdtemp(prefix="codeexec-")
    except OSError as exc:  # no temporary directory: the machine, not the candidate
        ending = _Ending(Outcome.INFRA_ERROR, f"could not prepare the run: {exc}")
    else:
        try:
            ending = _run_in(workdir, code, assertions, timeout, config, io)
        except OSError as exc:  # no pipes, no room for the script
            ending = _Ending(Outcome.INFRA_ERROR, f"could not prepare the run: {exc}")
        finally:
            _remove(workdir)
    return ending.result(len(assertions), time.monotonic() - began)


def _remove(workdir: str) -> None:
    """Remove the candidate's directory. It is usually empty (the child deletes its script), and a
    bare rmdir costs a tenth of what shutil.rmtree does."""
    try:
        os.rmdir(workdir)
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class _Ending:
    outcome: Outcome
    detail: str
    assertions: list[AssertionOutcome] = field(default_factory=list)
    message: str | None = None
    charged_s: float = 0.0
    wall_clock_only: bool = False
    protections: dict[str, str] = field(default_factory=dict)
    checks: dict[str, Check] = field(default_factory=dict)

    def result(self, total: int, duration_s: float) -> RunResult:
        passed = sum(a.passed for a in self.assertions)
        if self.outcome in (Outcome.PASS, Outcome.ASSERTION_FAIL, Outcome.ERROR) and self.assertions:
            score = passed / total
        else:
            score = 1.0 if self.outcome is Outcome.PASS else 0.0
            passed = total if self.outcome is Outcome.PASS else 0
        return RunResult(
            exit_code=self.outcome,
            score=score,
            passed=passed,
            total=total,
            detail=self.detail,
            message=self.message,
            duration_s=duration_s,
            charged_s=self.charged_s,
            wall_clock_only=self.wall_clock_only,
            assertions=self.assertions,
            protections=self.protections,
            checks=self.checks,
        )


class _ChildRecord(BaseModel):
    """One line of the child's record socket; worker/child.py describes them."""

    nonce: str
    event: Literal["started", "check", "value", "finished"]
    clock: int = 0
    waited: int | None = None
    outcome: Literal["pass", "assertion_fail", "syntax_error", "error"] | None = None
    detail: str = ""
    message: str | None = None
    assertions: list[list[Any]] = []
    protections: dict[str, str] = {}
    name: str = ""
    outputs: list[tuple[str, Any, str, int]] = []
    stopped: str | None = None
    index: int = -1
    value: tuple[str, Any, str] | None = None


@lru_cache(maxsize=2)
def _script_head(entry: str) -> str:
    """The start of every runner script and of the zygote: load worker/child.py by itself (as module
    `child`) and take `entry` from it.

    Importing rather than pasting its text lets the interpreter reuse its cached bytecode (written
    by the first child, or by pip at install time): compiling the source anew would cost every
    candidate about a millisecond.
    """
    here = str(Path(__file__).parent)
    # sys.path[0] is the script's directory, the candidate's: it never stays on sys.path (as under -I).
    return f"import sys\nsys.path[0] = {here!r}\nfrom child import {entry}\ndel sys.path[0]\n"


def _environment(config: RunnerConfig) -> dict[str, str]:
    """What every candidate's environment holds, whatever its directory (what -I gives, but for
    PYTHONHASHSEED: no PYTHON* variable of the worker's, nothing else of its environment)."""
    return {
        "PYTHONHASHSEED": str(config.hash_seed),
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
    }


def _run_in(
    workdir: str, code: str, assertions: list[str], timeout: float, config: RunnerConfig, io: dict | None
) -> _Ending:
    nonce = secrets.token_hex(16)
    splits = [split(text) for text in assertions]
    tree = CandidateTree()
    own = {"HOME": workdir, "TMPDIR": workdir, **tree.environment}  # this candidate's part of its environment
    # -s: no user site-packages; the script head keeps its directory off sys.path.
    command = [config.interpreter, "-s", *config.interpreter_flags]
    denied = sorted(config.denied_modules)
    # child.main()'s arguments but the descriptors, whichever way its process starts.
    arguments = {
        "candidate": code,
        # Each assertion as it is, or split: the constant stays here (worker/split.py).
        "assertions": [
            text if cut is None else [cut.prelude, cut.expression, *([cut.asks] if cut.asks else [])]
            for text, cut in zip(assertions, splits, strict=True)
        ],
        "denied": denied,
        "nonce": nonce,
        "pid_namespace": config.pid_namespace,
        "sandbox": config.sandbox,
        **({"io": io} if io is not None else {}),
    }
    opened: list[int] = []
    try:
        for make in (os.pipe, os.pipe, _socketpair, os.pipe):  # the record goes both ways ("value" lines)
            opened.extend(make())
        stdout_r, stdout_w, stderr_r, stderr_w, record_r, record_w, lifeline_r, lifeline_w = opened
        theirs = [stdout_w, stderr_w, record_w, lifeline_r]
        with ExitStack() as held:
            root: subprocess.Popen[bytes] | Forked
            try:
                if config.isolation == "fork":
                    nest = config.pid_namespace != "off"
                    warm = held.enter_context(
                        zygote(command, _script_head("serve"), _environment(config), nest, denied, config.sandbox)
                    )
                    root = Forked(warm, warm.fork(workdir, own, arguments, theirs))
                    tree.started(root, inherited=warm.token)
                else:
                    root = _start_fresh(command, workdir, own, arguments, theirs, config)
                    tree.started(root)
            except ZygoteLost as exc:
                return _Ending(Outcome.INFRA_ERROR, f"the runner script did not start: {exc}")
            except OSError as exc:  # interpreter missing, cannot fork, out of descriptors
                return _Ending(Outcome.INFRA_ERROR, f"could not start {config.interpreter}: {exc}")
            for fd in theirs:
                os.close(fd)
                opened.remove(fd)
            watch = None
            try:
                _limit(root.pid, config)
                try:
                    os.write(lifeline_w, b"g")  # the child waits for this before it runs anything of the candidate
                except BrokenPipeError:  # it has ended already: the watch reads how
                    pass
                watch = _Watch(root, stdout_r, stderr_r, record_r, nonce, timeout, config, splits)
                ending = watch.run()
                ending.protections, ending.checks = watch.protections, watch.checks
            finally:
                tree.kill(contained=watch is not None and watch.contained)
            if isinstance(root, Forked) and root.lost:
                return _Ending(Outcome.INFRA_ERROR, f"{ZYGOTE_LOST}: {root.lost}")
            return ending
    finally:
        for fd in opened:
            os.close(fd)


def _socketpair() -> tuple[int, int]:
    """The record socket: ours asks the kernel for the sender's credentials with every message."""
    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    return ours.detach(), theirs.detach()


_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid
_CREDENTIALS_SPACE = socket.CMSG_SPACE(_CREDENTIALS.size)


def _queued(fd: int) -> int:
    """Bytes waiting to be read on a pipe or a unix socket (FIONREAD)."""
    return int.from_bytes(fcntl.ioctl(fd, termios.FIONREAD, bytes(4)), sys.byteorder, signed=True)


def _sender(ancillary: list[tuple[int, int, bytes]]) -> int | None:
    """The pid (in our PID namespace) of the process that wrote what came with `ancillary`."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS and len(data) >= _CREDENTIALS.size:
            return _CREDENTIALS.unpack_from(data)[0]
    return None


def _start_fresh(
    command: list[str],
    workdir: str,
    own: dict[str, str],
    arguments: dict[str, object],
    fds: list[int],
    config: RunnerConfig,
) -> subprocess.Popen[bytes]:
    """Isolation "fresh": a new interpreter for this candidate, on a script that calls child.main()."""
    stdout_w, stderr_w, record_w, lifeline_r = fds
    # The system call filter goes to the fresh interpreter only: a zygote attaches it once (worker/zygote.py).
    call = (
        f"main(**{arguments!r}, record_fd={record_w}, lifeline_fd={lifeline_r}, seccomp={seccomp_filter()!r}, "
        "script=sys.argv[0])\n"
    )
    script = os.path.join(workdir, ".codeexec_runner.py")
    with open(script, "w", encoding="utf-8") as out:
        out.write(_script_head("main") + call)
    return subprocess.Popen(
        [*command, script],
        cwd=workdir,
        env=_environment(config) | own,
        stdin=subprocess.DEVNULL,
        stdout=stdout_w,
        stderr=stderr_w,
        pass_fds=(record_w, lifeline_r),
        start_new_session=True,
    )


def _limit(pid: int, config: RunnerConfig) -> None:
    """Set the child's resource limits from here (the child need not load the resource module)."""
    limits = {
        resource.RLIMIT_AS: config.memory_bytes,
        resource.RLIMIT_FSIZE: config.file_size_bytes,
        resource.RLIMIT_NOFILE: config.open_files,
        resource.RLIMIT_CORE: config.core_bytes,
    }
    for which, value in limits.items():
        if value is None:
            continue
        _, hard = resource.getrlimit(which)  # the child inherited ours
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        try:
            resource.prlimit(pid, which, (value, value))
        except ProcessLookupError:  # it died already: the watch will say how
            return


class _Watch:
    """Reads the child's three pipes until it finishes, ends, overflows or runs out of time."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes] | Forked,
        stdout_fd: int,
        stderr_fd: int,
        record_fd: int,
        nonce: str,
        timeout: float,
        config: RunnerConfig,
        splits: list[Split | None],
    ) -> None:
        self.proc, self.nonce, self.timeout, self.config = proc, nonce, timeout, config
        self.splits = splits
        self.stdout_fd, self.stderr_fd, self.record_fd = stdout_fd, stderr_fd, record_fd
        self.open_fds = [self.stdout_fd, self.stderr_fd, self.record_fd]  # the order data is handled in
        self.stdout_bytes = self.stderr_bytes = 0
        self.stderr_tail = b""
        self.record = b""
        # The candidate's own process, by its pid in ours: the first to write to the record socket. Its
        # "started" line comes before any of the candidate's code runs, so nothing else can be first;
        # what any other process writes (one forked from it, worker/child.py) is read and dropped.
        # Its pid cannot name another process while the host reads: without a PID namespace it stays
        # unreaped until the drain is over (the host or the zygote reaps it, when asked); in one, its
        # init exits as soon as it reaps it, and the kernel kills the namespace with it.
        self.own: int | None = None
        self.contained = False
        self.protections: dict[str, str] = {}
        self.checks: dict[str, Check] = {}
        self.asked: dict[int, tuple[str, Any, str]] = {}  # "value" lines answered, by assertion
        self.limit: Limit | None = None  # set once the child has started
        self.deadline = time.monotonic() + config.startup_timeout_s
        # What one read takes: a pipe's capacity, so that a read that fills it finds the pipe full.
        self.read_size = {fd: fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) for fd in (stdout_fd, stderr_fd)}
        self.read_size[record_fd] = 1 << 16
        self.woke = (time.monotonic(), 0)  # when poll() last returned, and this thread's CPU wait in it (ns)

    def run(self) -> _Ending:
        poller = select.poll()
        for fd in self.open_fds:
            os.set_blocking(fd, False)
            poller.register(fd, select.POLLIN)
        self.record_sock = socket.socket(fileno=self.record_fd)
        try:
            self.schedstat: int | None = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:  # no figure: only the time since poll() returned counts as late
            self.schedstat = None
        try:
            return self._watch(poller)
        finally:
            self.record_sock.detach()  # the descriptor is the runner's to close
            if self.schedstat is not None:
                os.close(self.schedstat)

    def _watch(self, poller: select.poll) -> _Ending:
        try:
            pidfd: int | None = os.pidfd_open(self.proc.pid)
            poller.register(pidfd, select.POLLIN)
        except (AttributeError, OSError):  # no pidfd (old kernel): notice the exit by polling often
            pidfd = None
        try:
            while True:
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    # Whatever arrived meanwhile first (on a busy machine this process is late too),
                    # then whether the candidate is owed more time. A "finished" record written by now
                    # is judged by the clock it carries, however late it is read; the child reads that
                    # clock once the line is ready to write, so a record not written yet is a
                    # candidate still running at its deadline.
                    ending = self._drain(poller)
                    if ending:
                        return ending
                    later = self.limit.next_deadline(time.monotonic()) if self.limit else None
                    if later is None:
                        return self._out_of_time()
                    self.deadline = later
                    continue
                wait_ms = remaining * 1000 if pidfd is not None else min(remaining * 1000, 50)
                before = self._cpu_wait()
                ready = {fd for fd, _ in poller.poll(wait_ms)}
                self.woke = time.monotonic(), self._cpu_wait() - before
                for fd in [fd for fd in self.open_fds if fd in ready]:
                    ending = self._read(fd, poller)
                    if ending:
                        return ending
                if pidfd in ready or (pidfd is None and self.proc.poll() is not None):
                    return self._exited(poller)
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def _read(self, fd: int, poller: select.poll, drain: bool = False) -> _Ending | None:
        """Handle one read of what fd has to give, or when draining, all it held when the drain began
        (what arrives meanwhile, from a process that keeps writing, waits); an _Ending once the run is
        decided."""
        size = self.read_size[fd]
        left = _queued(fd) if drain else size
        while fd in self.open_fds and left > 0:
            sender = None
            try:
                if fd == self.record_fd:
                    chunk, ancillary, _, _ = self.record_sock.recvmsg(min(left, size), _CREDENTIALS_SPACE)
                    sender = _sender(ancillary)  # one writer's bytes per read: the kernel never joins two
                else:
                    chunk = os.read(fd, min(left, size))
            except BlockingIOError:
                return None
            if not chunk:
                self.open_fds.remove(fd)
                poller.unregister(fd)
                return None
            left = left - len(chunk) if drain else 0
            if fd == self.record_fd:
                self.own = self.own or sender
                if sender is None or sender != self.own:
                    continue
            ending = self._handle(fd, chunk, poller)
            if ending:
                return ending
        return None

    def _handle(self, fd: int, chunk: bytes, poller: select.poll) -> _Ending | None:
        if fd != self.record_fd and len(chunk) == self.read_size[fd]:
            self._late()  # the pipe was full: its writer may have been waiting for room
        if fd == self.stdout_fd:
            self.stdout_bytes += len(chunk)
            if self.stdout_bytes > self.config.output_bytes:
                return _Ending(Outcome.ERROR, "output overflow")
            return None
        if fd == self.stderr_fd:
            self.stderr_bytes += len(chunk)
            self.stderr_tail = (self.stderr_tail + chunk)[-4 * _TAIL_CHARS :]
            if self.stderr_bytes > self.config.stderr_bytes:
                return _Ending(Outcome.ERROR, "output overflow (stderr)")
            return None
        self.record += chunk
        if len(self.record) > _RECORD_BYTES:
            return _Ending(Outcome.ERROR, "the record socket overflowed: the candidate wrote to it")
        *lines, self.record = self.record.split(b"\n")
        for line in lines:
            try:
                record = _ChildRecord.model_validate_json(line)
            except ValidationError:
                continue
            if record.nonce != self.nonce:
                continue
            if record.event == "started" and self.limit is None:
                self._started(record)
            elif record.event == "check" and self.limit is not None:
                self.checks[record.name] = Check(outputs=record.outputs, stopped=record.stopped)
            elif record.event == "value" and self.limit is not None:
                self._answer(record)
            elif record.event == "finished" and self.limit is not None:
                # The child flushed its output before writing this: what any of the candidate's
                # processes wrote before it is in the pipes now, and counts against the caps
                # (tests/test_record.py). A fork still writing meanwhile races with the record, as it
                # would on any machine: its output counts as far as it has got.
                for out_fd in (self.stdout_fd, self.stderr_fd):
                    ending = self._read(out_fd, poller, drain=True)
                    if ending:
                        return ending
                return self._verdict(record, self.limit)
        return None

    def _started(self, record: _ChildRecord) -> None:
        """The candidate's clock starts now."""
        start, ceiling = record.clock / 1e9, self.timeout * self.config.wall_ceiling_factor
        self.limit = Limit(self.timeout, ceiling, start, record.waited, self.own)
        self.deadline = start + self.timeout
        self.protections = record.protections
        self.contained = record.protections.get("pid_namespace") == "on"
        for name, state in record.protections.items():
            if state.startswith("refused"):
                _warn_once(f"candidates run without {name}: the kernel {state} (see the README's security section)")
        if self.limit.wall_clock_only:
            _warn_once("the kernel gives no CPU-wait figure (/proc/<pid>/schedstat): time limits count wall time")

    def _answer(self, record: _ChildRecord) -> None:
        """Test the value of an assertion whose message the child evaluates only if the test fails, and
        say how it went (worker/child.py, "value"). Only the first value of each such assertion is
        answered and judged: a candidate that sends one itself learns nothing before it is bound by it."""
        index = record.index
        cut = self.splits[index] if 0 <= index < len(self.splits) else None
        if cut is None or not cut.asks or index in self.asked or record.value is None:
            return
        self.asked[index] = record.value
        raised = test(cut, record.value)
        answer = b"p" if raised is None else b"m" if isinstance(raised, AssertionError) else b"x"
        try:
            os.write(self.record_fd, answer)
        except OSError:  # gone, or not reading what it is sent: it waits for nothing, or for its deadline
            pass
        self._late()

    def _late(self) -> None:
        """The candidate's process may be waiting on this one: charge it none of the time we were late
        (worker/timelimit.py), that is our wait for a CPU in the poll() that woke us, and our time since
        (or since the last time this was counted, for that wake-up)."""
        now = time.monotonic()
        if self.limit is not None:
            at, waited_ns = self.woke
            self.limit.pause(at - waited_ns / 1e9, now)
        self.woke = (now, 0)

    def _cpu_wait(self) -> int:
        """How long this thread has waited for a CPU, in ns (its schedstat's second field; 0: no figure)."""
        if self.schedstat is None:
            return 0
        try:
            return int(os.pread(self.schedstat, 128, 0).split()[1])
        except (OSError, IndexError, ValueError):
            return 0

    def _drain(self, poller: select.poll) -> _Ending | None:
        for fd in list(self.open_fds):
            ending = self._read(fd, poller, drain=True)
            if ending:
                return self._charge(ending)
        return None

    def _verdict(self, record: _ChildRecord, limit: Limit) -> _Ending:
        charged = limit.charged(record.clock / 1e9, record.waited)
        if charged > limit.timeout:  # it finished, but past its time: this process was late to look
            return self._charge(_Ending(Outcome.TIMEOUT, f"timed out after {self.timeout:g} s"), charged)
        if record.outcome in ("pass", "assertion_fail") and len(record.assertions) != len(self.splits):
            detail = "the record names other assertions than the runner's: something other than the runner wrote it"
            return self._charge(_Ending(Outcome.ERROR, detail), charged)
        # (An error or a syntax error may have stopped before the last assertion.)
        judged = [
            judge(cut, entry, self.asked.get(index))
            for index, (cut, entry) in enumerate(zip(self.splits, record.assertions, strict=False))
        ]
        assertions = [outcome for outcome, _ in judged]
        outcome, detail, message = Outcome(record.outcome), record.detail, record.message
        if outcome in (Outcome.PASS, Outcome.ASSERTION_FAIL):  # the host's comparisons count too
            first = next((index for index, done in enumerate(assertions) if not done.passed), None)
            outcome, detail, message = Outcome.PASS, "", None
            if first is not None:
                outcome = Outcome.ASSERTION_FAIL
                detail = f"assertion {first + 1} of {len(assertions)} failed: {assertions[first].error}"
                # The child's message is its own first failure's, which is this one unless the host found it.
                message = record.message if judged[first][1] is None else judged[first][1]
        return self._charge(_Ending(outcome, detail, assertions, message), charged)

    def _charge(self, ending: _Ending, charged: float | None = None) -> _Ending:
        """Note on the ending the time the candidate was charged (by now, unless given)."""
        if self.limit is not None:
            ending.charged_s = self.limit.charged_now(time.monotonic()) if charged is None else charged
            ending.wall_clock_only = self.limit.wall_clock_only
        return ending

    def _exited(self, poller: select.poll) -> _Ending:
        # What the candidate's process wrote before it ended is in the pipes and the socket: its record
        # decides, whether the host saw the exit or the record first.
        ending = self._drain(poller)
        if ending:
            return ending
        how = _describe_status(self.proc.wait())
        if self.limit is None:
            return _Ending(Outcome.INFRA_ERROR, f"the runner script did not start: {how}{self._stderr()}")
        return self._charge(_Ending(Outcome.ERROR, f"the interpreter {how} before the runner finished{self._stderr()}"))

    def _out_of_time(self) -> _Ending:
        limit = self.limit
        if limit is None:
            return _Ending(
                Outcome.INFRA_ERROR,
                f"the interpreter did not start within {self.config.startup_timeout_s:g} s{self._stderr()}",
            )
        now = time.monotonic()
        charged = limit.charged_now(now)
        # Which of the two ended it is the wall clock's to say: read again, the charge can come out a
        # little under the limit that ended it (a wait under way at the deadline's reading is added
        # to the kernel's figure only once it ends: timelimit.py).
        if now - limit.start >= limit.ceiling and charged < limit.timeout:  # the ceiling, not the limit
            detail = (
                f"timed out: the wall-clock ceiling of {limit.ceiling:g} s ({self.config.wall_ceiling_factor:g} x the "
                f"limit) ran out after it had run {charged:.2f} s of its {self.timeout:g} s (an overloaded machine)"
            )
        else:
            detail = f"timed out after {self.timeout:g} s"
        return self._charge(_Ending(Outcome.TIMEOUT, detail), charged)

    def _stderr(self) -> str:
        tail = " ".join(self.stderr_tail.decode("utf-8", "replace").split())[-_TAIL_CHARS:]
        return f"; stderr: {tail}" if tail else ""


_reported: set[str] = set()


def _warn_once(message: str) -> None:
    """Log what the kernel refused the runner, once per process."""
    if message not in _reported:
        _reported.add(message)
        log.warning("%s", message)


def _describe_status(status: int) -> str:
    if status >= 0:
        return f"exited with status {status}"
    try:
        name = signal.Signals(-status).name
    except ValueError:
        name = f"signal {-status}"
    return f"was killed by {name}"
