"""A sweep across hosts, for real: Redis on one test host, workers on two others, the producer on a
fourth, talking over their own addresses (network namespaces on this machine). Mid-sweep one
worker host dies whole; with default settings its work is taken over (its leases expire) and the run
completes in bounded time with exact per-task counts."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeexec.producer.local.valkey import server_binary
from helpers import make_suite
from netns import Network, unavailable

REASON = unavailable()
pytestmark = [pytest.mark.skipif(REASON is not None, reason=f"no test hosts: {REASON}"), pytest.mark.once]
PASSWORD = "test-hosts-only"


@pytest.fixture
def network(tmp_path: Path) -> Iterator[Network]:
    with Network(["redis", "w1", "w2", "producer"]) as net:
        data = tmp_path / "redis"
        data.mkdir()
        net.popen(
            "redis",
            [
                server_binary(), "--bind", net.address("redis"), "--port", "6379", "--protected-mode", "no",
                "--requirepass", PASSWORD, "--appendonly", "yes", "--appendfsync", "everysec",
                "--maxmemory-policy", "noeviction", "--save", "", "--dir", str(data),
            ],
            tmp_path / "redis.log",
        )  # fmt: skip
        yield net


def codeexec_env(net: Network) -> dict[str, str]:
    return {
        **os.environ,
        "CODEEXEC_REDIS_URL": f"redis://:{PASSWORD}@{net.address('redis')}:6379/0",
    }


def codeexec_in(net: Network, host: str, *args: str, timeout: float = 60) -> str:
    out = net.run(
        host, [sys.executable, "-m", "codeexec.producer.entry.cli", *args], env=codeexec_env(net), timeout=timeout
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def done(net: Network, run: str) -> int:
    return int(codeexec_in(net, "producer", "status", run).split(":")[1].split("/")[0])


def test_a_sweep_across_two_worker_hosts_survives_losing_one(network: Network, tmp_path: Path) -> None:
    ppids = tmp_path / "ppids"  # each candidate notes the worker process running it
    suite = make_suite(tmp_path, tasks=8, per_task=6, slow_s=0.25, ppid_log=ppids)
    workers = {
        host: network.popen(
            host,
            [
                sys.executable,
                "-m",
                "codeexec.producer.entry.cli",
                "worker",
                "--concurrency=1",
                f"--hostname={host}@test",
            ],
            tmp_path / f"{host}.log",
            env={**codeexec_env(network), "CODEEXEC_SANDBOX": "off"},  # the ppid log is outside their directory
        )
        for host in ("w1", "w2")
    }
    run = "across-hosts"
    codeexec_in(network, "producer", "submit", "--problems", str(suite.problems), "--samples", str(suite.samples),
                "--run", run)  # fmt: skip

    deadline = time.monotonic() + 60
    while done(network, run) < 8:  # both hosts are at work
        assert time.monotonic() < deadline, (tmp_path / "w1.log").read_text()
        time.sleep(0.2)
    network.kill_host("w1")
    assert workers["w1"].wait(timeout=10) != 0

    codeexec_in(network, "producer", "status", run, "--wait", timeout=120)
    report = json.loads(codeexec_in(network, "producer", "report", run, "--json"))
    assert {task: (t["n"], t["c"]) for task, t in report["tasks"].items()} == {
        task: (suite.n[task], suite.c[task]) for task in suite.n
    }
    assert report["n_done"] == suite.total and report["outcomes"]["error"] == 0
    # Both hosts ran candidates (the pool processes of two workers, so at least two parents).
    assert len(set(ppids.read_text().split())) >= 2
