"""Every verdict of a fixed corpus, recorded, and two records compared: what a refactor must leave exactly as
it was (issue 43: the kind of test as a seam). The corpus, all through the public API (codeexec.connect, and a
real `codeexec serve` for /run_code) on a private Valkey with two local workers:

    humaneval       every file of ../shared/data/humaneval-reference (16,400 real generations)
    humanevalplus   the 12 files EvalPlus judged (humanevalplus/reference), as HumanEval+ (base and plus)
    mbpp            Reflexion's GPT-4 solutions for MBPP (397), on MultiPL-E's tests in the same file, and
                    MBPP's own solutions (974) on mbpp.jsonl's tests
    mbppplus        bench/mbppplus_samples.py's 1,970 samples, as MBPP+
    apps150, leetcode, deepcoder-code_contests, deepcoder-codeforces, deepcoder-leetcode
                    bench/competitive.py's competitive-programming sets (stdin, call-based, check() asserts)
    classeval       GPT-4's ClassEval generations (100 tasks, unittest files)
    bigcodebench    Qwen2.5-Coder 7B's BigCodeBench samples of the 327 tasks that need the standard library
                    only, on the workers' own Python (--environment none)
    mbcpp, mbjsp, mbtsp, mbgp
                    mxeval's samples of MBXP in C++, JavaScript, TypeScript and Go (bench/languages.py's sets)
    reflexion-rs-1  GPT-4's Reflexion programs for MultiPL-E's humaneval-rs
    humaneval-x-canonical-cpp, -go, -java, -js, -rust
                    HumanEval-X's canonical solutions
    run_code        SandboxFusion-style /run_code requests (RUN_CODE below)
    run_code_languages
                    /run_code in every other language SandboxFusion names (each language's module's RUN_CODE
                    programs: one that reads and prints, one that fails an assertion; and one that does not
                    compile, or does not parse)

Each line of a record is one sample's outcome as codeexec stores it, less its timings: the outcome, score,
tests passed, detail, message, each test's verdict, EvalPlus's statuses, a test file's tests, a script's
ending. A record is kept outside the repository; the record of the code before a change is made with that
code (a worktree of its commit, installed in a virtualenv of its own), then compared with the record after:

    python bench/verdict_corpus.py record OUT.jsonl.gz [--sets humaneval,mbppplus,...]
    python bench/verdict_corpus.py compare BEFORE.jsonl.gz AFTER.jsonl.gz [--again BEFORE2.jsonl.gz]

compare prints every sample whose outcome differs (and those only one record has), set by set, and
exits 1 if any does.
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import codeexec
from bench import competitive, languages, mbppplus_samples
from bench.agreement import BIGCODEBENCH, EVALPLUS_REFERENCE, MBPP_SOLUTIONS, REFERENCE, SHARED, mbpp_reference
from codeexec.worker.languages import RUN_CODE as LANGUAGES_RUN_CODE

#: What a stored result says of a sample that is not an outcome: how long it took.
TIMINGS = {"duration_s", "charged_s"}
#: Text that differs from run to run whatever the verdict: a program's temporary file (in tracebacks), the
#: directories a task makes under it, the times pytest prints, the clock a task prints, and where the
#: codeexec and the Python of the record were (two records of two commits come from two worktrees). Each is
#: replaced by a placeholder before a record is written, and again as one is read (records of before).
VARYING = [
    (re.compile(r"/tmp/codeexec_\w+/tmp\w+\.py"), "<program>"),
    (re.compile(r"/?tmp/(?:codeexec|tmp)\w*"), "<directory>"),
    (re.compile(r"<directory>/tmp\w+"), "<directory>"),
    (re.compile(r"(?<![0-9a-f])tmp[0-9a-f]{8}\.py"), "<file>"),  # a /run_code program's file, named at random
    (re.compile(r"\bin \d+\.\d+s\b"), "in <time>"),
    (re.compile(r"\b20\d\d-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?"), "<clock>"),
    (re.compile(r"(?<!\d)20\d{6}_?\d{6}(?!\d)"), "<clock>"),
    (re.compile(r"(?:/[\w.-]+)+/(?=worker/(?:candidate|process|judging)/)"), "<codeexec>/"),
    (re.compile(r"(?:/[\w.-]+)+/bin/python[\d.]*"), "<python>"),
    (re.compile(r"/pch/\.new-\w{8}/"), "/pch/<building>/"),  # C++'s precompiled headers, as they were built
    (re.compile(r"\b0xc0000[0-9a-f]{5}\b"), "<go heap address>"),  # in a Go panic's stack
    (re.compile(r"(?:(?<=\t)|(?<=\\t))\d+\.\d+s\b|(?<=\()\d+\.\d+s(?=\))"), "<time>"),  # go test's (a tab: JSON's \t)
    (re.compile(r"(?<=\()\d+ ms(?=\))|(?<=Time:)\s+\d+(?:\.\d+)? m?s\b"), "<time>"),  # Jest's
    (re.compile(r"(?<=finished after )\d+ ms\b"), "<time>"),  # the JUnit console launcher's
]
#: The fields of a program's ending (a compile's, a run's) that say how long it took.
ENDING_TIMINGS = {"charged_s", "wall_s"}
#: /run_code requests, as SandboxFusion's tests and verl send them; each one's answer is recorded.
RUN_CODE: list[dict[str, Any]] = [
    {"code": "print(int(input()) + 1)", "stdin": "41"},
    {"code": "x = 1\nassert x == 2"},
    {"code": "int a = 1"},
    {"code": "import sys; sys.exit(3)"},
    {"code": "raise SystemExit('bye')"},
    {"code": "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"},
    {"code": "import time\nprint('before', flush=True)\ntime.sleep(5)", "run_timeout": 0.5},
    {"code": "while True:\n    pass", "run_timeout": 1},
    {"code": "print('x' * 100000)"},
    {"code": "import sys\nsys.stderr.write('to stderr\\n')\nprint('to stdout')"},
    {"code": "print(open('data.txt').read().upper())", "files": {"data.txt": "aGVsbG8="}},
    {
        "code": "open('out.txt', 'w').write('made')\nopen('/mnt/b', 'w').write('mnt')",
        "fetch_files": ["out.txt", "/mnt/b"],
    },
    {"code": "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=2)"},
    {"code": "import subprocess\nprint(subprocess.run(['echo', 'hi'], capture_output=True, text=True).stdout)"},
    {"code": "x = [0] * (1 << 40)", "memory_limit_MB": 256},
    {
        "code": "def test_one():\n    assert 1 + 1 == 2\n\ndef test_two():\n    assert 1 + 1 == 3\n",
        "language": "pytest",
    },
    {"code": "import numpy\nprint(numpy.arange(3).sum())"},
    {"code": "a, b = map(int, input().split())\nprint(a * b)", "stdin": "6 7\n"},
]

#: A program that parses in no language: each language's compile error (or syntax error, or failed run).
NOT_A_PROGRAM = "fn main( {\n"


# ---- the sets: each gives (problems, samples, options) for codeexec's submit() ------------------------------

Built = tuple[str, list[dict[str, Any]] | str, dict[str, Any]]  # problems, samples (or "canonical"), options


def _lines(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]


def humaneval(directory: Path) -> Built:
    samples = [
        {"task_id": r["task_id"], "completion": r["completion"]} for r in _lines(sorted(REFERENCE.glob("*.jsonl")))
    ]
    return "humaneval", samples, {}


def humanevalplus(directory: Path) -> Built:
    rows = _lines(sorted(EVALPLUS_REFERENCE.glob("*.evalplus.jsonl")))
    return "humanevalplus", [{"task_id": r["task_id"], "completion": r["completion"]} for r in rows], {}


def mbpp(directory: Path) -> Built:
    return str(MBPP_SOLUTIONS), _lines([mbpp_reference(directory, False)]), {}


def mbpp_canonical(directory: Path) -> Built:
    return str(SHARED / "mbpp" / "mbpp.jsonl"), "canonical", {}


def mbppplus(directory: Path) -> Built:
    return "mbppplus", mbppplus_samples.samples(), {}


def _competitive(name: str) -> Callable[[Path], Built]:
    def build(directory: Path) -> Built:
        one = competitive.SETS[name](directory)
        return str(one.problems), one.samples, {}

    return build


def classeval(directory: Path) -> Built:
    rows = json.loads((SHARED / "classeval" / "GPT-4_100_c_t0.json").read_text())
    samples = [{"task_id": row["task_id"], "generation": row["predict"][0]} for row in rows]
    return str(SHARED / "classeval" / "ClassEval_data.json"), samples, {}


def bigcodebench(directory: Path) -> Built:
    problems = BIGCODEBENCH / "problems" / "DERIVED_BigCodeBench-v0.1.4.jsonl"
    standard = set(sys.stdlib_module_names)
    tasks = set()
    for line in problems.read_text().splitlines():
        record = json.loads(line)
        libs = ast.literal_eval(record["libs"]) if isinstance(record["libs"], str) else record["libs"]
        if all(lib in standard for lib in libs):
            tasks.add(record["task_id"])
    given = BIGCODEBENCH / "qwen2.5-coder-base" / "7b-base" / "full" / "completion-sanitized-calibrated.jsonl"
    samples = [row for row in _lines([given]) if row["task_id"] in tasks]
    return "bigcodebench", samples, {"environment": "none"}


def _language(name: str) -> Callable[[Path], Built]:
    def build(directory: Path) -> Built:
        one = languages.make_set(name, directory, 0)
        return str(one.problems), one.samples, {}

    return build


#: bench/languages.py's sets of real programs (or canonical solutions) in other languages than Python.
LANGUAGE_SETS = ["mbcpp", "mbjsp", "mbtsp", "mbgp", "reflexion-rs-1",
                 *(f"humaneval-x-canonical-{language}" for language in languages.HUMANEVAL_X)]  # fmt: skip

SETS: dict[str, Callable[[Path], Built]] = {
    "humaneval": humaneval,
    "humanevalplus": humanevalplus,
    "mbpp": mbpp,
    "mbpp-canonical": mbpp_canonical,
    "mbppplus": mbppplus,
    **{
        name: _competitive(name)
        for name in ("apps150", "leetcode", "deepcoder-code_contests", "deepcoder-codeforces", "deepcoder-leetcode")
    },
    "classeval": classeval,
    "bigcodebench": bigcodebench,
    **{name: _language(name) for name in LANGUAGE_SETS},
}


# ---- recording ----------------------------------------------------------------------------------------------


def outcome(stored: Any) -> dict[str, Any] | None:
    if stored is None:
        return None
    endings = {ending: ENDING_TIMINGS for ending in ("script", "compiled") if getattr(stored, ending) is not None}
    return stored.model_dump(mode="json", exclude=dict.fromkeys(TIMINGS, True) | endings)


def record_sets(names: list[str], directory: Path) -> Iterator[dict[str, Any]]:
    with codeexec.connect(data_dir=directory / "data", workers=2) as ce:
        for name in names:
            problems, samples, options = SETS[name](directory)
            given: Path | str = samples if isinstance(samples, str) else directory / f"{name}.jsonl"
            if isinstance(samples, list):
                Path(given).write_text("".join(json.dumps(sample) + "\n" for sample in samples))
            began = time.monotonic()
            run = ce.submit(problems, given, k=[1], **options)
            report = run.wait()
            print(f"{name}: {report.n_samples} samples in {time.monotonic() - began:.0f} s", file=sys.stderr)
            for row in run.results():
                yield {"set": name, "line": row.line, "task_id": row.task_id, "outcome": outcome(row.result)}


def record_run_code(directory: Path) -> Iterator[dict[str, Any]]:
    """Each of RUN_CODE's requests through a real server, on the same private Valkey and warm workers."""
    env = {name: value for name, value in os.environ.items() if name != "CODEEXEC_REDIS_URL"}
    env |= {"CODEEXEC_DATA_DIR": str(directory / "data"), "CODEEXEC_WORKERS": "2"}
    port = str(free_port())
    log = (directory / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "codeexec.producer.entry.cli", "serve", "--port", port], env=env, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/v1/ping", timeout=5).json() == "pong":
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline or server.poll() is not None:
                sys.exit(f"the server did not start:\n{(directory / 'serve.log').read_text()}")
            time.sleep(0.1)
        for number, request in enumerate(RUN_CODE, start=1):
            yield {"set": "run_code", "line": number, "task_id": None, "outcome": _answer(url, request)}
        for language, (_, served) in sorted(LANGUAGES_RUN_CODE.items()):
            for which, code in (("echo", served.echo), ("failing", served.failing), ("broken", NOT_A_PROGRAM)):
                request = {"language": language, "code": code, "stdin": "41\n", "run_timeout": 30,
                           "compile_timeout": 60}  # fmt: skip
                line = f"{language} {which}"
                yield {"set": "run_code_languages", "line": line, "task_id": None, "outcome": _answer(url, request)}
    finally:
        server.terminate()
        server.wait(timeout=60)


def _answer(url: str, request: dict[str, Any]) -> dict[str, Any]:
    answer = httpx.post(f"{url}/run_code", json={"language": "python", **request}, timeout=300).json()
    for result in ("run_result", "compile_result"):
        if answer.get(result):
            answer[result].pop("execution_time", None)
    return answer


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def record(out: Path, names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp, gzip.open(out, "wt") as written:
        directory = Path(tmp)
        lines = record_sets([name for name in names if name in SETS], directory)
        if "run_code" in names:  # with run_code_languages
            lines = _then(lines, record_run_code(directory))
        for line in lines:
            written.write(normalized(json.dumps(line, sort_keys=True)) + "\n")
        stop = [sys.executable, "-m", "codeexec.producer.entry.cli", "stop", "--data-dir", str(directory / "data")]
        subprocess.run(stop, check=False, capture_output=True)


def _then(first: Iterator[dict[str, Any]], second: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    yield from first
    yield from second


# ---- comparing ----------------------------------------------------------------------------------------------


def normalized(text: str) -> str:
    for pattern, placeholder in VARYING:
        text = pattern.sub(placeholder, text)
    return text


def load(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
    with gzip.open(path, "rt") as lines:
        return {(row["set"], row["line"]): untimed(row) for row in (json.loads(normalized(line)) for line in lines)}


def untimed(row: dict[str, Any]) -> dict[str, Any]:
    """The row without its program's endings' timings (records made before they were left out)."""
    outcome = row.get("outcome")
    for ending in ("script", "compiled"):
        if isinstance(outcome, dict) and isinstance(outcome.get(ending), dict):
            outcome[ending] = {name: value for name, value in outcome[ending].items() if name not in ENDING_TIMINGS}
    return row


def compare(before: Path, after: Path, again: Path | None = None) -> int:
    """Print each sample whose outcome differs between the records, set by set; 1 if any does. `again`: a
    second record of the code `before` was made with: a sample that differs between those two varies by itself
    (a task's random input, the clock it prints, a time near its limit), and is listed apart."""
    old, new = load(before), load(after)
    noise = load(again) if again else old
    differ = varies = 0
    for name in sorted({key[0] for key in old.keys() | new.keys()}):
        keys = sorted(key for key in old.keys() | new.keys() if key[0] == name)
        moved = [key for key in keys if _outcome(old, key) != _outcome(new, key)]
        itself = [key for key in moved if _outcome(old, key) != _outcome(noise, key)]
        moved = [key for key in moved if key not in itself]
        apart = f", {len(itself)} vary by themselves" if again else ""
        print(f"{name}: {len(keys)} samples, {len(moved)} differ{apart}")
        for key in moved[:20]:
            was, now = old.get(key), new.get(key)
            print(f"  line {key[1]} ({(was or now or {}).get('task_id')}):")
            print(f"    before: {json.dumps(was and was['outcome'])[:400]}")
            print(f"    after:  {json.dumps(now and now['outcome'])[:400]}")
        if itself:
            listed = ", ".join(f"line {line} ({old[(name, line)].get('task_id')})" for _, line in itself)
            print(f"  varying by themselves: {listed}")
        differ, varies = differ + len(moved), varies + len(itself)
    apart = f", {varies} vary by themselves" if again else ""
    print(f"in all: {len(old.keys() | new.keys())} samples, {differ} differ{apart}")
    return 1 if differ else 0


def _outcome(record: dict[tuple[str, int], dict[str, Any]], key: tuple[str, int]) -> Any:
    return record.get(key, {}).get("outcome")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    made = commands.add_parser("record", help="record every verdict of the corpus")
    made.add_argument("out", type=Path)
    made.add_argument("--sets", default=",".join([*SETS, "run_code"]), help=f"of {', '.join([*SETS, 'run_code'])}")
    compared = commands.add_parser("compare", help="two records, sample by sample")
    compared.add_argument("before", type=Path)
    compared.add_argument("after", type=Path)
    compared.add_argument("--again", type=Path, help="a second record of the code before (see compare())")
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, args.sets.split(","))
        return 0
    return compare(args.before, args.after, args.again)


if __name__ == "__main__":
    sys.exit(main())
