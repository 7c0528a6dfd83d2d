"""Competitive-programming problems: codeexec's verdicts against the references', its speed against
LiveCodeBench's grader, and both judges' verdicts idle and beside busy loops.

Sets (../shared/data/competitive/):
- apps150: MapCoder's APPS selection, 5 x 150 ChatGPT programs (stdin) with ExecEval's verdicts
  (is_solved); each also graded by LiveCodeBench's own grader.
- oracles-stdin, oracles-call: programs that look each test's answer up (3 a problem), on APPS-150's
  problems and on LeetCodeDataset's: what is timed is the judges' own cost.
- trivial-1, trivial-20: 300 copies of a program that adds two numbers, on a problem of 1 test and of
  20: what each judge costs a sample, and a test.
- leetcode: LeetCodeDataset v0.3.1's test problems (call-based), each with its reference solution and
  three variants made here: a wrong value (an int + 1, a list one item short, a string with an "x"
  more, ...), the value as a tuple (which both judges should pass where a list is expected), and one
  that raises on its third call; graded by LiveCodeBench's grader.
- deepcoder-code_contests, deepcoder-codeforces: DeepCoder's (rllm's) stdin problems, which have no
  solutions: for each, a program that looks its answer up and five variants that print it otherwise,
  each meeting one of LiveCodeBench's comparison rules: trailing spaces and blank lines at the end
  (pass), integers as "5.0" (pass: equal as Decimal tokens), a blank line inside (fail), the last
  test's last token changed (fail), a raise on the second test (fail).
- deepcoder-leetcode: DeepCoder's LeetCode problems (a check() of asserts, judged as asserts, as rllm
  does) with their reference solutions and the three variants of `leetcode`; for LiveCodeBench's grader
  each assert is a call-based case.

For each set codeexec runs it (fork, the default lcb mode, a private Valkey, --workers local workers,
warmed by a run of the set's first samples), then LiveCodeBench's grader (bench/lcb_ref.py, with as
many processes), each timed from the first sample to the last; every sample whose verdicts differ is
listed, with a reason where the difference is one of LiveCodeBench's documented quirks or another rule
of the shape's own judge. With --load, both run again beside 3 x cores busy loops and the verdicts that
flip are counted.

    python bench/competitive.py --lcb-source DIR [--sets apps150,leetcode] [--workers 2] [--load] [--json OUT]

DIR: a checkout of LiveCodeBench/LiveCodeBench (not on PyPI); its grader runs in a throw-away
virtualenv (bench/lcb_ref.py). Without --lcb-source only the ExecEval comparison runs.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import lcb_ref
from load_invariance import CORES, busy_loops
from runs import warm_run

from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.kinds import CaseTests

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "competitive"
APPS = SHARED / "apps-mapcoder"
LEETCODE = SHARED / "leetcodedataset" / "LeetCodeDataset-v0.3.1-test.jsonl.gz"
DEEPCODER = SHARED / "deepcoder"


class Set:
    """A set's problems file, samples file, the reference verdicts it comes with, and LCB's rows."""

    def __init__(self, name: str, problems: Path, samples: list[dict], given: list[bool | None], rows: list[dict]):
        self.name, self.problems, self.samples, self.given, self.rows = name, problems, samples, given, rows


def apps150(directory: Path) -> Set:
    problems = {problem_id: problem for problem_id, problem in load_problems(str(APPS / "selected150.jsonl")).items()}
    samples, given, rows = [], [], []
    for path in sorted(APPS.glob("ChatGPT-*.jsonl")):
        for line in path.open():
            record = json.loads(line)
            task_id, code = str(record["id"]), record["source_codes"][0]
            samples.append({"task_id": task_id, "solution": code, "file": path.name})
            given.append(bool(record["is_solved"]))
            cases = problems[task_id].tests
            assert isinstance(cases, CaseTests)
            io = {"inputs": cases.inputs, "outputs": cases.outputs, "fn_name": None}
            rows.append({"id": str(len(rows)), "input_output": io, "code": code})
    return Set("apps150", APPS / "selected150.jsonl", samples, given, rows)


def _wrong(name: str, how: str) -> str:
    """Code appended to a reference solution that makes its method `name` misbehave `how`."""
    change = {
        "wrong": (
            "    if isinstance(value, bool):\n        return not value\n"
            "    if isinstance(value, (int, float)):\n        return value + 1\n"
            "    if isinstance(value, str):\n        return value + 'x'\n"
            "    if isinstance(value, list):\n        return value[:-1] if value else [0]\n"
            "    return None\n"
        ),
        "tuple": "    return tuple(value) if isinstance(value, list) else value\n",
        "raises": (
            "    _calls.append(1)\n    if len(_calls) == 3:\n        raise ValueError('third call')\n    return value\n"
        ),
    }[how]
    return (
        f"\n_calls = []\n_original = Solution.{name}\n"
        f"def _changed(self, *args, **kwargs):\n    value = _original(self, *args, **kwargs)\n{change}"
        f"Solution.{name} = _changed\n"
    )


def leetcode(directory: Path) -> Set:
    problems = load_problems(str(LEETCODE))
    with gzip.open(LEETCODE) as lines:
        records = {record["task_id"]: record for record in map(json.loads, lines)}
    samples, given, rows = [], [], []
    for task_id, problem in problems.items():
        cases = problem.tests
        if not isinstance(cases, CaseTests) or cases.kind != "call":
            continue  # the one problem on TreeNode is judged by its check(): not a call-based test
        reference = records[task_id]["completion"]
        for how in ("reference", "wrong", "tuple", "raises"):
            code = reference if how == "reference" else reference + _wrong(str(cases.entry_point), how)
            samples.append({"task_id": task_id, "solution": code, "variant": how})
            given.append(None)
            # LiveCodeBench's functional format: one JSON argument a line (LeetCode names them in order).
            inputs = [
                "\n".join(
                    json.dumps(arg) for arg in (given_args.values() if isinstance(given_args, dict) else given_args)
                )
                for given_args in cases.inputs
            ]
            io = {
                "inputs": inputs,
                "outputs": [json.dumps(value) for value in cases.outputs],
                "fn_name": cases.entry_point,
            }
            rows.append({"id": str(len(rows)), "input_output": io, "code": problem.setup + "\n" + code})
    return Set("leetcode", LEETCODE, samples, given, rows)


def oracles(directory: Path, kind: str) -> Set:
    """Programs that look their answer up (a table of each test's input and expected output), on APPS-150's
    stdin problems and LeetCodeDataset's call-based ones, 3 a problem: each passes every test at once,
    so what is timed is the judges' own cost, test by test."""
    samples, given, rows = [], [], []
    problems = {"apps150": load_problems(str(APPS / "selected150.jsonl")), "leetcode": load_problems(str(LEETCODE))}
    lines = []
    for name, found in problems.items():
        for task_id, problem in found.items():
            cases = problem.tests
            if not isinstance(cases, CaseTests) or cases.kind != kind:
                continue
            if cases.kind == "stdin":
                table = dict(zip(cases.inputs, cases.outputs, strict=True))
                code = f"import sys\nprint({table!r}[sys.stdin.read()], end='')\n"
                io = {"inputs": cases.inputs, "outputs": cases.outputs, "fn_name": None}
            else:
                # Keyed by the arguments' values in order: LCB passes them by position, codeexec by name.
                table = {
                    json.dumps(list(i.values()) if isinstance(i, dict) else i): o
                    for i, o in zip(cases.inputs, cases.outputs, strict=True)
                }
                code = (
                    "import json\nclass Solution:\n"
                    f"    def {cases.entry_point}(self, *args, **kwargs):\n"
                    f"        return {table!r}[json.dumps(list(kwargs.values()) or list(args))]\n"
                )
                inputs = [
                    "\n".join(json.dumps(arg) for arg in (i.values() if isinstance(i, dict) else i))
                    for i in cases.inputs
                ]
                io = {"inputs": inputs, "outputs": [json.dumps(o) for o in cases.outputs], "fn_name": cases.entry_point}
            for copy in range(3):
                lines.append({"task_id": task_id, "solution": code, "file": name, "copy": copy})
                rows.append({"id": str(len(rows)), "input_output": io, "code": problem.setup + "\n" + code})
                given.append(None)
    samples = lines
    # One problems file for both sets: the two files' records, as they are.
    merged = directory / "oracle-problems.jsonl"
    with merged.open("w") as out:
        for text in ((APPS / "selected150.jsonl").read_text(), gzip.decompress(LEETCODE.read_bytes()).decode()):
            out.write(text if text.endswith("\n") else text + "\n")
    return Set(f"oracles-{kind}", merged, samples, given, rows)


def trivial(directory: Path, tests: int) -> Set:
    """300 copies of a program that adds two numbers, on a problem of `tests` tests (codeexec's own shape):
    each judge's cost per sample (one test) and per test (twenty), with next to nothing of the program's."""
    inputs = [f"{i} 1\n" for i in range(tests)]
    outputs = [f"{i + 1}\n" for i in range(tests)]
    problems = directory / f"trivial-{tests}.jsonl"
    task_id = f"add-{tests}"
    problems.write_text(
        json.dumps({"task_id": task_id, "cases": {"kind": "stdin", "inputs": inputs, "outputs": outputs}})
    )
    code = "a, b = map(int, input().split())\nprint(a + b)\n"
    io = {"inputs": inputs, "outputs": outputs, "fn_name": None}
    samples = [{"task_id": task_id, "solution": code, "copy": copy} for copy in range(300)]
    rows = [{"id": str(copy), "input_output": io, "code": code} for copy in range(300)]
    return Set(f"trivial-{tests}", problems, samples, [None] * len(samples), rows)


# What a stdin variant prints instead of the expected output `wanted` of test `index` (of `count`): each is
# one of LiveCodeBench's comparison rules (lcb_runner/evaluation/testing_util.py, grade_stdio) at work.
_STDIN_VARIANTS = {
    "oracle": "out = wanted",
    # Each line stripped, the whole stripped: passes.
    "spaces": "out = '\\n'.join(line + '  ' for line in wanted.split('\\n')) + '\\n\\n'",
    # A line of integers equal as Decimal tokens ("5.0" for "5"): passes.
    "decimal": (
        "out = '\\n'.join(' '.join(t + '.0' for t in line.split()) "
        "if line.split() and all(t.lstrip('-').isdigit() for t in line.split()) else line "
        "for line in wanted.split('\\n'))"
    ),
    # A blank line after the first: one line too many where the output has two or more.
    "blank": "lines = wanted.strip().split('\\n')\nout = '\\n'.join(lines[:1] + [''] + lines[1:])",
    # The last token of the last test changed: a wrong answer there.
    "wrong": (
        "out = wanted\nif index == count - 1:\n    head, _, last = wanted.rstrip().rpartition(' ')\n"
        "    last = str(int(last) + 1) if last.lstrip('-').isdigit() else last + 'x'\n"
        "    out = (head + ' ' if head else '') + last"
    ),
    # A runtime error on the second test (the first, where there is one).
    "raises": "out = wanted\nif index == min(1, count - 1):\n    raise ValueError('second test')",
}


def deepcoder_stdin(directory: Path, name: str) -> Set:
    """DeepCoder's (rllm's) stdin problems, which come with no solutions: for each, a program that looks
    its answer up, and variants of it that print it otherwise (_STDIN_VARIANTS), through both judges."""
    path = DEEPCODER / f"test_code_{name}.json"
    samples, given, rows = [], [], []
    for task_id, problem in load_problems(str(path)).items():
        cases = problem.tests
        assert isinstance(cases, CaseTests)
        table = {
            given_input: (at, wanted)
            for at, (given_input, wanted) in enumerate(zip(cases.inputs, cases.outputs, strict=True))
        }
        io = {"inputs": cases.inputs, "outputs": cases.outputs, "fn_name": None}
        for how, change in _STDIN_VARIANTS.items():
            code = (
                f"import sys\nindex, wanted = {table!r}[sys.stdin.read()]\ncount = {len(cases.inputs)}\n"
                f"{change}\nprint(out, end='')\n"
            )
            samples.append({"task_id": task_id, "solution": code, "variant": how})
            given.append(None)
            rows.append({"id": str(len(rows)), "input_output": io, "code": code})
    return Set(f"deepcoder-{name}", path, samples, given, rows)


def _check_cases(check: str) -> tuple[str, list[list[Any]], list[Any]]:
    """A DeepCoder LeetCode test, check(candidate) asserting `candidate(name=value, ...) == expected`, as
    LiveCodeBench's call-based cases: (entry point, each call's arguments in order, each expected value)."""
    module = ast.parse(check)
    entry = ast.unparse(module.body[-1].value.args[0]).rpartition(".")[2]  # check(Solution().name)
    arguments, expected = [], []
    for node in ast.walk(module):
        if isinstance(node, ast.Assert):
            assert isinstance(node.test, ast.Compare) and isinstance(node.test.left, ast.Call)
            call = node.test.left
            arguments.append(
                [ast.literal_eval(a) for a in call.args] + [ast.literal_eval(k.value) for k in call.keywords]
            )
            expected.append(ast.literal_eval(node.test.comparators[0]))
    return entry, arguments, expected


def deepcoder_leetcode(directory: Path) -> Set:
    """DeepCoder's LeetCode problems (tests: a check() of asserts, judged as such here, as rllm judges them),
    each with its reference solution and the three variants of `leetcode`; for LiveCodeBench, each assert
    becomes a call-based case (its arguments one JSON value a line, the expected value as JSON)."""
    path = DEEPCODER / "test_code_leetcode.json"
    records = json.loads(path.read_text())
    problems = load_problems(str(path))
    samples, given, rows = [], [], []
    for (task_id, problem), record in zip(problems.items(), records, strict=True):
        tests = record["tests"] if isinstance(record["tests"], dict) else ast.literal_eval(record["tests"])
        entry, arguments, expected = _check_cases(tests["functional"])
        io = {
            "inputs": ["\n".join(json.dumps(arg) for arg in args) for args in arguments],
            "outputs": [json.dumps(value) for value in expected],
            "fn_name": entry,
        }
        for how in ("reference", "wrong", "tuple", "raises"):
            code = record["solutions"] if how == "reference" else record["solutions"] + _wrong(entry, how)
            samples.append({"task_id": task_id, "solution": code, "variant": how})
            given.append(None)
            rows.append({"id": str(len(rows)), "input_output": io, "code": problem.setup + "\n" + code})
    return Set("deepcoder-leetcode", path, samples, given, rows)


SETS = {
    "apps150": apps150,
    "leetcode": leetcode,
    "oracles-stdin": lambda directory: oracles(directory, "stdin"),
    "oracles-call": lambda directory: oracles(directory, "call"),
    "trivial-1": lambda directory: trivial(directory, 1),
    "trivial-20": lambda directory: trivial(directory, 20),
    "deepcoder-code_contests": lambda directory: deepcoder_stdin(directory, "code_contests"),
    "deepcoder-codeforces": lambda directory: deepcoder_stdin(directory, "codeforces"),
    "deepcoder-leetcode": deepcoder_leetcode,
}


def run_codeexec(one: Set, directory: Path, workers: int, tag: str) -> tuple[float, list[bool], list[str]]:
    """Seconds from submitting to the last result, verdicts, and each sample's per-test letters (runs.warm_run())."""
    took, results = warm_run(str(one.problems), one.samples, directory, f"{one.name}-{tag}", workers)
    verdicts = [bool(r.result and r.result.exit_code == "pass") for r in results]
    return took, verdicts, [r.result.verdicts if r.result else "" for r in results]


# A process that holds LiveCodeBench's prelude (as a sample's runner does) forks a child that does nothing,
# or runs a trivial program on a stdin of its own, and reaps it: no judge that runs each test in a process
# of its own can spend less on a test. Run in a fresh interpreter, nothing else loaded.
_FLOOR = """
import gc, os, sys, time
namespace = {"__name__": "__main__"}
exec(sys.argv[1], namespace)
program = compile("a, b = map(int, input().split())\\nprint(a + b)\\n", "<program>", "exec")
gc.freeze()
for run in (False, True):
    began = time.perf_counter()
    for _ in range(500):
        stdin = os.memfd_create("stdin")
        os.write(stdin, b"1 2\\n")
        os.lseek(stdin, 0, 0)
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.dup2(stdin, 0)
            os.dup2(out_w, 1)
            if run:
                exec(program, namespace)
                sys.stdout.flush()
            os._exit(0)
        os.close(stdin)
        os.close(out_w)
        os.waitpid(pid, 0)
        os.read(out_r, 1024)
        os.close(out_r)
    print((time.perf_counter() - began) * 2)  # ms a fork: 500 of them
"""


def fork_floor() -> tuple[float, float]:
    """ms a test costs at the least, in a process per test: (a fork that does nothing, one that runs a
    trivial program), each forked from an interpreter holding LiveCodeBench's prelude."""
    from codeexec.worker.judging.helpers.outputs import PRELUDES

    done = subprocess.run([sys.executable, "-c", _FLOOR, PRELUDES["lcb"]], capture_output=True, text=True, check=True)
    bare, trivial = map(float, done.stdout.split())
    return bare, trivial


def lcb_passed(graded: dict[str, dict], rows: list[dict]) -> list[bool]:
    """LiveCodeBench's verdict: every recorded code > 0 (pass_k_utils counts True > 0)."""
    return [
        all(code is True or (not isinstance(code, bool) and code > 0) for code in graded[row["id"]]["graded"])
        for row in rows
    ]


# LiveCodeBench's grader faults (docs/judging.md): how a program that reads its input so is judged there.
_QUIRKS = [
    (
        re.compile(r"for \w+ in (sys\.)?stdin\b"),
        "for line in sys.stdin: a runtime error in LCB (its mock is not iterable)",
    ),
    (re.compile(r"open\(0\)"), "open(0): reads the grader's own stdin in LCB (its prelude rebinds open)"),
    (re.compile(r"stdin\.buffer\.readline"), "sys.stdin.buffer.readline: the first line every time in LCB"),
    (re.compile(r"from sys import .*stdout"), "from sys import stdout: bypasses LCB's capture"),
    (re.compile(r"sys\.stdin\.buffer"), "sys.stdin.buffer: its mock in LCB"),
]


def why(set_name: str, sample: dict, ours: bool, theirs: bool) -> str:
    for pattern, reason in _QUIRKS:
        if pattern.search(sample["solution"]) and ours and not theirs:
            return reason
    if set_name == "deepcoder-leetcode" and sample["variant"] == "tuple" and theirs and not ours:
        return "a tuple for a list: unequal in rllm's assert (DeepCoder's judge of these), a list in LCB's =="
    return ""


def costs(one: dict[str, Any], twenty: dict[str, Any], workers: int) -> dict[str, tuple[float, float]]:
    """Each judge's ms a sample (beyond its tests) and ms a test, of one worker's (process's) time, from the
    trivial sets: 300 samples of 1 test and of 20, as many workers busy throughout."""
    found = {}
    for judge in ("codeexec", "lcb"):
        if f"{judge}_s" in one and f"{judge}_s" in twenty:
            per_sample_1, per_sample_20 = (1000 * workers * ran[f"{judge}_s"] / 300 for ran in (one, twenty))
            test = (per_sample_20 - per_sample_1) / 19
            found[judge] = (round(per_sample_1 - test, 2), round(test, 2))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lcb-source", type=Path, help="a checkout of LiveCodeBench/LiveCodeBench")
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--workers", type=int, default=CORES, help="codeexec's workers and LCB's processes")
    parser.add_argument("--load", action="store_true", help="again beside 3 x cores busy loops: verdict flips")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    figures: dict[str, Any] = {"cores": CORES, "workers": args.workers}
    bare, trivial_ms = fork_floor()
    figures["fork_floor_ms"] = {"nothing": round(bare, 3), "trivial program": round(trivial_ms, 3)}
    print(f"a test's floor, a fork of the warm interpreter and its reaping: {bare:.2f} ms doing nothing, ", end="")
    print(f"{trivial_ms:.2f} ms running a trivial program")
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        for name in args.sets.split(","):
            one = SETS[name](directory)
            print(f"\n== {name}: {len(one.samples)} samples over {len({s['task_id'] for s in one.samples})} tasks")
            ours_s, ours, letters = run_codeexec(one, directory, args.workers, "idle")
            result: dict[str, Any] = {"samples": len(one.samples), "codeexec_s": round(ours_s, 2)}
            print(f"codeexec: {ours_s:.1f} s, {len(ours) / ours_s:.1f} samples/s, pass {sum(ours)}")
            if any(verdict is not None for verdict in one.given):
                same = sum(a == b for a, b in zip(ours, one.given, strict=True))
                print(f"vs ExecEval (the data's): {same} of {len(ours)} the same ({100 * same / len(ours):.2f} %)")
                result["execeval_same"] = same
                for index, (a, b) in enumerate(zip(ours, one.given, strict=True)):
                    if a != b:
                        sample = one.samples[index]
                        print(f"  {sample['file']} {sample['task_id']}: codeexec {a} ({letters[index]}), ExecEval {b}")
            if args.lcb_source:
                theirs_s, graded = lcb_ref.grade(args.lcb_source, one.rows, processes=args.workers)
                theirs = lcb_passed(graded, one.rows)
                same = sum(a == b for a, b in zip(ours, theirs, strict=True))
                print(f"LCB's grader: {theirs_s:.1f} s, {len(theirs) / theirs_s:.1f} samples/s, pass {sum(theirs)}")
                print(f"speed: codeexec {theirs_s / ours_s:.2f} x LCB's samples/s (same machine, run, processes)")
                print(f"vs LCB: {same} of {len(ours)} the same ({100 * same / len(ours):.2f} %)")
                reasons: Counter[str] = Counter()
                for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
                    if a != b:
                        sample, row = one.samples[index], one.rows[index]
                        reason = why(one.name, sample, a, b) or "unexplained"
                        reasons[reason] += 1
                        meta = graded[row["id"]]["metadata"]
                        told = meta.get("error_message", "") if isinstance(meta, dict) else ""
                        print(
                            f"  task {sample['task_id']} {sample.get('variant', sample.get('file', ''))}: codeexec {a}"
                            f" ({letters[index]}), LCB {b} {graded[row['id']]['graded']} {told[:80]}: {reason}"
                        )
                result |= {"lcb_s": round(theirs_s, 2), "lcb_same": same, "speedup": round(theirs_s / ours_s, 2)}
                result["differences"] = dict(reasons)
            if args.load:
                with busy_loops(3 * CORES):
                    loaded_s, loaded, _ = run_codeexec(one, directory, args.workers, "loaded")
                    flips = sum(a != b for a, b in zip(ours, loaded, strict=True))
                    result["codeexec_flips"] = flips
                    print(f"beside {3 * CORES} busy loops: codeexec {flips} verdicts flipped ({loaded_s:.1f} s)")
                    if args.lcb_source:
                        _, graded_loaded = lcb_ref.grade(args.lcb_source, one.rows, processes=args.workers)
                        lcb_flips = sum(
                            a != b for a, b in zip(theirs, lcb_passed(graded_loaded, one.rows), strict=True)
                        )
                        result["lcb_flips"] = lcb_flips
                        print(f"beside {3 * CORES} busy loops: LCB {lcb_flips} verdicts flipped")
            figures[name] = result
    if {"trivial-1", "trivial-20"} <= figures.keys():
        figures["per_test_and_sample_ms"] = costs(figures["trivial-1"], figures["trivial-20"], args.workers)
        for judge, (sample, test) in figures["per_test_and_sample_ms"].items():
            print(f"{judge}: {sample:.2f} ms a sample and {test:.2f} ms a test, of a worker's time")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    json.dump(figures, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
