"""The private Valkey that dies (producer/local/valkey.py's keeper): SIGKILLed mid-run, while idle, under `serve`
mid-batch, and where it cannot be started again. Real commands, a real Valkey, real Celery workers."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
import redis

from codeexec.producer.local import resident
from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.producer.service.dispatch import Dispatch
from codeexec.protocol import keys
from codeexec.protocol.result import Outcome, StoredResult
from codeexec.protocol.settings import embedded_socket, get_settings
from helpers import ROOT, Server, Suite, assert_exact, codeexec, make_suite, private_env, wait_until

# Each sample sleeps this long once, so that a run of SAMPLES on two workers lasts seconds: the test
# kills the server once a first result is in, and checks that the run had not ended by then.
SLOW_S = 0.25
TASKS, PER_TASK = 10, 6


def private_client(data_dir: Path) -> redis.Redis:
    return redis.Redis(unix_socket_path=str(embedded_socket(data_dir)), decode_responses=True)


def server_pid(data_dir: Path) -> int:
    return int(private_client(data_dir).info("server")["process_id"])


def kill_server(data_dir: Path) -> int:
    """SIGKILL the private Valkey of data_dir; its pid."""
    pid = server_pid(data_dir)
    os.kill(pid, signal.SIGKILL)
    return pid


def answers(data_dir: Path) -> bool:
    try:
        return bool(private_client(data_dir).ping())
    except (redis.ConnectionError, FileNotFoundError):
        return False


def done_of(data_dir: Path, run: str) -> int:
    try:
        return int(private_client(data_dir).hget(keys.stats(run), keys.DONE) or 0)
    except redis.ConnectionError:
        return 0


def eval_in_background(env: dict[str, str], suite: Suite, run: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*(sys.executable, "-m", "codeexec.producer.entry.cli", "eval", "--problems", str(suite.problems)),
         *("--samples", str(suite.samples), "--run", run, "--k", "1,2", "--json")],
        env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def kill_mid_run(data_dir: Path, run: str, total: int) -> None:
    """Kill the server once the run has a first result, and check that it had not ended by then."""
    wait_until(lambda: done_of(data_dir, run) >= 1, f"run {run} recorded no result")
    before = done_of(data_dir, run)
    kill_server(data_dir)
    assert before < total, f"run {run} ended ({before} of {total}) before its server was killed: make it longer"


def expected_pass_at_1(suite: Suite) -> float:
    return sum(suite.c[task] / suite.n[task] for task in suite.n) / len(suite.n)


@pytest.mark.parametrize("isolation", ["fork", "fresh"])
def test_a_run_whose_server_is_killed_finishes_by_itself(data_dir: Path, tmp_path: Path, isolation: str) -> None:
    suite = make_suite(tmp_path, tasks=TASKS, per_task=PER_TASK, slow_s=SLOW_S)
    env = private_env(data_dir, CODEEXEC_ISOLATION=isolation)
    command = eval_in_background(env, suite, "killed")
    kill_mid_run(data_dir, "killed", suite.total)
    out, err = command.communicate(timeout=300)
    assert command.returncode == 0, err
    said = [line for line in err.splitlines() if "started again" in line]
    assert said == ["the private Valkey stopped, and was started again from its append-only file; the run goes on, "
                    "nothing is lost"], err  # fmt: skip
    assert json.loads(out)["pass_at_k"]["1"] == pytest.approx(expected_pass_at_1(suite))
    document = assert_exact(env, "killed", suite)  # every sample counted once
    assert document["meta"]["options"]["isolation"] == isolation
    keeper = (data_dir / "logs" / "valkey-keeper.log").read_text()
    assert "it exited (killed by SIGKILL); started again from its append-only file" in keeper
    assert resident.current(data_dir) is not None, "the warm workers did not survive their server"


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_a_server_killed_while_idle_is_back_for_the_next_command(data_dir: Path, tmp_path: Path) -> None:
    suite = make_suite(tmp_path, tasks=2, per_task=3)
    env = private_env(data_dir)
    first = codeexec(env, "eval", "--problems", str(suite.problems), "--samples", str(suite.samples), "--json")
    assert first.returncode == 0, first.stderr
    state = resident.current(data_dir)
    killed = kill_server(data_dir)
    wait_until(lambda: answers(data_dir), "the private Valkey was not started again")
    assert server_pid(data_dir) != killed
    second = codeexec(env, "eval", "--problems", str(suite.problems), "--samples", str(suite.samples), "--json")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["pass_at_k"] == json.loads(first.stdout)["pass_at_k"]
    assert resident.current(data_dir) == state, "the warm workers were replaced"
    runs = codeexec(env, "runs", "--json")
    assert runs.returncode == 0 and len(json.loads(runs.stdout)) == 2, runs.stdout  # the first run's record too


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_own_workers_keep_their_server_up_too(data_dir: Path, tmp_path: Path) -> None:
    """CODEEXEC_KEEP_WARM_S=0: the command's own server and workers, no resident."""
    suite = make_suite(tmp_path, tasks=TASKS, per_task=PER_TASK, slow_s=SLOW_S)
    env = private_env(data_dir, keep_warm_s=0)
    command = eval_in_background(env, suite, "own")
    kill_mid_run(data_dir, "own", suite.total)
    out, err = command.communicate(timeout=300)
    assert command.returncode == 0, err
    assert json.loads(out)["pass_at_k"]["1"] == pytest.approx(expected_pass_at_1(suite))
    assert "started again from its append-only file" in err
    assert not answers(data_dir), "the command left its server running"
    assert_exact(env, "own", suite)


@pytest.mark.once  # a fault injected into paths the other passes cross
def test_a_server_that_cannot_be_started_again_ends_the_command_saying_so(data_dir: Path, tmp_path: Path) -> None:
    suite = make_suite(tmp_path, tasks=TASKS, per_task=PER_TASK, slow_s=SLOW_S)
    env = private_env(data_dir)
    command = eval_in_background(env, suite, "lost")
    wait_until(lambda: done_of(data_dir, "lost") >= 1, "the run recorded no result")
    state = resident.current(data_dir)
    assert state is not None
    pid = server_pid(data_dir)
    shutil.rmtree(data_dir)
    # An empty one in its place, as the resident's own idle check makes (CI saw the keeper start a server
    # there, which answered that there was no such run).
    data_dir.mkdir()
    os.kill(pid, signal.SIGKILL)
    _, err = command.communicate(timeout=300)
    assert command.returncode == 3, err
    assert err.rstrip().endswith(
        f"its data directory {data_dir} is gone, and the runs' jobs and results with it: run lost cannot be carried on"
    ), err
    assert "Traceback" not in err
    wait_until(lambda: resident.current(data_dir) is None, "the resident outlived its server")
    # No later command fails for it: the next one starts afresh.
    again = codeexec(env, "eval", "--problems", str(suite.problems), "--samples", str(suite.samples), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["pass_at_k"]["1"] == pytest.approx(expected_pass_at_1(suite))


def test_serve_carries_a_batch_over_its_server_s_death(data_dir: Path, tmp_path: Path) -> None:
    server = Server(private_env(data_dir), tmp_path / "serve.log").start()
    try:
        # Each sample prints its input back, after sleeping: 40 samples of 3 tests, half of them right.
        samples = [
            {"code": f"import time\ntime.sleep({SLOW_S / 3})\nprint(input(){'' if i % 2 else ' + 1'})", "id": str(i)}
            for i in range(40)
        ]
        tests = {"default": {"inputs": ["1", "2", "3"], "outputs": ["1", "2", "3"]}}
        body = {"batch_id": "through", "tests": tests, "samples": samples, "extract": "none"}
        lines: list[dict] = []
        with httpx.stream("POST", f"{server.url}/v1/batch", json=body, timeout=300) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                lines.append(json.loads(line))
                if len(lines) == 2:  # its first line, and a first result
                    kill_server(data_dir)
        first, *results, done = lines
        assert first["samples"] == 40
        assert done["done"] and done["samples"] == 40 and done["passed"] == 20, done
        assert sorted(int(line["id"]) for line in results) == list(range(40))
        assert all(line["score"] == (1.0 if int(line["id"]) % 2 else 0.0) for line in results)
    finally:
        server.stop()
    assert "started again from its append-only file" in (data_dir / "logs" / "valkey-keeper.log").read_text()


def test_a_request_waiting_for_results_outlasts_its_redis(
    server: EmbeddedServer, caplog: pytest.LogCaptureFixture
) -> None:
    """What a request of `serve` waits on (Dispatch.results) when it reads Redis while Redis is down: it
    waits Redis out and goes on. (CI saw a batch's stream stall for good: its waiter, woken for a result
    published just before the server was killed, read it after, and ended with the ConnectionError.)"""
    client = redis.Redis.from_url(server.url, decode_responses=True)
    run, task = get_settings().serve_run, "t"

    def record(index: int) -> None:
        passed = StoredResult(exit_code=Outcome.PASS, score=1.0, passed=1, total=1)
        client.hset(keys.results(run, task), str(index), passed.model_dump_json())

    def tried_while_down() -> bool:
        return any(f"while waiting for {task}" in record.getMessage() for record in caplog.records)

    async def until(condition: Callable[[], bool]) -> None:
        while not condition():
            await asyncio.sleep(0.02)

    async def scenario() -> list[int]:
        dispatch = Dispatch.open(server.url, get_settings())
        dispatch.start()
        got: list[int] = []

        async def wait() -> None:
            async for index, _ in dispatch.results(task, 2):
                got.append(index)

        waiting = asyncio.create_task(wait())
        try:
            record(0)
            await asyncio.wait_for(until(lambda: bool(got)), 60)
            assert server.process is not None
            server.process.kill()
            server.process.wait()
            dispatch._wake(task, 1)  # a result published just before the kill, read after it
            await asyncio.wait_for(until(lambda: waiting.done() or tried_while_down()), 60)
            assert not waiting.done(), waiting.exception()
            server.start()
            record(1)
            await asyncio.wait_for(waiting, 60)
            return got
        finally:
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
            await dispatch.close()

    with caplog.at_level(logging.WARNING, logger="codeexec.producer.service.dispatch"):
        assert asyncio.run(scenario()) == [0, 1]
