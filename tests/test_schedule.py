"""The next-job rule (worker/queue/schedule.py), on fakeredis: fair shares by samples, priorities first, a late
run with no credit, jobs taken once each with their lease, cancel and re-prioritize."""

from __future__ import annotations

import fakeredis
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codeexec.protocol import keys
from codeexec.protocol.run import Job, RunMeta
from codeexec.worker.queue.leases import Heart, Lease
from codeexec.worker.queue.schedule import Schedule


@pytest.fixture
def schedule() -> Schedule:
    return Schedule(fakeredis.FakeRedis(decode_responses=True))


def jobs(run: str, count: int, size: int, first: int = 0) -> list[Job]:
    return [Job(run=run, samples=[("t", first + j * size + i) for i in range(size)]) for j in range(count)]


def drain(schedule: Schedule) -> list[Job]:
    taken = []
    while (next_job := schedule.take(10, "host:1:ab")) is not None:
        taken.append(next_job[1])
    return taken


def test_runs_of_one_priority_share_by_samples_whatever_their_job_size(schedule: Schedule) -> None:
    schedule.add("big", jobs("big", 20, 16), 0)
    schedule.add("small", jobs("small", 40, 2), 0)
    served = {"big": 0, "small": 0}
    for job in drain(schedule):
        served[job.run] += len(job.samples)
        if served["small"] < 80:  # while both have jobs waiting, neither is more than a job ahead
            assert abs(served["big"] - served["small"]) <= 16, served
    assert served == {"big": 320, "small": 80}


def test_a_run_that_joins_late_gets_no_credit_for_the_time_it_was_not_there(schedule: Schedule) -> None:
    schedule.add("early", jobs("early", 30, 4), 0)
    for _ in range(10):  # 40 samples of "early" served alone
        assert schedule.take(10, "host:1:ab")[1].run == "early"
    schedule.add("late", jobs("late", 10, 4), 0)
    order = [job.run for job in drain(schedule)][:20]
    assert order.count("late") == 10 and "early" in order[:3]  # turns from the start, not 10 in a row


def test_a_higher_priority_is_served_first_and_low_last(schedule: Schedule) -> None:
    schedule.add("normal", jobs("normal", 5, 4), 0)
    schedule.add("low", jobs("low", 5, 4), -10)
    schedule.add("high", jobs("high", 5, 4), 10)
    assert [job.run for job in drain(schedule)] == ["high"] * 5 + ["normal"] * 5 + ["low"] * 5


def test_a_new_priority_applies_from_the_next_job(schedule: Schedule) -> None:
    schedule.add("a", jobs("a", 4, 4), 0)
    schedule.add("b", jobs("b", 4, 4), 0)
    schedule.reprioritize("b", 10)
    schedule.reprioritize("gone", 10)  # a run with nothing waiting does not become active
    assert [job.run for job in drain(schedule)] == ["b"] * 4 + ["a"] * 4
    assert schedule.client.zscore(keys.ACTIVE, "gone") is None


def test_jobs_taken_back_from_a_dead_worker_go_first(schedule: Schedule) -> None:
    schedule.add("r", jobs("r", 3, 2), 0)
    schedule.add("r", jobs("r", 1, 2, first=100), 0, front=True)
    assert drain(schedule)[0].samples == [("t", 100), ("t", 101)]


def test_taking_a_job_takes_out_its_lease_in_the_same_step(schedule: Schedule) -> None:
    schedule.add("r", jobs("r", 1, 3), 0)
    lease_id, job = schedule.take(10, "host:7:cd")
    lease = Lease.model_validate_json(schedule.client.get(keys.lease(lease_id)))
    assert (lease.job, lease.worker) == (job, "host:7:cd")
    assert schedule.client.zscore(keys.LEASES, lease_id) is not None
    assert schedule.take(10, "host:7:cd") is None  # nothing left: a tick with no job is a no-op
    assert schedule.client.exists(keys.ACTIVE, keys.SERVED, keys.jobs("r")) == 0  # nothing left behind


def test_dropping_a_run_removes_only_its_waiting_jobs(schedule: Schedule) -> None:
    schedule.add("keep", jobs("keep", 3, 2), 0)
    schedule.add("drop", jobs("drop", 4, 5), 10)
    schedule.take(10, "host:1:ab")  # a job of "drop" in hand: not the schedule's any more
    assert schedule.drop("drop") == 15
    assert schedule.waiting("drop") == 0
    assert [job.run for job in drain(schedule)] == ["keep"] * 3


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abcd"), st.integers(1, 4), st.integers(1, 6), st.sampled_from([-10, 0, 10])),
        min_size=1,
        max_size=12,
    ),
    st.lists(st.integers(0, 3), max_size=12),
)
def test_every_job_is_taken_once_and_never_before_a_higher_priority(
    adds: list[tuple[str, int, int, int]], takes_between: list[int]
) -> None:
    schedule = Schedule(fakeredis.FakeRedis(decode_responses=True))
    priority: dict[str, int] = {}
    added: list[Job] = []
    taken: list[Job] = []
    first = 0
    for step, (run, count, size, wanted) in enumerate(adds):
        new = jobs(run, count, size, first)
        first += count * size
        priority.setdefault(run, wanted)  # a run keeps the priority it joined with while it is active
        schedule.add(run, new, priority[run])
        added += new
        for _ in range(takes_between[step] if step < len(takes_between) else 0):
            waiting_priorities = [priority[r] for r in priority if schedule.waiting(r)]
            next_job = schedule.take(10, "host:1:ab")
            if next_job is None:
                assert not waiting_priorities
                continue
            assert priority[next_job[1].run] == max(waiting_priorities)
            taken.append(next_job[1])
            if not schedule.waiting(next_job[1].run):
                del priority[next_job[1].run]  # inactive: it may join again at another priority
    taken += drain(schedule)
    assert sorted(job.model_dump_json() for job in taken) == sorted(job.model_dump_json() for job in added)


def meta(run: str, status: str, priority: int) -> str:
    fields = {"samples_path": "s.jsonl", "samples_sha256": "", "n_samples": 4, "n_tasks": 1}
    return RunMeta(
        run=run, created=0.0, problems="p", k=[1], status=status, priority=priority, **fields
    ).model_dump_json()


@pytest.mark.parametrize("status", ["queued", "cancelled"])
def test_a_dead_worker_s_job_goes_ahead_at_its_run_s_priority_unless_the_run_was_cancelled(
    status: str, schedule: Schedule, monkeypatch: pytest.MonkeyPatch
) -> None:
    import codeexec.worker.queue.ticks

    ticks: list[int] = []
    # No Celery broker here: the ticks each call sends, of the default environment's queue.
    monkeypatch.setattr(codeexec.worker.queue.ticks, "send_ticks", lambda count, environment=None: ticks.append(count))
    client = schedule.client
    client.set(keys.meta("r"), meta("r", status, 10))
    schedule.add("r", jobs("r", 1, 2), 10)
    schedule.take(-1, "dead:1:ab")  # a lease that expired at once: its worker is gone
    assert client.zscore(keys.ACTIVE, "r") is None  # nothing of the run waits now
    schedule.add("other", jobs("other", 2, 2), 0)
    for task_id, index in [("t", 0), ("t", 1)]:  # the job's samples still have no result
        client.hset(keys.pending("r", task_id), str(index), "{}")
    assert Heart(client).take_over_expired() == (2 if status == "queued" else 0)
    assert client.zcard(keys.LEASES) == 0
    if status == "queued":
        assert ticks == [1] and client.zscore(keys.ACTIVE, "r") == 10  # back, at the run's priority
        assert drain(schedule)[0] == Job(run="r", samples=[("t", 0), ("t", 1)])  # before "other", at 0
    else:
        assert ticks == [] and schedule.waiting("r") == 0 and client.zscore(keys.ACTIVE, "r") is None


def test_jobs_with_no_tick_queued_are_woken_by_one_process_a_beat(
    schedule: Schedule, monkeypatch: pytest.MonkeyPatch
) -> None:
    import codeexec.worker.queue.ticks

    ticks: list[int] = []
    monkeypatch.setattr(codeexec.worker.queue.ticks, "send_ticks", lambda count, environment=None: ticks.append(count))
    client = schedule.client
    hearts = [Heart(client) for _ in range(3)]
    for heart in hearts:
        heart.beat()  # three worker processes
    schedule.add("r", jobs("r", 5, 1), 0)
    client.rpush(keys.QUEUE, "a tick")
    assert [heart.wake() for heart in hearts] == [0, 0, 0]  # a tick is queued: nothing to do
    client.delete(keys.QUEUE)
    assert [heart.wake() for heart in hearts] == [3, 0, 0]  # one per worker process, by one of them
    assert ticks == [3]
    client.delete(keys.WAKER)  # the next beat
    drain(schedule)
    assert hearts[1].wake() == 0  # nothing waits


def test_a_job_cut_short_keeps_its_lease_until_it_expires(schedule: Schedule) -> None:
    heart = Heart(schedule.client)
    schedule.add("r", jobs("r", 1, 2), 0)
    with pytest.raises(ConnectionError), heart.next_job() as job:
        assert job is not None and heart.lease is not None
        raise ConnectionError("Redis gone")
    assert heart.lease is None  # no longer renewed by the beat
    assert schedule.client.zcard(keys.LEASES) == 1  # expires, and a beat sends the job again
    with heart.next_job() as job:
        assert job is None
