"""The watch of a run that `codeexec status --wait`, eval and the API's Run.wait() keep (producer/run.py's
Run.wait()), on fakeredis: a run that stops moving is said to have no worker when none lives, and its lost jobs
are sent again either way."""

from __future__ import annotations

import time
from itertools import count
from types import SimpleNamespace

import fakeredis
import pytest

from codeexec.producer import run as watched
from codeexec.producer.run import Run
from codeexec.protocol import keys
from codeexec.worker.queue.leases import Heart
from helpers import store_meta

_POLLS = 1000  # far more than the watch needs here: only turns a watch that never repairs into a failure


@pytest.mark.parametrize("worker_lives", [True, False])
def test_a_run_that_stops_moving_is_repaired_whether_or_not_a_worker_lives(
    worker_lives: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run whose jobs were lost (a Redis that lost its last second of writes): past _STALL_S without
    # progress the watch sends its pending samples again, and past _ALONE_S says so if no worker lives.
    # With a live worker, the check for one once took every poll after _ALONE_S, and the repair never came.
    client = fakeredis.FakeRedis(decode_responses=True)
    store_meta(client, "r", n_samples=1, n_tasks=1)
    if worker_lives:
        Heart(client).beat()
    repaired = []

    def repair(run: Run, say: object) -> None:
        repaired.append(run.name)
        client.hset(keys.stats(run.name), keys.DONE, 1)  # as the workers would, once the samples are sent again

    polls = count()

    def poll(_: float) -> None:
        assert next(polls) < _POLLS, "the watch never sent the lost jobs again"

    monkeypatch.setattr(Run, "_repair", repair)
    monkeypatch.setattr(watched, "_ALONE_S", 0.0)
    monkeypatch.setattr(watched, "_STALL_S", 0.0)
    monkeypatch.setattr(watched, "time", SimpleNamespace(monotonic=time.monotonic, sleep=poll))
    said: list[str] = []
    Run.fetch(client, "r").wait(say=said.append)
    assert repaired == ["r"]
    assert (watched.NO_WORKER in said) is not worker_lives


def finishing_run(done_before: bool, monkeypatch: pytest.MonkeyPatch) -> fakeredis.FakeRedis:
    """Run "r" of two samples: both in before the watch first looks (`done_before`), or the last while it waits."""
    client = fakeredis.FakeRedis(decode_responses=True)
    store_meta(client, "r", n_samples=2, n_tasks=1)
    client.hset(keys.stats("r"), keys.DONE, 2 if done_before else 1)

    def poll(_: float) -> None:
        client.hset(keys.stats("r"), keys.DONE, 2)

    monkeypatch.setattr(watched, "time", SimpleNamespace(monotonic=time.monotonic, sleep=poll))
    return client


@pytest.mark.parametrize("done_before", [True, False])
def test_the_progress_callback_is_told_the_end_even_of_a_run_done_before_it_was_looked_at(
    done_before: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run whose samples all had their results before the watch first looked (a quick run, a busy machine)
    # never entered the watch's loop, and its callback heard nothing. Either way it hears the end once.
    client = finishing_run(done_before, monkeypatch)
    told: list[tuple[int, int]] = []
    Run.fetch(client, "r").wait(lambda done, total: told.append((done, total)))
    assert told == [(2, 2)]


@pytest.mark.parametrize("done_before", [True, False])
def test_a_restart_after_the_run_was_submitted_is_said_however_soon(
    done_before: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The server was restarted after the run was submitted, before its watch first asked who serves (a busy
    # machine: CI, once): the watch compares with the server that took the run, and says so, run done or not.
    client = finishing_run(done_before, monkeypatch)
    monkeypatch.setattr(watched, "server_id", lambda _: "the one started again")
    said: list[str] = []
    Run.fetch(client, "r").wait(say=said.append, serving="the one that took the run")
    assert sum("was restarted; the run goes on, nothing is lost" in line for line in said) == 1, said
    said.clear()
    Run.fetch(client, "r").wait(say=said.append, serving="the one started again")
    assert not [line for line in said if "restarted" in line]


def test_a_heartbeat_just_now_is_0_s_ago_never_minus_0(capsys: pytest.CaptureFixture[str]) -> None:
    """The workers' table reads Redis's clock to the microsecond (the heartbeats' own): a beat within the
    current second is not in the future."""
    from codeexec.producer.entry.display import print_workers
    from codeexec.worker.queue.leases import workers

    client = fakeredis.FakeRedis(decode_responses=True)
    Heart(client).beat()
    [worker] = workers(client)
    worker.last += 0.4  # a beat a shade ahead of this reading, as another host's may be
    print_workers(client, [worker])
    shown = capsys.readouterr().out
    assert " 0 s ago" in shown and "-0" not in shown, shown
