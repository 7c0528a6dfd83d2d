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
