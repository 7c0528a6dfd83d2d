"""Competitive-programming problems: stdin/stdout and call-based tests, each shape of problem file, the
judging modes and the checker, each test's verdict, and runs end to end with real Valkey and workers."""

from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from pathlib import Path
from typing import Any

import pytest
from test_timelimit import CORES, start_hogs, stop

import codeexec
from codeexec.producer.inputs.files import InputError
from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.kinds import CallTests, CaseTests, StdinTests
from codeexec.protocol.models import Problem
from codeexec.protocol.result import Outcome, RunResult, Verdict
from codeexec.protocol.run import RunMeta, RunOptions
from codeexec.worker.judging.helpers.cases import Plan
from codeexec.worker.judging.helpers.outputs import same_stdout, same_value
from codeexec.worker.judging.kinds import call, stdin
from codeexec.worker.judging.sample_program import last_python_code, lcb_code
from helpers import codeexec as cli
from helpers import write_jsonl

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "competitive"
both_isolations = pytest.mark.usefixtures("isolation")
A, W, T, R, M, OL = (
    Verdict.ACCEPTED,
    Verdict.WRONG_ANSWER,
    Verdict.TIME_LIMIT,
    Verdict.RUNTIME_ERROR,
    Verdict.MEMORY_LIMIT,
    Verdict.OUTPUT_LIMIT,
)


def meta(**fields: Any) -> RunMeta:
    base: dict[str, Any] = dict(
        run="r", created=0, problems="p", samples_path="s", samples_sha256="", n_samples=1, n_tasks=1
    )
    return RunMeta(**base, options=RunOptions(k=[1], timeout_s=fields.pop("time_limit_s", 2.0), **fields))


def judge(code: str, tests: CaseTests, **fields: Any) -> RunResult:
    """`code` judged on `tests` as a worker judges it, with the run's `fields`."""
    plan = Plan.of(tests, meta(**fields), {})
    return (stdin if isinstance(tests, StdinTests) else call).run_tests(code, tests, plan)


def stdin_tests(*pairs: tuple[str, str], **fields: Any) -> StdinTests:
    return StdinTests(inputs=[i for i, _ in pairs], outputs=[o for _, o in pairs], **fields)


DOUBLE_PAIRS = (("3\n", "6\n"), ("5\n", "10\n"), ("1 2\n", "6\n"))
DOUBLE = stdin_tests(*DOUBLE_PAIRS)


# ---- running: a real standard input, a process per test ------------------------------------------------


@both_isolations
@pytest.mark.parametrize(
    "code",
    [
        "print(sum(map(int, input().split())) * 2)",
        "import sys\nfor line in sys.stdin:\n    print(sum(map(int, line.split())) * 2)",
        "import sys\nprint(sum(map(int, sys.stdin.buffer.read().split())) * 2)",
        "import sys\nlines = sys.stdin.buffer.readline() + sys.stdin.buffer.readline()\n"
        "print(2 * sum(map(int, lines.split())))",
        "print(sum(map(int, open(0).read().split())) * 2)",
        "from sys import stdin, stdout\nstdout.write(str(2 * sum(map(int, stdin.readline().split()))) + '\\n')",
        "import threading\ndef main():\n    print(2 * sum(map(int, input().split())))\n"
        "threading.Thread(target=main).start()",
        "def main():\n    print(2 * sum(map(int, input().split())))\nif __name__ == '__main__':\n    main()",
        "import os\nos.write(1, str(2 * sum(map(int, os.read(0, 100).split()))).encode())",
        "print(2 * sum(map(int, input().split())))\nexit()",
    ],
    ids=["input", "for-line", "buffer", "buffer-readline", "open0", "from-sys", "thread", "main-guard", "fd", "exit"],
)
def test_every_way_of_reading_stdin_and_writing_stdout_works(code: str) -> None:
    # LiveCodeBench's grader fails for-line (a runtime error), buffer-readline (twice the first line),
    # open0 and from-sys (wrong answers): docs/judging.md.
    result = judge(code, DOUBLE)
    assert result.exit_code is Outcome.PASS, result.detail
    assert result.verdicts == [A, A, A]


@both_isolations
def test_each_test_runs_in_a_process_of_its_own() -> None:
    # A test that finds what an earlier one left behind (a module attribute, a file) fails.
    code = (
        "import builtins, os\n"
        "print('fresh' if not hasattr(builtins, 'seen') and not os.path.exists('mark') else 'reused')\n"
        "builtins.seen = True\nopen('mark', 'w').close()\n"
    )
    tests = stdin_tests(("", "fresh"), ("", "fresh"), ("", "fresh"))
    result = judge(code, tests)
    assert result.verdicts == [A, A, A], result.detail


def _contained(result: RunResult) -> None:
    """Skip where the kernel refused what the check relies on (the result says so: docs/security.md)."""
    refused = {name: result.protections.get(name) for name in ("pid_namespace", "signals")}
    if any(state != "on" for state in refused.values()):
        pytest.skip(f"the kernel refused: {refused}")


@both_isolations
def test_nothing_a_test_started_outlives_it_and_no_test_reaches_its_runner(tmp_path: Path) -> None:
    # Test 1 leaves a process behind (a session of its own, holding a lock in /dev/shm, asleep) and tries
    # to kill the runner, its parent; test 2 finds the lock free only if that process is gone. Were the
    # runner killed, test 2 would not run. The process holds 256 MiB it has written: a killed process frees
    # its memory before it lets go of its files, so test 2 would find the lock held if it started as soon
    # as the kill was sent (kill() returns before the process has ended; the runner waits for it to end).
    lock = f"/dev/shm/codeexec-test-{tmp_path.name}"
    code = (
        "import fcntl, os, time\n"
        f"held = open({lock!r}, 'a')\n"
        "if input() == 'first':\n"
        "    ready, go = os.pipe()\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        fcntl.flock(held, fcntl.LOCK_EX)\n"
        "        weight = bytearray(256 << 20)\n"
        "        for page in range(0, len(weight), 4096):\n"
        "            weight[page] = 1\n"
        "        os.write(go, b'x')\n"
        "        time.sleep(60)\n"
        "        os._exit(0)\n"
        "    os.read(ready, 1)\n"
        "    try:\n        os.kill(os.getppid(), 9)\n    except OSError:\n        pass\n"
        "    print('left one')\n"
        "else:\n"
        "    try:\n        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)\n        print('alone')\n"
        "    except OSError:\n        print('it lives')\n"
    )
    try:
        tests = stdin_tests(("first\n", "left one"), ("second\n", "alone"), memory_bytes=1 << 30)
        result = judge(code, tests, all_tests=True)
    finally:
        Path(lock).unlink(missing_ok=True)
    _contained(result)
    assert result.verdicts == [A, A], result.detail


@both_isolations
def test_a_test_is_judged_on_what_it_printed_however_it_ended() -> None:
    # os._exit(0) ends a script as exit() does, if without flushing: what reached stdout is judged.
    assert judge(
        "import os, sys\nsys.stdout.write(str(2 * int(input())) + '\\n')\nsys.stdout.flush()\nos._exit(0)", DOUBLE
    ).verdicts[:2] == [A, A]
    assert judge("import os\nprint(2 * int(input()))\nos._exit(3)", DOUBLE).verdicts == [R]
    killed = judge("import os, signal\nprint(2 * int(input()))\nos.kill(os.getpid(), signal.SIGSEGV)", DOUBLE)
    assert killed.verdicts == [R] and "signal 11" in killed.detail


@pytest.mark.parametrize("isolation", ["fork", "fresh"])
def test_stdin_tests_without_a_pid_namespace(isolation: str) -> None:
    # Without a namespace the runner ends each test's process group instead of the namespace's processes.
    plan = Plan.of(DOUBLE, meta(), {"isolation": isolation, "pid_namespace": "off"})
    result = stdin.run_tests("print(2 * sum(map(int, input().split())))", DOUBLE, plan)
    assert result.protections["pid_namespace"] == "off"
    assert result.verdicts == [A, A, A], result.detail


@both_isolations
def test_each_tests_verdict_and_the_first_failing_one() -> None:
    assert judge("x = int(input())\nprint(2 * x if x != 5 else 0)", DOUBLE).verdicts == [A, W]
    wrong = judge("x = int(input())\nprint(2 * x if x != 5 else 0)", DOUBLE)
    assert wrong.exit_code is Outcome.ASSERTION_FAIL and wrong.first_failures == {"tests": 1}
    assert wrong.detail == "test 2 of 3: wrong_answer: expected '10\\n', got '0\\n'"
    assert judge("print(1 // (int(input()) - 3))", DOUBLE).verdicts == [R]
    assert judge("import sys\nprint(6)\nsys.exit(1)", DOUBLE, judge_mode="exact").verdicts == [R]
    timed = judge("x = int(input())\nwhile x == 5:\n    pass\nprint(2 * x)", DOUBLE)
    assert (timed.exit_code, timed.verdicts) == (Outcome.TIMEOUT, [A, T])
    assert judge("print('x' * (1 << 22))", DOUBLE).verdicts == [OL]
    assert judge("x = bytearray(1 << 33)", DOUBLE).verdicts == [M]
    syntax = judge("def f(:\n", DOUBLE)
    assert (syntax.exit_code, syntax.verdicts) == (Outcome.SYNTAX_ERROR, [R])


def test_all_tests_run_on_and_score_the_share_passed() -> None:
    code = "s = input()\nx = sum(map(int, s.split()))\nprint(1 // 0 if x == 5 else x if ' ' in s else 2 * x)"
    result = judge(code, DOUBLE, all_tests=True)
    assert result.verdicts == [A, R, W] and result.score == pytest.approx(1 / 3)
    assert result.passed == 1 and result.total == 3 and result.first_failures == {"tests": 1}


def test_a_problems_own_time_limit_and_memory_limit() -> None:
    slow = "import time\ntime.sleep(0.6)\nprint(2 * int(input()))"
    tests = stdin_tests(("3\n", "6\n"))
    assert judge(slow, tests).verdicts == [A]  # the run's 2 s
    assert judge(slow, stdin_tests(("3\n", "6\n"), time_limit_s=0.3)).verdicts == [T]
    hungry = "x = bytearray(300 << 20)\nprint(6)"
    assert judge(hungry, tests).verdicts == [A]
    assert judge(hungry, stdin_tests(("3\n", "6\n"), memory_bytes=256 << 20)).verdicts == [M]


@pytest.fixture(params=["idle", "4x oversubscribed"])
def load(request: pytest.FixtureRequest) -> Any:
    hogs = start_hogs(3 * CORES) if request.param != "idle" else []
    yield request.param
    stop(hogs)


@pytest.mark.once  # under load: what the scheduler does
@both_isolations
def test_time_limits_do_not_move_with_the_load(load: str) -> None:
    # ~0.3 s of computing under a limit of 1 s passes on any load; 1.5 s of sleep fails on any.
    tests = stdin_tests(("3000000\n", "3000000\n"), time_limit_s=1.0)
    spin = "n = 0\nx = int(input())\nwhile n < x:\n    n += 1\nprint(n)"
    assert judge(spin, tests).verdicts == [A], load
    assert judge("import time\ntime.sleep(1.5)\nprint(3000000)", tests).verdicts == [T]


@pytest.mark.once  # under load: what the scheduler does
def test_a_compiled_program_s_time_limit_does_not_move_with_the_load(load: str) -> None:
    """The same for C++ and Java, whose each test is a run of the compiled program: a JVM's main thread only
    waits for the thread that runs the program, which is the one charged with its waits for a CPU."""
    count = ("3000000000\n", "3000000000\n")  # a loop of ~0.9 s here, and a JVM's start, under a limit of 3 s
    cpp = "#include <cstdio>\nint main() { long x, n = 0; scanf(\"%ld\", &x);\n" \
        '  for (volatile long i = 0; i < x; i += 4) n += 4;\n  printf("%ld\\n", n); }\n'  # fmt: skip
    java = "public class Main { public static void main(String[] a) {\n" \
        "  long x = new java.util.Scanner(System.in).nextLong(), n = 0; while (n < x) n++;\n" \
        "  System.out.println(n); } }\n"  # fmt: skip
    for language, program in (("cpp", cpp), ("java", java)):
        verdicts = judge(program, stdin_tests(count, language=language, time_limit_s=3.0)).verdicts
        assert verdicts == [A], (language, load)
    sleeper = java.replace("while (n < x) n++;", "Thread.sleep(4000); n = x;").replace(
        "String[] a)", "String[] a) throws Exception"
    )
    assert judge(sleeper, stdin_tests(count, language="java", time_limit_s=3.0)).verdicts == [T]


@pytest.mark.once  # ~20 s
@pytest.mark.skipif(os.geteuid() != 0, reason="a real-time busy loop needs root (CAP_SYS_NICE)")
def test_a_test_s_wall_clock_time_on_a_loaded_machine_is_not_its_runner_s() -> None:
    # A real-time busy loop on CPU 0 leaves a program pinned there 5-10 % of it: 1 s of CPU takes 10-20 s of wall
    # clock, past its runner's own limit (the test's 2 s and 5 s for itself), which charged the runner the
    # test's wall-clock time: a time-out (in CI, a JVM beside busy loops). The test is charged its 1 s. The
    # loop runs in a process the test started and waits for, as a compiler driver waits for its compiler: its
    # waits are the test's too (in CI, g++ was charged cc1plus's, past its 15 s).
    spin = "#include <sched.h>\n#include <cstdio>\n#include <ctime>\n#include <sys/wait.h>\n#include <unistd.h>\n" \
        "int main() { if (fork() == 0) { cpu_set_t one; CPU_ZERO(&one);\n" \
        "  CPU_SET(0, &one); sched_setaffinity(0, sizeof one, &one);\n" \
        "  while (clock() < CLOCKS_PER_SEC) {}\n  return 0; }\n  wait(nullptr); puts(\"done\"); }\n"  # fmt: skip
    tests = stdin_tests(("\n", "done\n"), language="cpp", time_limit_s=2.0)
    plan = Plan.of(tests, meta(), {"wall_ceiling_factor": 40})
    assert stdin.run_tests(spin, tests, plan).verdicts == [A]  # and compiled before the loop starts
    hogs = start_hogs(1, cpu=0, realtime=True)
    try:
        result = stdin.run_tests(spin, tests, plan)
    finally:
        stop(hogs)
    assert result.verdicts == [A], result.detail
    assert 1.0 <= result.charged_s < 2.0


# ---- the judging modes -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("actual", "expected", "lcb", "exact"),
    [
        ("6\n", "6", True, True),
        ("6  \n\n\n", "6\n", True, False),
        ("  6\n", "6", True, False),
        ("1  2\n", "1 2", True, False),
        ("6.0\n", "6", True, False),
        ("100\n", "1e2", True, False),
        ("0.3\n", "0.30000000000000004", False, False),
        ("yes\n", "YES", False, False),
        ("1\n2\n", "1 2", False, False),
        ("1 2\n", "1\n2", False, False),
        ("", "0", False, False),
        ("abc def\n", "abc  def", False, False),
    ],
)
def test_lcb_and_exact_compare_as_their_references(actual: str, expected: str, lcb: bool, exact: bool) -> None:
    assert same_stdout("lcb", actual, expected) is lcb
    assert same_stdout("exact", actual, expected) is exact


# Each row as the reference itself judged it (hendrycks/apps@362aedc and verl's prime_code@b178a3c, run on
# these outputs: docs/competitive.md).
@pytest.mark.parametrize(
    ("actual", "expected", "apps", "prime"),
    [
        ("6\n", "6\n", True, True),
        ("2 1\n", "1 2", True, False),
        ("1.00001\n", "1.0", True, True),
        ("1.0004\n", "1.0", True, False),
        ("yes\n", "YES", False, False),
        ("01\n", "1", True, False),
        ("100001\n", "100000", True, False),
        ("-100001\n", "-100000", True, True),
        ("1 1 2\n", "1 2 2", True, False),
        ("1\t2\n", "1 2", True, False),
        ("3 4\n1 2\n", "1 2\n3 4", True, False),
        ("0.5004 0.2501\n", "0.5 0.25", True, False),
        ("1\n\n2\n", "1\n2", True, True),
        ("1 2\n3\n", "1 2 \n3", True, True),
        ("1\n2\n", "1 2", False, False),
    ],
)
def test_the_apps_and_prime_cascades_judge_as_their_references(
    actual: str, expected: str, apps: bool, prime: bool
) -> None:
    assert same_stdout("apps", actual, expected) is apps
    assert same_stdout("prime", actual, expected) is prime


def test_a_calls_value_in_each_mode() -> None:
    assert same_value("lcb", (1, 2), [1, 2]) and same_value("lcb", 6.0, 6)
    assert not same_value("lcb", 0.1 + 0.2, 0.3) and not same_value("lcb", [(1, 2)], [[1, 2]])
    assert not same_value("exact", 6.0, 6) and same_value("exact", {"a": 1}, {"a": 1})
    for mode in ("apps", "prime"):  # APPS wraps an expected value in a list
        assert same_value(mode, 3, [3]) and same_value(mode, (1, 2), [1, 2]) and same_value(mode, [(1, 2)], [[[1, 2]]])
        assert not same_value(mode, 3, [4])


def test_the_lcb_prelude_is_there_for_a_program_that_needs_it() -> None:
    tests = stdin_tests(("4\n", "2\n0"))
    code = "print(isqrt(int(input())))\nprint(Counter('aa')['a'] - 2, end='')"
    assert judge(code, tests).verdicts == [A]  # isqrt, Counter: LiveCodeBench's star imports
    assert judge(code, tests, judge_mode="exact").verdicts == [R]  # no prelude: NameError
    big = "print(len(str(10 ** 5000)))"
    assert judge(big, stdin_tests(("", "5001"))).verdicts == [A]  # ints may print 50,000 digits, not 4,300
    assert judge(big, stdin_tests(("", "5001")), judge_mode="exact").verdicts == [R]


def test_a_checker_accepts_any_right_answer() -> None:
    # Any two positive numbers that sum to n: one expected answer, many right ones.
    checker = (
        "def check(input, expected, actual):\n"
        "    a, b = map(int, actual.split())\n"
        "    return a > 0 and b > 0 and a + b == int(input)\n"
    )
    tests = stdin_tests(("5\n", "1 4\n"), ("9\n", "1 8\n"))
    other = "n = int(input())\nprint(2, n - 2)"
    assert judge(other, tests).verdicts == [W]
    with_checker = StdinTests(**(tests.model_dump() | {"checker": checker}))
    assert judge(other, with_checker).verdicts == [A, A]
    assert judge("print(0, int(input()))", with_checker).verdicts == [W]
    raising = judge("print('x')", with_checker)  # the checker's int() raises: that output is wrong
    assert raising.verdicts == [W] and "the checker raised ValueError" in raising.detail
    broken = StdinTests(**(tests.model_dump() | {"checker": "def check(:\n"}))
    failed = judge(other, broken)
    assert failed.exit_code is Outcome.ERROR and "the problem's checker failed" in failed.detail


# ---- call-based tests ----------------------------------------------------------------------------------


CALLS = CallTests(inputs=[[1, 2], [3, 4], {"a": 5, "b": 6}], outputs=[3, 7, 11], entry_point="total")


@both_isolations
def test_calls_go_to_the_function_or_to_a_new_solutions_method() -> None:
    assert judge("def total(a, b):\n    return a + b", CALLS).verdicts == [A, A, A]
    solution = "class Solution:\n    def total(self, a: int, b: int) -> int:\n        return a + b"
    assert judge(solution, CALLS).verdicts == [A, A, A]
    assert judge("def total(a, b):\n    return a - b", CALLS).verdicts == [W]
    assert judge("def total(a, b):\n    return (a + b) // (a != 3)", CALLS).verdicts == [A, R]
    missing = judge("def other(a, b):\n    return a + b", CALLS)
    assert missing.verdicts == [R] and "the program defines no function 'total'" in missing.detail
    slow = judge("def total(a, b):\n    while a == 3:\n        pass\n    return a + b", CALLS)
    assert slow.verdicts == [A, T]


def test_a_tuple_passes_for_a_list_in_lcb_mode() -> None:
    tests = CallTests(inputs=[[2]], outputs=[[1, 2]], entry_point="f")
    assert judge("def f(n):\n    return tuple(range(1, n + 1))", tests).verdicts == [A]
    assert judge("def f(n):\n    return tuple(range(1, n + 1))", tests, judge_mode="exact").verdicts == [A]
    large = CallTests(inputs=[[200_000]], outputs=[list(range(200_000))], entry_point="f")
    assert judge("def f(n):\n    return tuple(range(n))", large).verdicts == [A]  # sent as a digest
    assert judge("def f(n):\n    return list(range(1, n + 1))", large).verdicts == [W]


# ---- problem files -----------------------------------------------------------------------------------


def lcb_row(**fields: Any) -> dict[str, Any]:
    tests = [{"input": "3\n", "output": "6\n", "testtype": "stdin"}]
    row = {
        "question_id": "q1",
        "question_content": "Double it.",
        "starter_code": "",
        "public_test_cases": json.dumps(tests),
        "private_test_cases": blob([{"input": "5\n", "output": "10\n", "testtype": "stdin"}]),
        "metadata": "{}",
    }
    return row | fields


def blob(value: Any) -> str:
    """LiveCodeBench's private tests: base64 of zlib of a pickle of their JSON."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(value)))).decode()


def test_livecodebench_rows_stdin_and_functional(tmp_path: Path) -> None:
    functional = lcb_row(
        question_id="q2",
        public_test_cases=json.dumps([{"input": "[1, 2]\n3", "output": "[4, 5]", "testtype": "functional"}]),
        private_test_cases="[]",
        metadata=json.dumps({"func_name": "shift"}),
    )
    problems = load_problems(str(write_jsonl(tmp_path / "lcb.jsonl", [lcb_row(), functional])))
    assert problems["q1"].tests == StdinTests(inputs=["3\n", "5\n"], outputs=["6\n", "10\n"], extraction="lcb")
    assert problems["q2"].tests == CallTests(
        inputs=[[[1, 2], 3]], outputs=[[4, 5]], entry_point="shift", extraction="lcb"
    )


class Boom:
    def __reduce__(self) -> tuple[Any, ...]:
        return (print, ("ran",))


@pytest.mark.parametrize(
    ("fields", "said"),
    [
        ({"private_test_cases": base64.b64encode(zlib.compress(pickle.dumps(Boom()))).decode()}, "only plain data"),
        ({"private_test_cases": "bm90IHpsaWI="}, "neither JSON nor a base64, zlib, pickle blob"),
        ({"public_test_cases": json.dumps([{"input": 3, "output": "6", "testtype": "stdin"}])}, "must be text"),
        (
            {
                "public_test_cases": json.dumps([{"input": "1", "output": "2", "testtype": "functional"}]),
                "private_test_cases": "",
            },
            "a functional problem needs func_name",
        ),
        ({"private_test_cases": blob([{"input": "1", "output": "2", "testtype": "functional"}])}, "every test 'stdin'"),
        ({"public_test_cases": "[{"}, "malformed JSON"),
    ],
    ids=["pickle-with-code", "not-a-blob", "input-not-text", "missing-fn-name", "mixed", "bad-json"],
)
def test_bad_livecodebench_rows_name_the_file_and_line(tmp_path: Path, fields: dict[str, Any], said: str) -> None:
    path = write_jsonl(tmp_path / "lcb.jsonl", [lcb_row(question_id="ok"), lcb_row(**fields)])
    with pytest.raises(InputError, match=rf"lcb\.jsonl:2: .*{said}"):
        load_problems(str(path))


def test_apps_taco_and_codecontests_records(tmp_path: Path) -> None:
    rows = [
        {"problem_id": 7, "input_output": json.dumps({"inputs": ["1 2\n"], "outputs": ["3\n"]})},
        {"problem_id": 8, "input_output": json.dumps({"inputs": [[1, 2]], "outputs": [[3]], "fn_name": "add"})},
        {
            "name": "cc/1",
            "public_tests": {"input": ["1\n"], "output": ["1\n"]},
            "private_tests": {"input": ["2\n"], "output": ["2\n"]},
            "generated_tests": {"input": [], "output": []},
            "time_limit": {"seconds": 2, "nanos": 500000000},
            "memory_limit_bytes": 268435456,
        },
    ]
    problems = load_problems(str(write_jsonl(tmp_path / "mixed.jsonl", rows)))
    assert problems["7"].tests == StdinTests(inputs=["1 2\n"], outputs=["3\n"], extraction="last_python")
    # APPS wraps a call's expected value in a list (as rllm reads it, the value itself).
    assert problems["8"].tests == CallTests(inputs=[[1, 2]], outputs=[3], entry_point="add", extraction="last_python")
    contest = problems["cc/1"].tests
    assert isinstance(contest, CaseTests) and contest.inputs == ["1\n", "2\n"]
    assert contest.time_limit_s == 2.5 and contest.memory_bytes == 268435456


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"problem_id": 1, "input_output": json.dumps({"inputs": ["1"], "outputs": []})}, "1 inputs but 0 outputs"),
        ({"problem_id": 1, "input_output": json.dumps({"inputs": ["1"], "outputs": [3]})}, "expected text, got int"),
        ({"problem_id": 1, "input_output": json.dumps({"inputs": [1], "outputs": [1], "fn_name": "f"})}, "a list"),
        ({"name": "x", "public_tests": {"input": ["1"], "output": "1"}}, r"public_tests: expected \{input"),
        # JSON written over several lines in a field: the line of the field's text, and its column.
        ({"problem_id": 1, "input_output": '{"inputs": ["1"],\n "outputs" ["1"]}'}, "line 2 of the text, column 12"),
    ],
)
def test_bad_records_of_other_shapes(tmp_path: Path, row: dict[str, Any], said: str) -> None:
    with pytest.raises(InputError, match=rf"bad\.jsonl:1: .*{said}"):
        load_problems(str(write_jsonl(tmp_path / "bad.jsonl", [row])))


def test_codeexecs_own_shape(tmp_path: Path) -> None:
    row = {"task_id": "own/1", "cases": {"kind": "stdin", "inputs": ["2\n"], "outputs": ["4\n"], "mode": "exact"}}
    problem = load_problems(str(write_jsonl(tmp_path / "own.jsonl", [row])))["own/1"]
    assert problem == Problem(task_id="own/1", cases=StdinTests(inputs=["2\n"], outputs=["4\n"], mode="exact"))
    bad = {"task_id": "own/2", "cases": {"kind": "call", "inputs": [[1]], "outputs": [1]}}
    with pytest.raises(InputError, match=r"own2\.jsonl:1: .*needs the function's name"):
        load_problems(str(write_jsonl(tmp_path / "own2.jsonl", [bad])))


@pytest.mark.parametrize(
    ("name", "problems", "kinds", "tests"),
    [
        ("apps-mapcoder/selected150.jsonl", 128, {"stdin": 128}, 1602),
        ("deepcoder/test_code_code_contests.json", 165, {"stdin": 165}, 1837),
        ("deepcoder/test_code_codeforces.json", 408, {"stdin": 408}, 468),
        ("deepcoder/test_code_leetcode.json", 200, {"assertions": 200}, 492),
        ("leetcodedataset/LeetCodeDataset-v0.3.1-test.jsonl.gz", 228, {"call": 227, "assertions": 1}, 22939),
    ],
)
def test_the_shared_problem_files_load(name: str, problems: int, kinds: dict[str, int], tests: int) -> None:
    found = load_problems(str(SHARED / name))
    assert len(found) == problems
    counted: dict[str, int] = {}
    for problem in found.values():
        counted[problem.tests.kind] = counted.get(problem.tests.kind, 0) + 1
    assert counted == kinds
    assert sum(problem.total for problem in found.values()) == tests


def test_code_is_taken_from_a_raw_answer_as_each_reference_takes_it() -> None:
    answer = "First:\n```python\nprint(1)\n```\nBetter:\n```python\nprint(2)\n```\nDone."
    assert lcb_code(answer) == "print(2)"
    assert last_python_code(answer) == "print(2)\n"
    assert lcb_code("print(3)") == ""  # LiveCodeBench runs nothing without two fence lines
    assert last_python_code("print(3)") == "print(3)"


# ---- end to end: real Valkey, real workers -------------------------------------------------------------


@pytest.mark.parametrize("isolation_mode", ["fork", "fresh"])
def test_every_shape_end_to_end(env: dict[str, str], tmp_path: Path, isolation_mode: str) -> None:
    rows = [
        lcb_row(),
        {
            "problem_id": "apps-call",
            "input_output": json.dumps({"inputs": [[2, 3]], "outputs": [[5]], "fn_name": "add"}),
        },
        {"name": "cc", "public_tests": {"input": ["4\n"], "output": ["8\n"]}, "time_limit": 2},
        {"problem": "Double it.", "tests": str({"inputs": ["7\n"], "outputs": ["14\n"]})},
        {
            "task_id": "lc",
            "entry_point": "Solution().add",
            "starter_code": "class Solution:\n    def add(self, a: int, b: int) -> int:\n",
            "prompt": "from typing import *",
            "input_output": [{"input": "a = 1, b = 2", "output": "3"}],
        },
        {"id": "mc", "starter_code": "", "test_list": [{"input": "2\n", "output": [4]}]},
        {"task_id": "own", "cases": {"kind": "stdin", "inputs": ["5\n"], "outputs": ["10\n"], "mode": "exact"}},
        {  # rllm's prelude: its list helpers here, its names (inf, pairwise) in the solution
            "problem": "Add.",
            "tests": {
                "functional": "def check(candidate):\n    assert candidate(a=1, b=2) == 3\n"
                "    assert is_same_list(list_node([1, 2]), list_node([1, 2]))\n\ncheck(Solution().add)"
            },
        },
        # A problem's own preload: in its zygote before the fork (fork), nowhere (fresh)
        {"task_id": "pre", "assertions": ["assert LOADED == PRELOADED"], "preload": ["colorsys"]},
    ]
    problems = write_jsonl(tmp_path / "problems.jsonl", rows)
    double = "```python\nprint(2 * int(input()))\n```"
    add = "```python\nclass Solution:\n    def add(self, a, b):\n        return a + b\n```"
    samples = [
        {"task_id": "q1", "generation": double},
        {"task_id": "q1", "generation": "```python\nprint(3 * int(input()))\n```"},
        {"task_id": "apps-call", "generation": add},
        {"task_id": "cc", "generation": double},
        {"task_id": "3", "generation": double},
        {"task_id": "lc", "generation": add},
        {"task_id": "mc", "generation": double},
        {"task_id": "own", "generation": double},
        {
            "task_id": "7",
            "solution": "class Solution:\n    def add(self, a, b):\n"
            "        return min(a + b, inf) + sum(y - x for x, y in pairwise([1, 1, 1]))\n",
        },
        {
            "task_id": "pre",
            "solution": f"import sys\nLOADED = 'colorsys' in sys.modules\nPRELOADED = {isolation_mode == 'fork'}",
        },
    ]
    samples_path = write_jsonl(tmp_path / "samples.jsonl", samples)
    per_sample, exported = tmp_path / "per-sample.jsonl", tmp_path / "eval_all.json"
    out = cli(
        env, "eval", "--problems", str(problems), "--samples", str(samples_path), "--k", "1",
        "--isolation", isolation_mode, "--workers", "2", "--json", "--per-sample", str(per_sample),
        "--lcb-results", str(exported),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in per_sample.open()]
    assert [line["passed"] for line in lines] == [True, False, True, True, True, True, True, True, True, True], lines
    assert [line.get("verdicts") for line in lines] == ["AA", "W", "A", "A", "A", "A", "A", "A", None, None]
    assert lines[-2]["assertions"] == "11"  # DeepCoder's LeetCode problem: its check()'s asserts
    assert "test 1 of 2: wrong_answer" in lines[1]["detail"]
    report = json.loads(out.stdout)
    assert report["pass_at_k"]["1"] == pytest.approx((0.5 + 8) / 9)
    # LiveCodeBench's *_eval_all.json: a row per problem, sorted by question_id
    rows = json.loads(exported.read_text())
    assert [row["question_id"] for row in rows] == sorted(["q1", "apps-call", "cc", "3", "lc", "mc", "own", "7", "pre"])
    q1 = next(row for row in rows if row["question_id"] == "q1")
    assert q1["graded_list"] == [True, False] and q1["pass@1"] == 0.5
    assert q1["code_list"] == ["print(2 * int(input()))", "print(3 * int(input()))"]
    assert json.loads(q1["metadata"][1])["error_code"] == -2


def test_the_python_api_runs_competitive_problems(tmp_path: Path, env: dict[str, str], monkeypatch: Any) -> None:
    for name in ("CODEEXEC_REDIS_URL", "CODEEXEC_DATA_DIR"):
        monkeypatch.setenv(name, env[name])
    with codeexec.connect(workers=1) as ce:
        run = ce.submit(
            [lcb_row()],
            [{"task_id": "q1", "solution": "print(2 * int(input()) + 1)"}],
            k=[1],
            all_tests=True,
            judge_mode="exact",
        )
        run.wait()
        (sample,) = list(run.results())
    assert sample.result is not None and sample.result.verdicts == "WW"
    assert sample.result.score == 0.0 and run.meta.options.judge_mode == "exact" and run.meta.options.all_tests


# ---- programs in other languages: compiled once, a run per test ------------------------------------------

CPP_DOUBLE = (
    "#include <bits/stdc++.h>\nint main() { long long s = 0, x; while (std::cin >> x) s += x;\n"
    "#ifdef ONLINE_JUDGE\n  std::cout << 2 * s << std::endl;\n#endif\n}\n"
)


@pytest.mark.once  # another language: test_rows_in_another_language_through_eval crosses its path
def test_a_cpp_program_is_compiled_once_and_run_on_each_test() -> None:
    """Codeforces' -O2 -DONLINE_JUDGE (the program prints only where it is defined); each test a run of its
    own of the one binary; a wrong answer, a crash, a time-out and a compile error, each test's verdict."""
    cpp = {"language": "cpp"}
    assert judge(CPP_DOUBLE, stdin_tests(*DOUBLE_PAIRS, **cpp)).verdicts == [A, A, A]
    wrong = CPP_DOUBLE.replace("2 * s", "(s == 5 ? 0 : 2 * s)")
    result = judge(wrong, stdin_tests(*DOUBLE_PAIRS, **cpp), all_tests=True)
    assert result.verdicts == [A, W, A] and result.detail.startswith("test 2 of 3: wrong_answer")
    crash = CPP_DOUBLE.replace("s += x;", "s += x; if (x == 5) abort();")
    assert judge(crash, stdin_tests(*DOUBLE_PAIRS, **cpp)).verdicts == [A, R]
    endless = CPP_DOUBLE.replace("s += x;", "s += x; volatile int spin = 0; while (x == 5) spin++;")
    timed = judge(endless, stdin_tests(*DOUBLE_PAIRS, **cpp), time_limit_s=0.5)
    assert (timed.exit_code, timed.verdicts) == (Outcome.TIMEOUT, [A, T])
    broken = judge("int main() { return x; }\n", stdin_tests(*DOUBLE_PAIRS, **cpp))
    assert broken.exit_code is Outcome.SYNTAX_ERROR and "error" in broken.detail and broken.verdicts == [R]


@pytest.mark.once  # another language: test_rows_in_another_language_through_eval crosses its path
def test_a_java_program_is_judged_on_each_test() -> None:
    java = (
        "import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n"
        "    Scanner in = new Scanner(System.in); long s = 0;\n    while (in.hasNextLong()) s += in.nextLong();\n"
        "    System.out.println(2 * s);\n  }\n}\n"
    )
    assert judge(java, stdin_tests(*DOUBLE_PAIRS, language="java")).verdicts == [A, A, A]
    broken = judge(java.replace("long s = 0;", "long s = ;"), stdin_tests(*DOUBLE_PAIRS, language="java"))
    assert broken.exit_code is Outcome.SYNTAX_ERROR and broken.verdicts == [R]
    # A runtime error says what the program said of it: its exception, on its stderr.
    thrown = judge(java.replace("2 * s", "2 * s / (s == 5 ? 0 : 1)"), stdin_tests(*DOUBLE_PAIRS, language="java"))
    assert thrown.verdicts == [A, R], thrown.detail
    assert thrown.detail.startswith("test 2 of 3: runtime_error: the program exited with status 1; stderr: ")
    assert "java.lang.ArithmeticException: / by zero" in thrown.detail


@pytest.mark.once  # another language: test_rows_in_another_language_through_eval crosses its path
def test_a_java_program_s_heap_is_sized_from_its_memory_limit() -> None:
    """A JVM sizes its heap from the machine's memory unless told: a program whose garbage outgrows its memory
    limit before the heap is collected would fail for want of memory it never keeps (and on a large machine
    the first heap alone is over it)."""
    garbage = (
        "public class Main {\n  public static void main(String[] a) {\n    long kept = 0;\n"
        "    for (int i = 0; i < 48; i++) { byte[] b = new byte[64 << 20]; b[i] = 1; kept += b.length; }\n"
        '    System.out.println(Runtime.getRuntime().maxMemory() <= (600L << 20) ? "sized" : "unsized");\n'
        "  }\n}\n"
    )
    result = judge(garbage, stdin_tests(("", "sized\n"), language="java", memory_bytes=800 << 20))
    assert result.verdicts == [A], result


def test_only_stdin_tests_take_another_language() -> None:
    with pytest.raises(ValueError, match="stdin tests only"):
        CallTests(language="cpp", inputs=[[1]], outputs=[2], entry_point="f")  # type: ignore[call-arg]


def test_rows_in_another_language_through_eval(tmp_path: Path, env: dict[str, str]) -> None:
    """A LiveCodeBench-shaped row of one's own that says its language: each sample's answer (its last fenced
    block, as LiveCodeBench takes it) compiled and run on each test by a real worker; a sample that says its
    own language (a name, or CodeContests' number) is judged in it, as stdin tests take any; a language
    codeexec does not run is refused, naming the file and line."""
    rows = [lcb_row(question_id="cpp", language="cpp"), lcb_row(question_id="java", language="Java")]
    problems = write_jsonl(tmp_path / "problems.jsonl", rows)
    java = (
        "public class Main { public static void main(String[] a) {\n"
        "  System.out.println(2 * new java.util.Scanner(System.in).nextInt()); } }"
    )
    samples = [
        {"task_id": "cpp", "generation": f"Here:\n```cpp\n{CPP_DOUBLE}```\n"},
        {"task_id": "cpp", "generation": f"```cpp\n{CPP_DOUBLE.replace('2 * s', '3 * s')}```"},
        {"task_id": "java", "generation": f"```java\n{java}\n```"},
        {
            "task_id": "cpp",
            "generation": "```python\nprint(2 * sum(map(int, input().split())))\n```",
            "language": "python",
        },
        {"task_id": "java", "solution": CPP_DOUBLE.replace("2 * s", "3 * s"), "language": 2},  # CodeContests' C++
    ]
    samples_path = write_jsonl(tmp_path / "samples.jsonl", samples)
    per_sample = tmp_path / "per-sample.jsonl"
    out = cli(
        env, "eval", "--problems", str(problems), "--samples", str(samples_path), "--k", "1", "--workers", "2",
        "--per-sample", str(per_sample),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in per_sample.open()]
    verdicts = [(line["passed"], line.get("verdicts")) for line in lines]
    said = [(line["task_id"], line.get("verdicts"), line.get("detail")) for line in lines]  # not cut short
    assert verdicts == [(True, "AA"), (False, "W"), (True, "AA"), (True, "AA"), (False, "W")], said
    for said, why in (("cobol", "codeexec does not run it"), (1, "CodeContests' 1 is not one codeexec runs")):
        wrong = write_jsonl(tmp_path / "wrong.jsonl", [{"task_id": "cpp", "generation": "x"}] * 2)
        wrong.write_text(wrong.read_text() + json.dumps({"task_id": "cpp", "generation": "x", "language": said}) + "\n")
        refused = cli(env, "eval", "--problems", str(problems), "--samples", str(wrong), "--k", "1", "--workers", "1")
        assert refused.returncode != 0 and "wrong.jsonl:3" in refused.stderr and why in refused.stderr, refused.stderr
    cobol = write_jsonl(tmp_path / "cobol.jsonl", [lcb_row(language="cobol")])
    with pytest.raises(InputError, match=r"cobol\.jsonl:1: .*codeexec does not run it"):
        load_problems(str(cobol))
