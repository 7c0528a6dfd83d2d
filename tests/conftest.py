"""Fixtures with real parts: a real Valkey server and real Celery worker processes."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from codeexec.producer.local import resident
from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.protocol.settings import get_settings
from helpers import ROOT, Server, Worker
from pythons import interpreters

# Candidates run under every supported Python the machine has; with CODEEXEC_TEST_CANDIDATES=own, under
# the one running the tests only (.ci/run's runs under other Pythons: its first run covers the rest).
INTERPRETERS = (
    {sys.version_info.minor: sys.executable} if os.environ.get("CODEEXEC_TEST_CANDIDATES") == "own" else interpreters()
)

#: .ci/run's passes under other Pythons, "i/n": the n passes share the suite, each taking every n-th test from
#: the i-th, so that each test runs under the host's Python and one other (tests of one function, and a
#: module's, alternate between them); of the end-to-end tests (a real Valkey: the `server` or `data_dir`
#: fixture), every 2n-th: half of them run under the host's Python only (they cross host code that the
#: others cover module by module, and they are most of a pass's time).
SHARE = os.environ.get("CODEEXEC_TEST_SHARE")


@pytest.hookimpl(trylast=True)  # after -m has left out what it leaves out: the shares are of what is left
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With SHARE, leave out the tests that another pass under another Python runs, or none does."""
    if not SHARE:
        return
    index, count = (int(part) for part in SHARE.split("/"))
    kept: list[pytest.Item] = []
    left: list[pytest.Item] = []
    seen = {True: 0, False: 0}  # end-to-end tests and the others, each counted apart
    for item in items:
        end_to_end = bool({"server", "data_dir"} & set(getattr(item, "fixturenames", ())))
        (kept if seen[end_to_end] % (count * (1 + end_to_end)) == index - 1 else left).append(item)
        seen[end_to_end] += 1
    config.hook.pytest_deselected(items=left)
    items[:] = kept


# Commands the tests start stop their workers when they end, unless a test asks for warm ones
# (tests/test_resident.py): a resident left in a temporary data directory would outlive it.
os.environ["CODEEXEC_KEEP_WARM_S"] = "0"


@pytest.fixture(
    params=[
        pytest.param(
            path,
            id=f"py3.{minor}",
            marks=[] if path else pytest.mark.skip(reason=f"python3.{minor} is not on PATH nor in pyenv's versions"),
        )
        for minor, path in INTERPRETERS.items()
    ]
)
def candidate_interpreter(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each supported Python the machine has, as the interpreter that runs candidates."""
    monkeypatch.setenv("CODEEXEC_INTERPRETER", request.param)
    get_settings.cache_clear()
    yield request.param
    get_settings.cache_clear()


@pytest.fixture(params=["fresh", "fork"])
def isolation(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each isolation mode: a fresh interpreter per candidate, and a fork of a warm one (worker/process/zygote.py)."""
    monkeypatch.setenv("CODEEXEC_ISOLATION", request.param)
    get_settings.cache_clear()
    yield request.param
    get_settings.cache_clear()


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """A data directory of the private Valkey's, whose warm workers are stopped after the test (whatever
    a failed test left running)."""
    directory = (tmp_path / "data").resolve()
    yield directory
    resident.stop(directory)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedServer]:
    """A real Valkey server (the private-server code path) in a fresh data directory."""
    srv = EmbeddedServer(tmp_path / "valkey")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def client(server: EmbeddedServer) -> redis.Redis:
    return redis.Redis.from_url(server.url, decode_responses=True)


@pytest.fixture
def env(server: EmbeddedServer, tmp_path: Path) -> dict[str, str]:
    """Environment for codeexec processes pointed at the test server."""
    return {
        **os.environ,
        "CODEEXEC_REDIS_URL": server.url,
        "CODEEXEC_DATA_DIR": str(tmp_path / "data"),
    }


@pytest.fixture
def start_worker(env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Worker]]:
    started: list[Worker] = []

    def start(name: str = "w1", concurrency: int = 1, extra_env: dict[str, str] | None = None) -> Worker:
        log = tmp_path / f"{name}.log"
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "codeexec.producer.entry.cli", "worker"),
                *(f"--concurrency={concurrency}", f"--hostname={name}@%h"),
            ],
            env={**env, **(extra_env or {})},
            cwd=ROOT,
            stdout=log.open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        worker = Worker(name, process, log)
        started.append(worker)
        deadline = time.monotonic() + 30
        while len(worker.pool_pids()) < concurrency:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"worker {name} did not start:\n{log.read_text()}"
            time.sleep(0.05)
        return worker

    yield start
    for worker in started:
        if worker.process.poll() is None:
            worker.kill_whole()


@pytest.fixture
def serve(env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """`codeexec serve` on the test's Valkey (no local workers: start_worker starts them), stopped after."""
    started: list[Server] = []

    def start(*flags: str, extra_env: dict[str, str] | None = None) -> Server:
        server = Server({**env, **(extra_env or {})}, tmp_path / f"serve{len(started)}.log", *flags).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def service(serve: Callable[..., Server], start_worker: Callable[..., Worker]) -> Server:
    """A server with a worker of two processes behind it."""
    start_worker("w1", concurrency=2)
    return serve()
