"""Environments (worker/environments.py, producer/environments.py): one built from PyPI into a data
directory, its candidates run in it and find its modules preloaded in fork mode, and only workers that
have it take a run's jobs. A small environment stands in for BigCodeBench's (bench/ builds that one)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from codeexec.worker import environments
from codeexec.worker.judging.suites import run_suite
from codeexec.worker.models import SuiteTests
from codeexec.worker.result import Outcome
from helpers import Worker, wait_done, write_jsonl
from helpers import codeexec as cli

PACKAGE = "pyjokes==0.6.0"  # pure Python, a few kB: what the environment has and the worker's Python has not
TEST = """
import sys, unittest

class TestCases(unittest.TestCase):
    def test_the_environment_s_module(self):
        import pyjokes
        self.assertTrue(pyjokes.__file__.startswith(sys.prefix))
        self.assertEqual(f(), 1)
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding the environment "tiny", built once by the command line, as a user would."""
    data_dir = tmp_path_factory.mktemp("envs") / "data"
    requirements = data_dir.parent / "requirements.txt"
    requirements.write_text(PACKAGE + "\n")
    env = {**os.environ, "CODEEXEC_DATA_DIR": str(data_dir)}
    done = cli(
        env, "env", "build", "tiny", "--requirements", str(requirements), "--preload", "pyjokes,no_such_module_here",
        timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not preloaded: no_such_module_here (ModuleNotFoundError" in done.stdout
    return data_dir


def test_an_environment_is_built_with_what_it_preloads(built: Path) -> None:
    (environment,) = environments.built(built)
    assert environment.name == "tiny" and environment.preload == ["pyjokes"]
    assert list(environment.not_preloaded) == ["no_such_module_here"]
    assert Path(environment.python).is_file() and environment.python.startswith(str(built))
    listed = cli({**os.environ, "CODEEXEC_DATA_DIR": str(built)}, "env", "list")
    assert listed.returncode == 0 and "tiny: Python " in listed.stdout and "preloads pyjokes" in listed.stdout


def test_a_failed_build_leaves_no_environment(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("codeexec-surely-no-such-package==0.0.1\n")
    env = {**os.environ, "CODEEXEC_DATA_DIR": str(tmp_path / "data")}
    done = cli(env, "env", "build", "broken", "--requirements", str(requirements), timeout=600)
    assert done.returncode == 2 and "the environment was not built" in done.stderr
    assert environments.built(tmp_path / "data") == []
    assert "no environment is built" in cli(env, "env", "list").stdout
    assert cli(env, "env", "build", "Bad Name", "--requirements", str(requirements)).returncode == 2


@pytest.mark.usefixtures("isolation")
def test_its_candidates_run_in_it_with_its_modules_preloaded_in_fork_mode(built: Path, isolation: str) -> None:
    environment = environments.load(built, "tiny")
    assert environment is not None
    preloaded = "import sys\nwas_loaded = 'pyjokes' in sys.modules\ndef f():\n    return 1\n"
    tests = SuiteTests(
        code=TEST + "    def test_preloaded(self):\n        self.assertEqual(was_loaded, PRELOADED)\n",
        names=["TestCases.test_preloaded", "TestCases.test_the_environment_s_module"],
    )
    code = preloaded + f"PRELOADED = {isolation == 'fork'}\n"
    result = run_suite(code, tests, 60, environment.runner_options())
    assert result.exit_code is Outcome.PASS, result
    # The same test file in the worker's own Python: its module is not there.
    assert run_suite(code, tests, 60, {}).exit_code is Outcome.ASSERTION_FAIL


def test_only_workers_with_the_environment_take_its_jobs(
    built: Path,
    tmp_path: Path,
    env: dict[str, str],
    client: redis.Redis,
    start_worker: Callable[..., Worker],
) -> None:
    data_dir = Path(env["CODEEXEC_DATA_DIR"])
    environments.directory(data_dir).mkdir(parents=True)
    (environments.directory(data_dir) / "tiny").symlink_to(environments.directory(built) / "tiny")
    problems = write_jsonl(tmp_path / "problems.jsonl", [{"task_id": "t", "test_file": TEST}])
    samples = write_jsonl(tmp_path / "samples.jsonl", [{"task_id": "t", "solution": "def f():\n    return 1\n"}] * 4)
    start_worker("plain", extra_env={"CODEEXEC_ENVIRONMENTS": "[]"})
    submitted = cli(env, "submit", "--problems", str(problems), "--samples", str(samples), "--run", "r",
                    "--environment", "tiny")  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr
    deadline = time.monotonic() + 60
    while not json.loads(cli(env, "workers", "--json").stdout):  # the plain worker's first heartbeat
        assert time.monotonic() < deadline
        time.sleep(0.1)
    status = cli(env, "status", "r")
    assert "no live worker has the environment 'tiny'" in status.stdout, status.stdout
    assert json.loads(client.get("codeexec:{r}:meta"))["environment"] == "tiny"
    served = start_worker("served")
    assert wait_done(client, "r", 4) == 4
    report = json.loads(cli(env, "report", "r", "--json").stdout)
    assert report["outcomes"]["pass"] == 4, report
    hosts = {name.rpartition(" ")[2] for name in report["workers"]}
    assert hosts == {str(pid) for pid in served.pool_pids()}  # not one sample ran on the plain worker
    listed = {worker["pid"]: worker["environments"] for worker in json.loads(cli(env, "workers", "--json").stdout)}
    assert sorted(listed.values()) == [[], ["tiny"]]
