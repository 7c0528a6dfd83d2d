"""Real C++ and Java competitive-programming submissions: codeexec's pass/fail against ExecEval's (the judge of
xCodeEval and MapCoder), and the verdicts that flip beside busy loops.

The data (--data, default /work/refs/cp-multilang, read in place and never copied into the repository; its
README.md says where each verdict comes from): submissions.jsonl, one program a row with ExecEval's
`reference_pass` and `reference_verdict`, and problems.jsonl, xCodeEval's hidden tests, each an input and a
list of acceptable outputs. Groups, by the id's prefix: uj2202 (model programs, per-test ExecEval results,
the cleanest reference), mapcoder (ChatGPT's, pass/fail only), xcodeeval-ct-src and xcodeeval-apr-bug
(Codeforces users', verdicts from an older, unpublished ExecEval: lower confidence).

In a temporary directory, one codeexec problem is made of each (problem, language) with submissions, stdin
tests under ExecEval's limits, which are by language and ignore the problem's own: 2 s a test for C++, 6 s for
Java (its `cpu: 2` times the language's timelimit_factor), and its address-space limits, 2 GiB for C++ and
3 GiB for Java, given as `memory_bytes` (codeexec sets it as a compiled program's RLIMIT_DATA). Inputs have
every "\\r" removed, as ExecEval removes them. Where a test lists one acceptable output (after stripping each
line), the problem is judged in codeexec's default `lcb` mode against it. Where a test lists more than one
(problems with several right answers: xCodeEval lists the outputs of accepted programs), the problem gets a
`checker`, the bench's stand-in for xCodeEval's list of outputs: each test's expected text is the JSON list of
its acceptable outputs, and an output is accepted if it equals any of them under LiveCodeBench's comparison
(lines stripped, as many lines, each equal or equal as Decimal tokens). ExecEval's own comparison differs: its
token-wise fallback ignores how the tokens are split into lines, takes numbers within an absolute 1e-12, and
yes/no/true/false in any case; LiveCodeBench's (here, in both modes) needs the same lines, numbers equal, and
words in the same case.

codeexec runs as its users run it, `codeexec eval --problems P --samples S --k 1 --workers N --per-sample OUT`
(a private Valkey in the temporary directory, local workers, warmed first by an untimed run of a few
samples); each sample's pass/fail is compared with `reference_pass`. Printed per group and language: the
count, the agreement, samples/s, and every sample that differs with both verdicts and flags: the problem's
inputs truncated by xCodeEval ("..."), the reference's slowest test within 25 % of the limit, the checker
in use, a runtime other than GNU C++17 / Java 17 (ExecEval compiled GNU C++11 with -std=c++11, ...; codeexec
always uses its competitive C++17: `g++ -O2 -std=c++17 -DONLINE_JUDGE`, without ExecEval's `-include
limits.h -include math.h -static`). With --load, codeexec runs again beside 3 busy loops a core
(load_invariance.busy_loops: each in a session of its own, killed at the end) and the samples whose pass/fail
flips between the two runs are listed.

    .venv/bin/python bench/xcodeeval.py [--data DIR] [--groups uj2202,xcodeeval-ct-src,mapcoder,xcodeeval-apr-bug]
        [--languages cpp,java] [--limit N] [--workers N] [--load] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from load_invariance import CORES, busy_loops
from runs import stop_warm_workers

DATA = Path("/work/refs/cp-multilang")
GROUPS = ("uj2202", "xcodeeval-ct-src", "mapcoder", "xcodeeval-apr-bug")
LANGUAGES = ("cpp", "java")
#: ExecEval's limits_by_lang.yaml: wall clock cpu(2) x timelimit_factor (1 for C++, 3 for Java) a test,
#: whatever the problem says; RLIMIT_AS 2 GiB, and for Java 1 GiB more for the VM (with -Xmx2g).
TIME_LIMIT_S = {"cpp": 2.0, "java": 6.0}
#: codeexec gives the JVM no -Xmx: it sizes its heap from the machine's RAM, not from this limit, so a program
#: that makes much garbage may fail to commit heap under 3 GiB of RLIMIT_DATA (exit status 1) where ExecEval's
#: -Xmx2g would have collected it.
MEMORY_BYTES = {"cpp": 2 << 30, "java": 3 << 30}
NEAR = 0.75  # a reference time at or above this share of the limit may flip with the machine's speed
LETTERS = {"A": "accepted", "W": "wrong_answer", "T": "time_limit", "R": "runtime_error", "M": "memory_limit",
           "O": "output_limit"}  # fmt: skip

#: The stand-in for xCodeEval's list of acceptable outputs: `expected` is the JSON list of them, and an
#: output passes if LiveCodeBench's comparison (codeexec's lcb mode, worker/judging/helpers/outputs.py) accepts it
#: against any one. Self-contained: it runs in the sandbox as a candidate does.
CHECKER = """import json
from decimal import Decimal, InvalidOperation


def _lines(text):
    return [line.strip() for line in text.strip().split("\\n")]


def _decimals(line):
    try:
        return [Decimal(token) for token in line.split()]
    except (InvalidOperation, ValueError):
        return None


def _same(actual, expected):
    got, want = _lines(actual), _lines(expected)
    if len(got) != len(want):
        return False
    for line, wanted in zip(got, want):
        if line != wanted:
            numbers = _decimals(line)
            if numbers is None or numbers != _decimals(wanted):
                return False
    return True


def check(input, expected, actual):
    return any(_same(actual, each) for each in json.loads(expected))
"""


@dataclass
class Submission:
    id: str
    group: str
    language: str
    problem_id: str
    program: str
    runtime: str
    reference_pass: bool
    reference_verdict: str
    first_fail: dict[str, Any] | None
    max_time_s: float | None

    @property
    def task_id(self) -> str:
        return f"{self.problem_id}/{self.language}"


def load(data: Path, groups: list[str], languages: list[str], limit: int) -> list[Submission]:
    """The submissions of `groups` in `languages`, the first `limit` of each group and language by id (0: all)."""
    chosen: dict[tuple[str, str], list[Submission]] = {}
    for line in (data / "submissions.jsonl").read_text().splitlines():
        row = json.loads(line)
        group = row["id"].split("/", 1)[0]
        if group not in groups or row["language"] not in languages:
            continue
        chosen.setdefault((group, row["language"]), []).append(
            Submission(
                row["id"],
                group,
                row["language"],
                row["problem_id"],
                row["program"],
                row["reference_runtime"],
                row["reference_pass"],
                row["reference_verdict"],
                row["reference_first_fail"],
                row["reference_max_time_s"],
            )
        )
    kept = []
    for key in sorted(chosen):
        kept += sorted(chosen[key], key=lambda s: s.id)[: limit or None]
    return kept


def _lines(text: str) -> str:
    return "\n".join(line.strip() for line in text.strip().split("\n"))


def several_answers(problem: dict[str, Any]) -> bool:
    """Whether a test lists acceptable outputs that differ beyond the spaces around lines."""
    return any(len({_lines(output) for output in test["output"]}) > 1 for test in problem["tests"])


def problem_record(problem: dict[str, Any], language: str) -> dict[str, Any]:
    """codeexec's own problem shape for the problem's programs in `language`, under ExecEval's limits."""
    tests = problem["tests"]
    cases: dict[str, Any] = {
        "kind": "stdin",
        "language": language,
        "inputs": [test["input"].replace("\r", "") for test in tests],
        "time_limit_s": TIME_LIMIT_S[language],
        "memory_bytes": MEMORY_BYTES[language],
    }
    if several_answers(problem):
        cases |= {"outputs": [json.dumps(test["output"]) for test in tests], "checker": CHECKER}
    else:
        cases |= {"outputs": [test["output"][0] for test in tests], "mode": "lcb"}
    return {"task_id": f"{problem['problem_id']}/{language}", "cases": cases}


def build(directory: Path, problems: dict[str, dict[str, Any]], chosen: list[Submission]) -> tuple[Path, Path]:
    """The problems file and the samples file, in `directory`."""
    tasks = sorted({(s.problem_id, s.language) for s in chosen})
    problems_path, samples_path = directory / "problems.jsonl", directory / "samples.jsonl"
    with problems_path.open("w") as out:
        out.writelines(json.dumps(problem_record(problems[pid], language)) + "\n" for pid, language in tasks)
    samples_path.write_text(
        "".join(
            json.dumps({"task_id": s.task_id, "solution": s.program, "language": s.language, "id": s.id}) + "\n"
            for s in chosen
        )
    )
    return problems_path, samples_path


def run_codeexec(problems: Path, samples: Path, directory: Path, workers: int, tag: str) -> tuple[float, dict]:
    """`codeexec eval` on the files: seconds it took, and each sample's per-sample line by id."""
    out = directory / f"per-sample-{tag}.jsonl"
    env = os.environ | {"CODEEXEC_DATA_DIR": str(directory / "data")}  # its private Valkey: this run's own
    command = [sys.executable, "-m", "codeexec.producer.entry.cli", "eval", "--problems", str(problems),
               "--samples", str(samples), "--k", "1", "--workers", str(workers), "--per-sample", str(out),
               "--run", f"xcodeeval-{tag}"]  # fmt: skip
    began = time.monotonic()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    took = time.monotonic() - began
    if done.returncode:
        raise SystemExit(f"codeexec eval failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return took, {row["id"]: row for row in map(json.loads, out.read_text().splitlines())}


def warm(problems: Path, chosen: list[Submission], directory: Path, workers: int) -> None:
    """An untimed run of a few samples of each language: the workers, javac kept running and the C++ headers'
    precompiled header are then up, as they stay between a user's runs."""
    few = [s for language in LANGUAGES for s in [c for c in chosen if c.language == language][:workers]]
    path = directory / "warm.jsonl"
    path.write_text("".join(json.dumps({"task_id": s.task_id, "solution": s.program, "language": s.language,
                                        "id": s.id}) + "\n" for s in few))  # fmt: skip
    run_codeexec(problems, path, directory, workers, "warm")


def said(row: dict[str, Any] | None) -> str:
    """codeexec's verdict: its outcome, the first failing test's verdict and index, and the detail."""
    if row is None:
        return "no result"
    letters = row.get("verdicts", "")
    failing = next((at for at, letter in enumerate(letters) if letter != "A"), None)
    test = f" test {failing} {LETTERS.get(letters[failing], letters[failing])}" if failing is not None else ""
    detail = " ".join(str(row.get("detail") or "").split())[:240]
    return f"{row['exit_code']}{test} ({len(letters)} tests ran){': ' + detail if detail else ''}"


def reference_said(s: Submission) -> str:
    text = s.reference_verdict
    if s.first_fail:
        fail = s.first_fail
        result = " ".join(str(fail.get("result") or "").split())[:160]
        text += f" (first fail: test {fail.get('index')} {fail.get('exec_outcome')}, {fail.get('time_consumed')} s"
        text += f", {fail.get('peak_memory_consumed')}: {result!r})"
    return text


def flags(s: Submission, problem: dict[str, Any]) -> list[str]:
    """What may explain a difference without either judge being wrong."""
    found = []
    if problem.get("n_tests_with_truncated_input"):
        found.append(f"truncated inputs ({problem['n_tests_with_truncated_input']} of {problem['n_tests']} tests)")
    slowest = max(s.max_time_s or 0.0, float((s.first_fail or {}).get("time_consumed") or 0.0))
    if slowest >= NEAR * TIME_LIMIT_S[s.language]:
        found.append(f"near the limit (reference {slowest:g} s of {TIME_LIMIT_S[s.language]:g})")
    if several_answers(problem):
        found.append("several answers (checker)")
    if s.runtime not in ("GNU C++17", "Java 17"):
        found.append(f"runtime {s.runtime}")
    return found


def compare(
    chosen: list[Submission], rows: dict[str, dict], problems: dict[str, dict], seconds: float
) -> dict[str, Any]:
    """Agreement per group and language, and every sample whose pass/fail differs."""
    report: dict[str, Any] = {"seconds": round(seconds, 2), "samples_per_s": round(len(chosen) / seconds, 2)}
    for group in GROUPS:
        for language in LANGUAGES:
            these = [s for s in chosen if s.group == group and s.language == language]
            if not these:
                continue
            differ = [
                {
                    "id": s.id,
                    "codeexec": said(rows.get(s.id)),
                    "reference": reference_said(s),
                    "reference_pass": s.reference_pass,
                    "flags": flags(s, problems[s.problem_id]),
                }
                for s in these
                if bool(rows.get(s.id, {}).get("passed")) != s.reference_pass
            ]
            pairs = Counter(f"{s.reference_verdict} -> {rows.get(s.id, {}).get('exit_code')}" for s in these)
            report[f"{group}/{language}"] = {
                "samples": len(these),
                "agree": len(these) - len(differ),
                "agreement_pct": round(100 * (len(these) - len(differ)) / len(these), 2),
                "pass_codeexec": sum(bool(rows.get(s.id, {}).get("passed")) for s in these),
                "pass_reference": sum(s.reference_pass for s in these),
                "verdicts": dict(pairs.most_common()),
                "differ": differ,
            }
    return report


def flipped(chosen: list[Submission], idle: dict[str, dict], loaded: dict[str, dict]) -> list[dict[str, str]]:
    return [
        {"id": s.id, "idle": said(idle.get(s.id)), "loaded": said(loaded.get(s.id))}
        for s in chosen
        if bool(idle.get(s.id, {}).get("passed")) != bool(loaded.get(s.id, {}).get("passed"))
    ]


def show(report: dict[str, Any], tag: str) -> None:
    print(f"\n== {tag}: {report['seconds']} s, {report['samples_per_s']} samples/s", flush=True)
    for key, entry in report.items():
        if not isinstance(entry, dict):
            continue
        print(f"{key}: {entry['samples']} samples, {entry['agree']} agree ({entry['agreement_pct']} %); "
              f"pass codeexec {entry['pass_codeexec']}, reference {entry['pass_reference']}")  # fmt: skip
        print(f"  reference -> codeexec: {json.dumps(entry['verdicts'])}")
        for difference in entry["differ"]:
            print(f"  differs: {difference['id']}")
            print(f"    codeexec:  {difference['codeexec']}")
            print(f"    reference: {difference['reference']}")
            if difference["flags"]:
                print(f"    flags: {'; '.join(difference['flags'])}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help=f"the cp-multilang directory (default {DATA})")
    parser.add_argument("--groups", default=",".join(GROUPS), help="comma-separated id prefixes")
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated, of cpp, java")
    parser.add_argument("--limit", type=int, default=0, help="the first N samples (by id) a group and language")
    parser.add_argument("--workers", type=int, default=CORES, help="local worker processes (default: cores)")
    parser.add_argument("--load", action="store_true", help="again beside 3 busy loops a core: pass/fail flips")
    parser.add_argument("--json", type=Path, help="write the figures and every difference here")
    args = parser.parse_args()
    groups, languages = args.groups.split(","), args.languages.split(",")
    unknown = [name for name in groups if name not in GROUPS] + [name for name in languages if name not in LANGUAGES]
    if unknown:
        raise SystemExit(f"unknown group or language: {', '.join(unknown)}")
    problems = {row["problem_id"]: row for row in map(json.loads, (args.data / "problems.jsonl").open())}
    chosen = load(args.data, groups, languages, args.limit)
    result: dict[str, Any] = {"workers": args.workers, "limit": args.limit}
    # The private Valkey may still be writing its last second when the directory goes: leave what it left.
    with tempfile.TemporaryDirectory(prefix="codeexec-xcodeeval-", ignore_cleanup_errors=True) as temporary:
        directory = Path(temporary)
        env = os.environ | {"CODEEXEC_DATA_DIR": str(directory / "data")}
        try:
            problems_path, samples_path = build(directory, problems, chosen)
            warm(problems_path, chosen, directory, args.workers)
            seconds, idle = run_codeexec(problems_path, samples_path, directory, args.workers, "idle")
            result["idle"] = compare(chosen, idle, problems, seconds)
            result["idle_samples"] = {s.id: said(idle.get(s.id)) for s in chosen}
            show(result["idle"], f"idle, {len(chosen)} samples, {args.workers} workers")
            if args.load:
                with busy_loops(3 * CORES):
                    seconds, loaded = run_codeexec(problems_path, samples_path, directory, args.workers, "load")
                result["loaded"] = compare(chosen, loaded, problems, seconds)
                result["loaded_samples"] = {s.id: said(loaded.get(s.id)) for s in chosen}
                show(result["loaded"], f"beside {3 * CORES} busy loops")
                flips = flipped(chosen, idle, loaded)
                result["flips"] = flips
                print(f"\npass/fail flips between idle and loaded: {len(flips)} of {len(chosen)}")
                for flip in flips:
                    print(f"  {flip['id']}\n    idle:   {flip['idle']}\n    loaded: {flip['loaded']}")
        finally:
            stop_warm_workers(env)  # the workers would otherwise outlive their data directory by five minutes
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
