"""Watch one candidate's process: read its record, stdout and stderr until it finishes, ends,
overflows its output caps or runs out of time, and make the Ending that the runner turns into its
RunResult.

The record is taken only from the candidate's own process, by the credentials the kernel attaches
to each message on the record socket (worker/candidate/child.py says what it writes). Values of
the assertions the host compares are judged here (split.py), and the host's own lateness while the
candidate waits on it is not charged to it (timelimit.py).
"""

from __future__ import annotations

import fcntl
import logging
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

from codeexec.protocol.result import AssertionOutcome, Check, Outcome, RunResult, TestOutcome
from codeexec.protocol.settings import RunnerConfig
from codeexec.worker.process.split import Split, judge, test
from codeexec.worker.process.timelimit import Limit
from codeexec.worker.process.zygote import Forked

_RECORD_BYTES = 16 << 20
_MOST_UNITS = 10_000  # a test file's tests kept: beyond, a pytest parametrization gone wild
_TAIL_CHARS = 600
log = logging.getLogger(__name__)


@dataclass
class Ending:
    outcome: Outcome
    detail: str
    assertions: list[AssertionOutcome] = field(default_factory=list)
    message: str | None = None
    charged_s: float = 0.0
    wall_clock_only: bool = False
    protections: dict[str, str] = field(default_factory=dict)
    checks: dict[str, Check] = field(default_factory=dict)
    units: list[TestOutcome] = field(default_factory=list)

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
            tests=self.units,
        )


@dataclass(frozen=True)
class TestEnded:
    """A stdin test as its runner saw it end ("test" records: worker/candidate/child.py): how it ended
    ("pass", "error", "limit", "output", "killed"), why, what it printed, the seconds it was charged; and a
    script's stderr, the status its process ended with, and its wall-clock seconds."""

    index: int
    ended: str
    detail: str
    stdout: str
    charged_s: float
    stderr: str = ""
    status: int | None = None
    wall_s: float = 0.0


class _ChildRecord(BaseModel):
    """One line of the child's record socket; worker/candidate/child.py describes them."""

    nonce: str
    event: Literal["started", "check", "value", "starting", "test", "unit", "finished"]
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
    ended: str = ""
    stdout: int = 0
    stderr: int = 0
    status: int | None = None
    ns: int = 0
    began: int = 0


def _taken(chunks: list[bytes], count: int) -> tuple[str, list[bytes]]:
    """The first `count` bytes of what was read, as text, and the rest (what the next test wrote)."""
    written = b"".join(chunks)
    rest = written[count:]
    return written[:count].decode("utf-8", "replace"), [rest] if rest else []


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


class Watch:
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
        on_test: Callable[[TestEnded], bool] | None = None,
    ) -> None:
        self.proc, self.nonce, self.timeout, self.config = proc, nonce, timeout, config
        self.splits, self.on_test = splits, on_test
        self.stdout_fd, self.stderr_fd, self.record_fd = stdout_fd, stderr_fd, record_fd
        self.open_fds = [self.stdout_fd, self.stderr_fd, self.record_fd]  # the order data is handled in
        self.stdout_bytes = self.stderr_bytes = 0
        self.stdout_chunks: list[bytes] = []  # a stdin test's, until its record comes: the caps bound it
        self.stderr_chunks: list[bytes] = []  # the same of a script's stderr
        self.stderr_tail = b""
        self.record = b""
        # The candidate's own process, by its pid in ours: the first to write to the record socket. Its
        # "started" line comes before any of the candidate's code runs, so nothing else can be first;
        # what any other process writes (one forked from it, worker/candidate/child.py) is read and dropped.
        # Its pid cannot name another process while the host reads: without a PID namespace it stays
        # unreaped until the drain is over (the host or the zygote reaps it, when asked); in one, its
        # init exits as soon as it reaps it, and the kernel kills the namespace with it.
        self.own: int | None = None
        self.contained = False
        self.protections: dict[str, str] = {}
        self.checks: dict[str, Check] = {}
        self.units: list[TestOutcome] = []  # a test file's tests, as they end ("unit" lines)
        self.asked: dict[int, tuple[str, Any, str]] = {}  # "value" lines answered, by assertion
        self.limit: Limit | None = None  # set once the child has started
        self.deadline = time.monotonic() + config.startup_timeout_s
        # What one read takes: a pipe's capacity, so that a read that fills it finds the pipe full.
        self.read_size = {fd: fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) for fd in (stdout_fd, stderr_fd)}
        self.read_size[record_fd] = 1 << 16
        self.woke = (time.monotonic(), 0)  # when poll() last returned, and this thread's CPU wait in it (ns)

    def run(self) -> Ending:
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

    def _watch(self, poller: select.poll) -> Ending:
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

    def _read(self, fd: int, poller: select.poll, drain: bool = False) -> Ending | None:
        """Handle one read of what fd has to give, or when draining, all it held when the drain began
        (what arrives meanwhile, from a process that keeps writing, waits); an Ending once the run is
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

    def _handle(self, fd: int, chunk: bytes, poller: select.poll) -> Ending | None:
        if fd != self.record_fd and len(chunk) == self.read_size[fd]:
            self._late()  # the pipe was full: its writer may have been waiting for room
        if fd == self.stdout_fd:
            self.stdout_bytes += len(chunk)
            if self.on_test is not None:  # only a stdin test's output is judged
                self.stdout_chunks.append(chunk)
            if self.stdout_bytes > self.config.output_bytes:
                return Ending(Outcome.ERROR, "output overflow")
            return None
        if fd == self.stderr_fd:
            self.stderr_bytes += len(chunk)
            if self.on_test is not None:
                self.stderr_chunks.append(chunk)
            self.stderr_tail = (self.stderr_tail + chunk)[-4 * _TAIL_CHARS :]
            if self.stderr_bytes > self.config.stderr_bytes:
                return Ending(Outcome.ERROR, "output overflow (stderr)")
            return None
        self.record += chunk
        if len(self.record) > _RECORD_BYTES:
            return Ending(Outcome.ERROR, "the record socket overflowed: the candidate wrote to it")
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
            elif record.event == "unit" and self.limit is not None and len(self.units) < _MOST_UNITS:
                if record.ended in ("pass", "fail", "error", "skip"):
                    self.units.append(TestOutcome(name=record.name, outcome=record.ended, detail=record.detail))
            elif record.event == "starting" and self.limit is not None:
                self.limit.test_started(record.clock / 1e9, record.waited)
            elif record.event == "test" and self.limit is not None:
                ending = self._test(record, poller)
                if ending:
                    return ending
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
                _warn_once(f"candidates run without {name}: the kernel {state} (see docs/security.md)")
        if self.limit.wall_clock_only:
            _warn_once("the kernel gives no CPU-wait figure (/proc/<pid>/schedstat): time limits count wall time")

    def _answer(self, record: _ChildRecord) -> None:
        """Test the value of an assertion whose message the child evaluates only if the test fails, and
        say how it went (worker/candidate/child.py, "value"). Only the first value of each such assertion is
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

    def _test(self, record: _ChildRecord, poller: select.poll) -> Ending | None:
        """A stdin test has ended: judge it (on_test) with what it printed, the `stdout` bytes written
        before the record, and tell the runner whether to go on. Of the test's time, the runner is charged
        what the test was charged, no more (worker/process/timelimit.py)."""
        ending = self._read(self.stdout_fd, poller, drain=True) or self._read(self.stderr_fd, poller, drain=True)
        if ending:
            return ending
        stdout, self.stdout_chunks = _taken(self.stdout_chunks, record.stdout)
        stderr, self.stderr_chunks = _taken(self.stderr_chunks, record.stderr)
        self.stdout_bytes = sum(map(len, self.stdout_chunks))
        wall_s = (record.clock - record.began) / 1e9
        test = TestEnded(
            record.index, record.ended, record.detail, stdout, record.ns / 1e9, stderr, record.status, wall_s
        )
        go_on = self.on_test is not None and self.on_test(test)
        assert self.limit is not None
        self.limit.test_ended(record.began / 1e9, record.ns / 1e9, record.clock / 1e9, record.waited)
        try:
            os.write(self.record_fd, b"c" if go_on else b"s")
        except OSError:  # gone: the watch reads how
            pass
        self._late()
        return None

    def _late(self) -> None:
        """The candidate's process may be waiting on this one: charge it none of the time we were late
        (worker/process/timelimit.py), that is our wait for a CPU in the poll() that woke us, and our time since
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

    def _drain(self, poller: select.poll) -> Ending | None:
        for fd in list(self.open_fds):
            ending = self._read(fd, poller, drain=True)
            if ending:
                return self._charge(ending)
        return None

    def _verdict(self, record: _ChildRecord, limit: Limit) -> Ending:
        charged = limit.charged(record.clock / 1e9, record.waited)
        if charged > limit.timeout:  # it finished, but past its time: this process was late to look
            return self._charge(Ending(Outcome.TIMEOUT, f"timed out after {self.timeout:g} s"), charged)
        if record.outcome in ("pass", "assertion_fail") and len(record.assertions) != len(self.splits):
            detail = "the record names other assertions than the runner's: something other than the runner wrote it"
            return self._charge(Ending(Outcome.ERROR, detail), charged)
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
        return self._charge(Ending(outcome, detail, assertions, message), charged)

    def _charge(self, ending: Ending, charged: float | None = None) -> Ending:
        """Note on the ending the time the candidate was charged (by now, unless given)."""
        if self.limit is not None:
            ending.charged_s = self.limit.charged_now(time.monotonic()) if charged is None else charged
            ending.wall_clock_only = self.limit.wall_clock_only
        return ending

    def _exited(self, poller: select.poll) -> Ending:
        # What the candidate's process wrote before it ended is in the pipes and the socket: its record
        # decides, whether the host saw the exit or the record first.
        ending = self._drain(poller)
        if ending:
            return ending
        how = _describe_status(self.proc.wait())
        if self.limit is None:
            return Ending(Outcome.INFRA_ERROR, f"the runner script did not start: {how}{self._stderr()}")
        return self._charge(Ending(Outcome.ERROR, f"the interpreter {how} before the runner finished{self._stderr()}"))

    def _out_of_time(self) -> Ending:
        limit = self.limit
        if limit is None:
            return Ending(
                Outcome.INFRA_ERROR,
                f"the interpreter did not start within {self.config.startup_timeout_s:g} s{self._stderr()}",
            )
        now = time.monotonic()
        charged = limit.charged_now(now)  # never under the reading that found its time up
        if now - limit.start >= limit.ceiling and charged < limit.timeout:  # the ceiling, not the limit
            detail = (
                f"timed out: the wall-clock ceiling of {limit.ceiling:g} s ({self.config.wall_ceiling_factor:g} x the "
                f"limit) ran out after it had run {charged:.2f} s of its {self.timeout:g} s (an overloaded machine)"
            )
        else:
            detail = f"timed out after {self.timeout:g} s"
        return self._charge(Ending(Outcome.TIMEOUT, detail), charged)

    def _stderr(self) -> str:
        return said_on_stderr(self.stderr_tail.decode("utf-8", "replace"))


def said_on_stderr(text: str) -> str:
    """The end of what a process wrote to stderr, on one line, to end a detail with ("; stderr: ..."); ""
    where it wrote nothing."""
    tail = " ".join(text.split())[-_TAIL_CHARS:]
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
