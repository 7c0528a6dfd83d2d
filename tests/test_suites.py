"""Tests that are a test file (worker/judging/kinds/suite.py, producer/inputs/testfiles.py): BigCodeBench's, ClassEval's
and codeexec's own shapes, judged as BigCodeBench 0.2.5 judges a task, each test's outcome kept. The
runner's tests run under every supported Python, in both isolation modes."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from codeexec.producer.inputs.files import InputError
from codeexec.producer.inputs.problems import BIGCODEBENCH_PATH, load_file, load_problems
from codeexec.producer.inputs.shapes import Reading, bigcodebench, test_file
from codeexec.producer.results.files.bigcodebench import status
from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.models import Problem, Sample, SampleKind
from codeexec.protocol.result import Outcome, RunResult, StoredResult
from codeexec.worker.judging.kinds.suite import run_suite
from codeexec.worker.judging.sample_program import program_for
from helpers import ROOT, write_jsonl
from helpers import codeexec as cli

SHARED = ROOT.parent / "shared" / "data"

# A task in BigCodeBench's shape: code_prompt's imports come back by calibration.
TESTS = """
import unittest
from unittest.mock import patch

class TestCases(unittest.TestCase):
    def test_double(self):
        self.assertEqual(task_func(2), 4)

    def test_negative(self):
        self.assertEqual(task_func(-3), -6)

    def test_uses_the_module(self):
        with patch(__name__ + ".helper", return_value=7):
            self.assertEqual(task_func.__globals__["helper"](), 7)

class NotRun(unittest.TestCase):  # BigCodeBench runs TestCases only (task 790 has such a class)
    def test_never(self):
        self.fail("BigCodeBench never runs this class")
"""
RECORD = {
    "task_id": "BigCodeBench/0",
    "complete_prompt": 'import os\n\ndef helper():\n    return 1\n\ndef task_func(x):\n    """Double x."""\n',
    "code_prompt": "import os\n\ndef helper():\n    return 1\n\ndef task_func(x):\n",
    "test": TESTS,
    "entry_point": "task_func",
    "canonical_solution": "    return 2 * x\n",
}


def bcb(**changes: Any) -> Problem:
    """The task above, with changes to its record (the test, say) or to its SuiteTests (`suite_*`)."""
    suite = {key.removeprefix("suite_"): value for key, value in changes.items() if key.startswith("suite_")}
    record = RECORD | {key: value for key, value in changes.items() if not key.startswith("suite_")}
    made = bigcodebench.problem(record, Reading())
    assert isinstance(made.tests, SuiteTests)
    return made.model_copy(update={"tests": made.tests.model_copy(update=suite)})


def run(problem: Problem, text: str, kind: SampleKind = SampleKind.SOLUTION, **options: object) -> RunResult:
    code = program_for(problem, Sample(kind=kind, text=text))
    assert code is not None and isinstance(problem.tests, SuiteTests)
    return run_suite(code, problem.tests, None, dict(options))


runner = pytest.mark.usefixtures("isolation", "candidate_interpreter")


@runner
def test_a_sample_passes_when_every_test_of_test_cases_passes() -> None:
    result = run(bcb(), "def task_func(x):\n    return 2 * x\n")
    assert result.exit_code is Outcome.PASS, result
    assert [(test.name, test.outcome) for test in result.tests] == [
        ("TestCases.test_double", "pass"),
        ("TestCases.test_negative", "pass"),
        ("TestCases.test_uses_the_module", "pass"),
    ]
    assert (result.passed, result.total, result.score) == (3, 3, 1.0)
    # A completion continues complete_prompt, as BigCodeBench's "completion" field does.
    assert run(bcb(), "    return x + x\n", SampleKind.COMPLETION).exit_code is Outcome.PASS


@runner
def test_each_failing_test_is_named_and_the_score_counts_the_tests() -> None:
    result = run(bcb(), "def task_func(x):\n    return abs(2 * x)\n")
    assert result.exit_code is Outcome.ASSERTION_FAIL
    assert (result.passed, result.total) == (2, 3) and result.score == pytest.approx(2 / 3)
    failed = [test for test in result.tests if test.outcome != "pass"]
    assert [test.name for test in failed] == ["TestCases.test_negative"]
    assert "AssertionError: 6 != -6" in failed[0].detail and 'File "__test__.py"' in failed[0].detail
    assert "test_negative" in result.detail
    verdict, details = status(StoredResult.from_run(result))
    assert verdict == "fail" and list(details) == ["test_negative"]


@runner
@pytest.mark.parametrize(
    ("solution", "test", "outcome", "message"),
    [
        ("def task_func(x) return", TESTS, Outcome.SYNTAX_ERROR, "expected ':'"),
        ("undefined_name\n", TESTS, Outcome.ERROR, "name 'undefined_name' is not defined"),
        (
            "def task_func(x):\n    return x\n",
            TESTS.replace("class TestCases", "class Renamed"),
            Outcome.ERROR,
            "TestCases",
        ),
    ],
    ids=["syntax", "top-level-exception", "no-TestCases"],
)
def test_a_module_that_does_not_load_fails_with_bigcodebench_s_all(
    solution: str, test: str, outcome: Outcome, message: str
) -> None:
    problem = bcb(suite_code=test)
    result = run(problem, solution)
    assert result.exit_code is outcome, result
    assert result.tests == [] and result.passed == 0 and result.total == 3
    verdict, details = status(StoredResult.from_run(result))
    assert verdict == "fail" and list(details) == ["ALL"] and message in details["ALL"]


@runner
def test_a_sample_that_runs_out_of_time_is_a_timeout_and_keeps_the_tests_before() -> None:
    # Tests run in name order: test_double passes, then test_negative never returns.
    solution = "def task_func(x):\n    while x < 0:\n        pass\n    return 2 * x\n"
    result = run(bcb(suite_time_limit_s=1.0), solution)
    assert result.exit_code is Outcome.TIMEOUT, result
    assert [(test.name, test.outcome) for test in result.tests] == [("TestCases.test_double", "pass")]
    assert (result.passed, result.total) == (1, 3)
    assert status(StoredResult.from_run(result)) == ("timeout", {})


@runner
def test_bigcodebench_s_harness_is_in_place() -> None:
    test = """
import unittest, builtins, time

class TestCases(unittest.TestCase):
    def test_harness(self):
        self.assertEqual(os.environ["TZ"], "UTC")
        self.assertEqual(time.strftime("%z", time.localtime(0)), "+0000")
        self.assertIsNone(builtins.exit)
        self.assertIs(environ, os.environ)  # BigCodeBench puts os, sys and os.environ in the module
        self.assertIn("__test__", sys.modules)
        self.assertEqual(__file__, "__test__.py")
        print("x" * (4 << 20))  # swallowed, as BigCodeBench's swallow_io swallows it: no output cap
        with self.assertRaises(OSError):
            input()
"""
    result = run(bcb(test=test), "def task_func(x):\n    return 2 * x\n")
    assert result.exit_code is Outcome.PASS, result
    plain = run(bcb(test=test, suite_harness="codeexec"), "def task_func(x):\n    return 2 * x\n")
    assert plain.exit_code is not Outcome.PASS  # the same file without the harness: no environ, no TZ


@runner
def test_bigcodebench_s_process_functions_are_in_place() -> None:
    # What its safe_environment and swallow_io make of os's and subprocess's process functions, and a Pool,
    # whose workers close their stdin as they start (the harness's stream is one they can close).
    test = """
import multiprocessing, signal, subprocess, unittest

def square(x):
    return x * x

class TestCases(unittest.TestCase):
    def test_the_guards(self):
        self.assertEqual(os.system("kill -9 1"), 0)  # a "kill" command is not run
        self.assertEqual(subprocess.check_output("ps aux", shell=True), b"")  # nor a "ps" one
        self.assertEqual(subprocess.run(["sh", "-c", "echo hi"]).stdout, b"hi\\n")  # output captured unasked
        self.assertIsNone(os.execv("/bin/sh", ["sh"]))  # nothing is executed, and this process goes on
        started = subprocess.Popen(["sleep", "30"])
        self.assertEqual(os.getpgid(started.pid), started.pid)  # in a session of its own
        started.terminate()
        self.assertEqual(started.wait(), -signal.SIGTERM)

    def test_only_what_it_started_is_signalled(self):
        other = multiprocessing.Process(target=signal.pause)
        other.start()
        os.kill(other.pid, signal.SIGKILL)  # not started by Popen: spared
        other.join(0.5)
        self.assertTrue(other.is_alive())
        other.kill()  # multiprocessing's kill is os.kill too
        other.join(0.5)
        self.assertTrue(other.is_alive())

    def test_a_pool(self):
        with multiprocessing.Pool(2) as pool:
            self.assertEqual(pool.map(square, [1, 2, 3]), [1, 4, 9])
            pool.close()
            pool.join()
"""
    result = run(bcb(test=test), "def task_func(x):\n    return 2 * x\n")
    assert result.exit_code is Outcome.PASS, result
    plain = run(bcb(test=test, suite_harness="codeexec"), "def task_func(x):\n    return 2 * x\n")
    assert {test.name for test in plain.tests if test.outcome != "pass"} == {
        "TestCases.test_the_guards",
        "TestCases.test_only_what_it_started_is_signalled",
    }


@runner
def test_calibration_puts_back_the_imports_an_answer_left_out() -> None:
    # BigCodeBench's calibrated programs: code_prompt and a stub body before the sample's own code.
    uses_helper = "def task_func(x):\n    return 2 * x * helper()\n"
    assert run(bcb(), uses_helper).exit_code is Outcome.PASS
    assert run(bcb(suite_calibration=""), uses_helper).exit_code is Outcome.ASSERTION_FAIL  # NameError in each test


@runner
def test_bigcodebench_s_tasks_run_programs_and_its_limits_are_in_place() -> None:
    test = """
import resource, subprocess, unittest

class TestCases(unittest.TestCase):
    def test_runs_a_program(self):
        self.assertEqual(subprocess.run(["sh", "-c", "echo hi"], capture_output=True, text=True).stdout, "hi\\n")

    def test_limits(self):
        self.assertEqual(resource.getrlimit(resource.RLIMIT_STACK)[0], 10 << 20)
        self.assertGreaterEqual(resource.getrlimit(resource.RLIMIT_AS)[0], 30 << 30)
        self.assertGreaterEqual(resource.getrlimit(resource.RLIMIT_DATA)[0], 30 << 30)
"""
    result = run(bcb(test=test), "def task_func(x):\n    return x\n")
    assert result.exit_code is Outcome.PASS, result
    strict = run(bcb(test=test, suite_relaxed=False), "def task_func(x):\n    return x\n")
    assert strict.exit_code is Outcome.ERROR and "denied module: subprocess" in strict.detail  # the import guard


@pytest.mark.usefixtures("isolation")  # pytest is this Python's: the others on the machine may not have it
def test_a_pytest_file_runs_under_pytest() -> None:
    test = """
import pytest

@pytest.fixture
def three():
    return 3

@pytest.mark.parametrize("x", [1, 2])
def test_identity(x):
    assert f(x) == x

def test_fixture(three):
    assert f(three) == 3

class TestMore:
    def test_fails(self):
        assert f(0) == 1
"""
    problem = test_file.problem({"task_id": "p", "test_file": test}, Reading())
    assert isinstance(problem.tests, SuiteTests) and problem.tests.framework == "pytest"
    assert problem.tests.names == ["TestMore.test_fails", "test_identity", "test_fixture"]
    result = run(problem, "def f(x):\n    return x\n")
    assert result.exit_code is Outcome.ASSERTION_FAIL, result
    outcomes = {test.name: test.outcome for test in result.tests}
    assert outcomes == {"test_identity[1]": "pass", "test_identity[2]": "pass", "test_fixture": "pass",
                        "TestMore.test_fails": "fail"}  # fmt: skip
    assert (result.passed, result.total) == (3, 4)  # the parametrization's two count


def test_a_pytest_file_where_pytest_is_not_installed_says_so(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    problem = test_file.problem({"task_id": "p", "test_file": "def test_a():\n    assert f() == 1\n"}, Reading())
    result = run(problem, "def f():\n    return 1\n", interpreter=str(tmp_path / "bare" / "bin" / "python"))
    assert result.exit_code is Outcome.ERROR and "pytest is not installed in the candidates' Python" in result.detail


def test_the_bundled_problem_sets_load() -> None:
    full, hard = load_problems("bigcodebench"), load_problems("bigcodebench-hard")
    assert len(full) == 1140 and len(hard) == 148 and set(hard) < set(full)
    for problem in full.values():
        assert isinstance(problem.tests, SuiteTests) and problem.tests.classes == ["TestCases"]
        assert problem.tests.names and problem.tests.environment == "bigcodebench"
        # no time limit of its own: its harness's 240 s (worker/judging/kinds/suite.py)
        assert problem.tests.time_limit_s is None and problem.tests.relaxed
    with gzip.open(BIGCODEBENCH_PATH, "rt") as rows:
        first = json.loads(next(rows))
    assert full[first["task_id"]].tests.before_program() == first["code_prompt"] + "\n    pass\n"


@pytest.mark.skipif(not (SHARED / "classeval").is_dir(), reason="../shared/data/classeval is not beside the clone")
def test_classeval_loads() -> None:
    problems = load_file(SHARED / "classeval" / "ClassEval_data.json")
    assert len(problems) == 100
    words = problems["ClassEval_97"].tests
    # Listed with a leading space there.
    assert isinstance(words, SuiteTests) and words.classes and "Words2NumbersTestMain" in words.classes


@pytest.mark.parametrize(
    ("record", "error"),
    [
        ({"task_id": "t", "test_file": "def test_x(:\n"}, "the test file does not compile"),
        ({"task_id": "t", "test_file": "import unittest\n", "framework": "unittest"}, "holds no unittest tests"),
        ({"task_id": "t", "test_file": "def test_x():\n    pass\n", "test_classes": ["Nope"]}, "defines no class Nope"),
        ({"task_id": "t", "test_file": "def test_x():\n    pass\n", "framework": "nose"}, "framework"),
    ],
    ids=["syntax", "no-tests", "no-class", "framework"],
)
def test_a_bad_test_file_is_an_error_naming_the_line(tmp_path: Path, record: dict[str, Any], error: str) -> None:
    path = write_jsonl(
        tmp_path / "problems.jsonl", [{"task_id": "ok", "test_file": "def test_a():\n    pass\n"}, record]
    )
    with pytest.raises(InputError, match=f"{path}:2: .*{error}"):
        load_file(path)


def test_bigcodebench_s_results_files(tmp_path: Path, env: dict[str, str]) -> None:
    # On the workers' own Python (--environment none): these tasks need nothing installed. Task 1's
    # canonical solution is wrong: the ground truth, run by eval beside the samples, names it.
    other = RECORD | {"task_id": "BigCodeBench/1", "canonical_solution": "    return x\n"}
    problems = write_jsonl(tmp_path / "problems.jsonl", [RECORD, other])
    samples = write_jsonl(
        tmp_path / "model--bigcodebench-instruct--vllm-0-1-sanitized_calibrated.jsonl",
        [
            {"task_id": "BigCodeBench/0", "solution": "def task_func(x):\n    return 2 * x\n"},
            {"task_id": "BigCodeBench/0", "solution": "def task_func(x):\n    return abs(2 * x)\n"},
            {"task_id": "BigCodeBench/1", "solution": "raise SystemExit(3)\n"},
        ],
    )
    out, per_sample = tmp_path / "model_eval_results.json", tmp_path / "per-sample.jsonl"
    done = cli(
        env, "eval", "--problems", str(problems), "--samples", str(samples), "--k", "1", "--workers", "1",
        "--environment", "none", "--bigcodebench-results", str(out), "--per-sample", str(per_sample), "--json",
        "--html", str(tmp_path / "report.html"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    evaluated = json.loads(out.read_text())["eval"]
    assert [entry["status"] for entry in evaluated["BigCodeBench/0"]] == ["pass", "fail"]
    assert list(evaluated["BigCodeBench/0"][1]["details"]) == ["test_negative"]
    assert evaluated["BigCodeBench/0"][0]["solution"] == RECORD["code_prompt"] + "\n    pass\n" + (
        "def task_func(x):\n    return 2 * x\n"
    )
    assert evaluated["BigCodeBench/1"] == [
        {"task_id": "BigCodeBench/1", "solution": evaluated["BigCodeBench/1"][0]["solution"], "status": "fail",
         "details": {"ALL": "3"}}
    ]  # fmt: skip
    summary = json.loads((tmp_path / "model_pass_at_k.json").read_text())
    assert summary == {"pass@1": 0.25, "model": "model", "split": "instruct", "subset": "full", "calibrated": True,
                       "gt_pass_rate": 0.5, "failed_tasks": ["BigCodeBench/1"]}  # fmt: skip
    assert "ground truth pass rate: 0.500 (run gt-" in done.stderr and "failed tasks: BigCodeBench/1" in done.stderr
    # report finds the ground truth made by eval, the same run (BigCodeBench's cache)
    again = cli(env, "report", json.loads(done.stdout)["run"], "--bigcodebench-results", str(out))
    assert again.returncode == 0 and "ground truth pass rate: 0.500" in again.stderr, again.stderr
    lines = [json.loads(line) for line in per_sample.open()]
    assert [[test["outcome"] for test in line.get("tests", [])] for line in lines] == [
        ["pass", "pass", "pass"], ["pass", "fail", "pass"], []
    ]  # fmt: skip
    page = (tmp_path / "report.html").read_text()
    assert "Tests that fail most" in page and "<code>TestCases.test_negative</code>" in page
    report = json.loads(done.stdout)
    limits = report["limits"]["test files"]
    assert "sandbox posture relaxed" in limits and "workers' own Python" in limits


def test_a_problem_set_s_environment_must_be_built_on_the_embedded_default(tmp_path: Path) -> None:
    problems = write_jsonl(tmp_path / "problems.jsonl", [RECORD])
    samples = write_jsonl(tmp_path / "samples.jsonl", [{"task_id": "BigCodeBench/0", "solution": "x = 1\n"}])
    env = {"PATH": "/usr/bin:/bin", "CODEEXEC_DATA_DIR": str(tmp_path / "data"), "HOME": str(tmp_path)}
    done = cli(env, "submit", "--problems", str(problems), "--samples", str(samples))
    assert done.returncode == 2
    assert "environment 'bigcodebench', which is not built here: codeexec env build bigcodebench" in done.stderr
    assert not (tmp_path / "data" / "valkey").exists()  # nothing started, nothing enqueued
