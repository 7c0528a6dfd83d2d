"""codeexec's own processes (the private Valkey, local workers, their candidates) end with the command
that started them, however it ends, and the next command carries on where it stopped.

Left-behind processes are looked for by markers in their arguments: the data directory (in the
Valkey server's) and the command's pid (in its workers' hostname). Whatever outlives the command is
re-parented to this process (a subreaper), which waits for it to end on its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.protocol import keys
from codeexec.worker.process.proctree import become_subreaper
from helpers import HANG_S, ROOT, codeexec, make_suite, processes_with, wait_for_orphans


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """The embedded default: no Redis URL, a private data directory."""
    become_subreaper()
    env = {
        **os.environ,
        "CODEEXEC_DATA_DIR": str(tmp_path / "data"),
    }
    env.pop("CODEEXEC_REDIS_URL", None)
    return env


def start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "codeexec.producer.entry.cli", *args],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_the_server_command_takes_its_valkey_with_it(env: dict[str, str], tmp_path: Path, how: int) -> None:
    data = tmp_path / "data"
    server = start(env, "server")
    assert server.stdout is not None
    assert server.stdout.readline().startswith("serving ")
    assert processes_with(str(data))  # the marker finds the running server: the check below can fail
    server.send_signal(how)
    assert server.wait() == (128 + how if how == signal.SIGTERM else -how)
    wait_for_orphans()
    assert not processes_with(str(data))
    # The next command finds no server in its way, and the data kept.
    again = start(env, "server")
    assert again.stdout is not None
    assert again.stdout.readline().startswith("serving ")
    again.send_signal(signal.SIGTERM)
    assert again.wait() == 128 + signal.SIGTERM
    assert not processes_with(str(data))


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_eval_takes_its_server_workers_and_candidates_with_it(env: dict[str, str], tmp_path: Path, how: int) -> None:
    suite = make_suite(tmp_path, tasks=4, per_task=5, slow_s=0.3)
    run = "interrupted"
    # The candidates' directories are made in TMPDIR: this test's own, so that candidates of other
    # codeexec processes on the machine are not taken for its own.
    candidates = tmp_path / "candidates"
    candidates.mkdir()
    env = {**env, "TMPDIR": str(candidates)}
    command = start(env, "eval", "--problems", str(suite.problems), "--samples", str(suite.samples), "--run", run)
    url = EmbeddedServer(tmp_path / "data").url
    markers = (str(tmp_path / "data"), f"local-{command.pid}@", str(candidates))
    hang = time.monotonic() + HANG_S
    while True:  # until the sweep is under way: a result recorded, candidates running
        assert command.poll() is None, command.communicate()
        assert time.monotonic() < hang, "the sweep never got under way"
        try:
            if int(redis.Redis.from_url(url).hget(keys.stats(run), keys.DONE) or 0) >= 1:
                break
        except redis.RedisError:
            pass
        time.sleep(0.05)
    assert processes_with(*markers, cwd=[str(candidates)])
    command.send_signal(how)
    command.wait()
    wait_for_orphans()
    assert not processes_with(*markers, cwd=[str(candidates)])
    # The next command finds no stale server or worker, and finishes the run with exact counts.
    out = codeexec(env, "status", run, "--wait")
    assert out.returncode == 0, out.stderr
    document = json.loads(codeexec(env, "report", run, "--json").stdout)
    assert {task: (t["n"], t["c"]) for task, t in document["tasks"].items()} == {
        task: (suite.n[task], suite.c[task]) for task in suite.n
    }
    wait_for_orphans()
    assert not processes_with(*markers[:1])
