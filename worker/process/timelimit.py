"""The time limit: what counts against a candidate's timeout_s, so that load cannot trip it.

A candidate is charged the wall-clock time since it started minus the time its main thread sat
runnable, waiting for a CPU that other processes held: the kernel keeps that figure per thread, the
second field of /proc/<pid>/task/<tid>/schedstat. On an idle machine the two are the same, so the
verdicts are the wall clock's; on a loaded one a program is charged only for the time it could have
run. Running, sleeping and blocking (on a pipe, a lock, a child) all count, so a sleeper or a
spinner past its limit times out on any machine.

Three limits of the figure: it is the main thread's, so a candidate that waits for worker threads
or processes starved of CPU is charged for their waiting; the kernel adds a wait to it when the
thread gets a CPU, so a wait still going on when it is read is charged (under ordinary load, a time
slice: milliseconds); and on a VM, time the hypervisor takes away while the thread runs (steal) is
charged too (docs/time-limits.md says what it amounts to here).

A wall-clock ceiling, wall_ceiling_factor times the limit, still ends every run on a machine so wedged
that the candidate barely runs; a run it ends says so.

Nor is it charged for the host being late while it waits on the host, for the answer to a "value"
line or for room in a stdout or stderr pipe it has filled: on a busy machine that is load too. The
host notes each time it was late (worker/process/runner.py, _Watch._late()): from when the poll() that woke it
would have returned on an idle machine (less its own wait for a CPU in it) to when it had done. A
pipe filled by another of the candidate's processes while its main thread runs on earns it that
lateness too, once per pipeful: at most 20 before the default caps.

A stdin test or a step of another language's program runs in a process of its own under a limit of its
own, charged by the runner as above but from the wait of whichever of its threads, or of the threads of the
processes it started, waited most (a JVM's main thread only waits for the one running the program, a compiler
driver for its compiler: worker/candidate/forked_runs.py). The candidate, the
tests' runner, is charged only what each test was charged once it has ended ("test" records), and none of
a test's time while it runs (from its "starting" record): its wall-clock time on a loaded machine is not
the runner's, and the test's own limit and ceiling bound it.

The figure is read when the nominal deadline arrives, not on every poll: the child sends it (with
its clock) when it starts and when it finishes, and the host looks it up in /proc only at a
deadline, pushing the deadline on by the time the candidate is still owed.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Limit:
    timeout: float  # seconds the candidate may be charged
    ceiling: float  # seconds of wall-clock time after which it is stopped whatever it was charged
    start: float  # the child's CLOCK_MONOTONIC when it started, in seconds
    waited: int | None  # how long its main thread had waited for a CPU by then, ns; None: no figure
    pid: int | None  # its pid as this process sees it, for looking the figure up
    pauses: list[tuple[float, float]] = field(default_factory=list)  # (from, to): it waited on a late host
    # The most it has been charged at a reading: a later reading can come out a little lower (a wait
    # under way at the first is added to the kernel's figure only when it ends), and the time-out the
    # first decided must not be reported as a charge under the limit.
    most: float = 0.0
    # Since when a stdin test or a step of its has run (its time is its own limit's), and its main thread's
    # figure then; how long that thread waited for a CPU in the tests that ended (not to be subtracted again).
    testing: tuple[float, int | None] | None = None
    waited_in_tests: int = 0

    def pause(self, since: float, until: float) -> None:
        self.pauses.append((since, until))

    def test_started(self, at: float, waited: int | None) -> None:
        """A test's process started at `at`, when the main thread had waited `waited` ns: until it ends, none
        of the time is the candidate's."""
        self.testing = (at, waited)

    def test_ended(self, began: float, charged_s: float, ended: float, waited: int | None) -> None:
        """The test that began at `began` ended at `ended`, charged `charged_s`: that much is the candidate's."""
        if self.testing is not None and self.testing[1] is not None and waited is not None:
            self.waited_in_tests += waited - self.testing[1]
        self.testing = None
        self.pause(began + charged_s, ended)

    @property
    def wall_clock_only(self) -> bool:
        """The kernel gives no waiting figure: the limit counts wall-clock time."""
        return self.waited is None

    def charged(self, now: float, waited: int | None) -> float:
        """Seconds charged at monotonic time `now`, when the main thread had waited `waited` ns."""
        # Only what the host was late before `now` (a pause noted later may end after the clock read).
        running = now - self.start - sum(max(0.0, min(until, now) - since) for since, until in self.pauses)
        if self.testing is not None:
            running -= max(0.0, now - self.testing[0])
            waited = self.testing[1]
        if waited is None or self.waited is None:
            return max(0.0, running)
        # Never below zero: a wait is added to the figure only when it ends, so one under way when the
        # first figure was read may be counted in the second but not in the time between them.
        return max(0.0, running - max(0, waited - self.waited - self.waited_in_tests) / 1e9)

    def charged_now(self, now: float) -> float:
        self.most = max(self.most, self.charged(now, self._waited_now()))
        return self.most

    def next_deadline(self, now: float) -> float | None:
        """When to look again, or None: its time is up (charged in full, or the ceiling reached)."""
        if now - self.start >= self.ceiling:
            return None
        owed = self.timeout - self.charged_now(now)
        if owed <= 0:
            return None
        # It can be charged at most one second per second: it cannot be out of time before then.
        return min(now + owed, self.start + self.ceiling)

    def _waited_now(self) -> int | None:
        if self.pid is None or self.waited is None:
            return None
        try:
            with open(f"/proc/{self.pid}/task/{self.pid}/schedstat", "rb") as stat:
                return int(stat.read().split()[1])
        except (OSError, IndexError, ValueError):  # it has ended meanwhile
            return None
