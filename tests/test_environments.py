"""Environments (worker/environments.py, producer/local/venvs.py): one built from PyPI into a data
directory, its candidates run in it and find its modules preloaded in fork mode, and only workers that
have it take a run's jobs. A small environment stands in for BigCodeBench's (bench/ builds that one)."""

from __future__ import annotations

import hashlib
import json
import os
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.result import Outcome
from codeexec.worker import environments
from codeexec.worker.judging.kinds.suite import run_suite
from helpers import Worker, wait_done, write_jsonl
from helpers import codeexec as cli

pytestmark = pytest.mark.once  # in virtualenvs of their own

PACKAGE = "pyjokes==0.6.0"  # pure Python, a few kB: what the environment has and the worker's Python has not
NLTK = "nltk==3.9.1"  # for the NLTK data an environment is built with
TEST = """
import sys, unittest

class TestCases(unittest.TestCase):
    def test_the_environment_s_module(self):
        import pyjokes
        self.assertTrue(pyjokes.__file__.startswith(sys.prefix))
        self.assertEqual(f(), 1)
"""


def nltk_server(root: Path) -> str:
    """An NLTK data server of one package, "stopwords" (two English words), as files; its index's URL."""
    archive = root / "stopwords.zip"
    with zipfile.ZipFile(archive, "w") as package:
        package.writestr("stopwords/english", "codeexec\nfixture\n")
    index = root / "index.xml"
    index.write_text(
        '<?xml version="1.0"?>\n<nltk_data><packages>'
        f'<package id="stopwords" subdir="corpora" url="{archive.as_uri()}" size="{archive.stat().st_size}" '
        f'unzipped_size="17" checksum="{hashlib.md5(archive.read_bytes()).hexdigest()}" unzip="1"/>'
        "</packages><collections/></nltk_data>\n"
    )
    return index.as_uri()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory holding the environment "tiny", built once by the command line, as a user would,
    with NLTK data from a server of the test's own: one package it has, one it has not."""
    data_dir = tmp_path_factory.mktemp("envs") / "data"
    requirements = data_dir.parent / "requirements.txt"
    requirements.write_text(f"{PACKAGE}\n{NLTK}\n")
    env = {**os.environ, "CODEEXEC_DATA_DIR": str(data_dir)}
    done = cli(
        env, "env", "build", "tiny", "--requirements", str(requirements), "--preload", "pyjokes,no_such_module_here",
        "--nltk-data", "stopwords,no_such_corpus", "--nltk-index", nltk_server(data_dir.parent), timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "not preloaded: no_such_module_here (ModuleNotFoundError" in done.stdout
    assert "NLTK data: stopwords\n" in done.stdout
    assert "without NLTK data no_such_corpus: tasks that read it fail (" in done.stdout
    return data_dir


def test_an_environment_is_built_with_what_it_preloads(built: Path) -> None:
    (environment,) = environments.built(built)
    assert environment.name == "tiny" and environment.preload == ["pyjokes"]
    assert list(environment.not_preloaded) == ["no_such_module_here"]
    assert environment.nltk_data == ["stopwords"] and list(environment.missing_data) == ["no_such_corpus"]
    assert "no_such_corpus" in environment.missing_data["no_such_corpus"]  # nltk's own "not found" error
    assert Path(environment.python).is_file() and environment.python.startswith(str(built))
    listed = cli({**os.environ, "CODEEXEC_DATA_DIR": str(built)}, "env", "list")
    assert listed.returncode == 0 and "tiny: Python " in listed.stdout and "preloads pyjokes" in listed.stdout
    assert "without NLTK data no_such_corpus" in listed.stdout


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
    # As BigCodeBench's tasks do: nltk.download() fails (no network), and the data the build fetched is read.
    nltk_data = (
        "    def test_nltk_data(self):\n"
        "        import nltk\n"
        "        self.assertFalse(nltk.download('stopwords', quiet=True))\n"
        "        from nltk.corpus import stopwords\n"
        "        self.assertEqual(stopwords.words('english'), ['codeexec', 'fixture'])\n"
    )
    tests = SuiteTests(
        code=TEST + "    def test_preloaded(self):\n        self.assertEqual(was_loaded, PRELOADED)\n" + nltk_data,
        names=["TestCases.test_nltk_data", "TestCases.test_preloaded", "TestCases.test_the_environment_s_module"],
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
    assert json.loads(client.get("codeexec:{r}:meta"))["options"]["environment"] == "tiny"
    served = start_worker("served")
    assert wait_done(client, "r", 4) == 4
    report = json.loads(cli(env, "report", "r", "--json").stdout)
    assert report["outcomes"]["pass"] == 4, report
    hosts = {name.rpartition(" ")[2] for name in report["workers"]}
    assert hosts == {str(pid) for pid in served.pool_pids()}  # not one sample ran on the plain worker
    listed = {worker["pid"]: worker["environments"] for worker in json.loads(cli(env, "workers", "--json").stdout)}
    assert sorted(listed.values()) == [[], ["tiny"]]
