"""Limit's arithmetic, without a candidate: what a reading of the kernel's waiting figure charges."""

from __future__ import annotations

import pytest

from codeexec.worker.process.timelimit import Limit


def reading(limit: Limit, waits: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Make each later look-up of the candidate's waiting figure return the next of `waits` (ns)."""
    figures = iter(waits)
    monkeypatch.setattr(limit, "_waited_now", lambda: next(figures))


def test_time_spent_waiting_for_a_cpu_is_not_charged(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = Limit(timeout=1.0, ceiling=10.0, start=100.0, waited=5_000_000, pid=1)
    reading(limit, [5_000_000 + 400_000_000], monkeypatch)
    assert limit.charged_now(101.0) == pytest.approx(0.6)
    assert limit.wall_clock_only is False


def test_a_charge_once_read_is_never_reported_lower(monkeypatch: pytest.MonkeyPatch) -> None:
    # The first reading finds its time up; the wait under way then is added to the figure before the
    # second, which alone would say 0.45 s: the time-out the first decided is reported as such.
    limit = Limit(timeout=0.5, ceiling=5.0, start=0.0, waited=0, pid=1)
    reading(limit, [0, 100_000_000], monkeypatch)
    assert limit.next_deadline(0.5) is None
    assert limit.charged_now(0.55) == pytest.approx(0.5)


def test_the_hosts_lateness_is_not_charged() -> None:
    limit = Limit(timeout=1.0, ceiling=10.0, start=0.0, waited=None, pid=None)
    limit.pause(0.2, 0.5)
    assert limit.wall_clock_only is True
    assert limit.charged_now(0.4) == pytest.approx(0.2)  # only the part of the pause before the reading
    assert limit.charged_now(1.0) == pytest.approx(0.7)
    assert limit.next_deadline(1.0) == pytest.approx(1.3)


def test_a_running_test_s_time_is_its_own_and_its_charge_the_runners_once_it_ends() -> None:
    limit = Limit(timeout=2.0, ceiling=20.0, start=0.0, waited=None, pid=None)
    limit.test_started(0.5, None)
    assert limit.charged_now(9.0) == pytest.approx(0.5)  # 8.5 s of a test on a loaded machine: not the runner's
    assert limit.next_deadline(9.0) == pytest.approx(10.5)
    limit.test_ended(0.6, 1.2, 9.5, None)  # it began at 0.6 (its fork) and was charged 1.2 s of its 8.9 s
    assert limit.charged_now(10.0) == pytest.approx(0.5 + 0.1 + 1.2 + 0.5)


def test_the_runners_waits_during_a_test_are_not_subtracted_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # The runner waited 0.1 s before its test, 3 s while the test ran (in time already not its), 0.2 s after.
    limit = Limit(timeout=2.0, ceiling=20.0, start=0.0, waited=0, pid=1)
    reading(limit, [3_100_000_000, 3_300_000_000], monkeypatch)
    limit.test_started(0.5, 100_000_000)
    assert limit.charged_now(8.0) == pytest.approx(0.5 - 0.1)  # the figure read now is not used
    limit.test_ended(0.6, 1.0, 9.0, 3_100_000_000)
    assert limit.charged_now(10.0) == pytest.approx(0.5 - 0.1 + 0.1 + 1.0 + 1.0 - 0.2)
