"""Programs in other languages: codeexec's verdicts against the reference harnesses' own, run here on the same
samples, and the speed of each against the other and against the floor (the programs' own compile and run).

Sets (../shared/data/multilang/):
- mbcpp, mbjsp, mbtsp, mbgp: MBXP's problems with mxeval's example samples (one real generation a task);
  the reference is mxeval's evaluate_functional_correctness (its timeout 10 s), run here; mbphp, mbplp,
  mbrbp, mbscp (PHP, Perl, Ruby, Scala) the same, read from mxeval's checkout.
- mbcpp-canonical, mbjsp-canonical, mbtsp-canonical, mbjp-canonical: MBXP's canonical solutions (where a
  row has one: MBGP's, MBPLP's and MBSCP's have none; mxeval ships no Java samples), judged by mxeval
  here: each must pass wherever mxeval passes it.
- reflexion-rs-1, reflexion-rs-2: GPT-4's Reflexion programs for MultiPL-E's humaneval-rs (whole
  programs); the reference is MultiPL-E's evaluation (evaluation/src/main.py, eval_rust.py), run here.
- humaneval-x-canonical-<lang> (cpp, go, java, js, rust): HumanEval-X's canonical solutions, which must pass
  (CodeGeeX's harness passes them all); Rust's judged by CodeGeeX's harness here where --codegeex is given.
- humaneval-x-mutants-rust: HumanEval-X has no real Rust generations to be had (CodeGeeX's generations file
  holds its canonical solutions): each canonical solution and up to four of its mutants (an operator
  changed, the body cut short, a panic), in CodeGeeX's samples format ("generation"), judged by CodeGeeX's
  evaluate_humaneval_x.py here: its `cargo check` and `cargo test` in its own cargo project, with Debian's
  crates (rand 0.8 in place of its lock's 0.4, which cannot be had here) and Rust/50's test's rand 0.4
  calls said as 0.8 says them, as codeexec says them (docs/languages.md).

For each set codeexec runs it (--workers local workers, fork isolation, warmed by a run of a few samples),
then the reference with as many workers; each is timed from the first sample to the last. Every sample
whose verdicts differ is listed with both harnesses' words. The floor: each program's own commands (its
compile and its run), one after another, without a sandbox, divided among the workers. The ceiling: the
reference's time over the floor's time in programs that ran to their time limit (what any judge with the
same limits must wait out, however it starts a program): the most any such judge can be faster.

    python bench/languages.py --mxeval DIR --multiple DIR --codegeex DIR [--sets mbjsp,reflexion-rs-1]
        [--workers 2] [--limit N] [--load] [--no-floor] [--no-reference] [--json OUT]

--mxeval: a checkout of amazon-science/mxeval (its mxeval/ package); --multiple: of nuprl/MultiPL-E (or
its fork ankhanhtran02/MultiPL-E@08266b2a: the same evaluation/src/); --codegeex: of THUDM/CodeGeeX
(@2838420b: codegeex/benchmark/). Each runs from a copy in a temporary directory, in a throw-away virtualenv
(numpy, tqdm; fire and regex for CodeGeeX's). --load runs codeexec again beside 3 busy loops a core
and counts the verdicts that flip.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from load_invariance import CORES, busy_loops
from runs import warm_run

from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.kinds import ProgramTests
from codeexec.worker.judging.sample_program import program_for
from codeexec.worker.languages import language_of

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "multilang"
MBXP = {"mbcpp": "mbcpp_release_v1.2", "mbjsp": "mbjsp_release_v1.2", "mbtsp": "mbtsp_release_v1.2",
        "mbgp": "mbgp_release_v1.1", "mbjp": "mbjp_release_v1.2", "mbphp": "mbphp_release_v1.2",
        "mbplp": "mbplp_release_v1", "mbrbp": "mbrbp_release_v1.2", "mbscp": "mbscp_release_v1"}  # fmt: skip
#: MBXP's sets whose problems and samples ../shared does not hold: read from mxeval's checkout (data/mbxp/);
#: its MBJP samples are held out, and not read.
FROM_CHECKOUT = {"mbphp", "mbplp", "mbrbp", "mbscp"}
HUMANEVAL_X = {"cpp": "cpp", "go": "go", "java": "java", "js": "js", "rust": "rust"}


@dataclass
class Set:
    """A set: its problems file, its samples (task_id and one code field each, as codeexec reads them), and
    how the reference is run on it ("mxeval", "multiple", "codegeex", or "" for none)."""

    name: str
    problems: Path
    samples: list[dict[str, Any]]
    reference: str
    language: str = ""
    known: list[bool] | None = None  # where no reference runs: what it is known to give (canonical: pass)
    notes: list[str] = field(default_factory=list)


def mbxp(name: str, canonical: bool, directory: Path, limit: int, mxeval: Path | None) -> Set:
    if name in FROM_CHECKOUT and mxeval is None:
        raise SystemExit(f"{name}: its problems and samples are read from mxeval's checkout: give --mxeval")
    where = mxeval / "data" / "mbxp" if name in FROM_CHECKOUT and mxeval else DATA / "mbxp" / "problems"
    problems = where / f"{MBXP[name]}.jsonl"
    rows = [json.loads(line) for line in problems.read_text().splitlines() if line.strip()]
    language = rows[0]["language"]
    if canonical:
        samples = [{"task_id": r["task_id"], "completion": r["canonical_solution"], "language": language}
                   for r in rows if r.get("canonical_solution")]  # fmt: skip
    else:
        path = (where / "examples" if name in FROM_CHECKOUT else DATA / "mbxp" / "samples") / f"{name}_samples.jsonl"
        samples = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    samples = samples[: limit or None]
    # mxeval asks for a sample of every problem: the problems file holds only the sampled ones.
    sampled = {sample["task_id"] for sample in samples}
    kept = directory / f"{name}{'-canonical' if canonical else ''}-problems.jsonl"
    kept.write_text("".join(json.dumps(r) + "\n" for r in rows if r["task_id"] in sampled))
    return Set(name + ("-canonical" if canonical else ""), kept, samples, "mxeval", language)


def reflexion(run: int, directory: Path, limit: int) -> Set:
    rows = [json.loads(line) for line in (DATA / "reflexion-rs" / f"gpt4_reflexion_humaneval-rs_run{run}.jsonl")
            .read_text().splitlines() if line.strip()]  # fmt: skip
    samples = [{"task_id": r["name"], "solution": r["solution"], "language": "rs"} for r in rows][: limit or None]
    return Set(f"reflexion-rs-{run}", DATA / "multipl-e" / "humaneval" / "humaneval-rs-reworded.jsonl",
               samples, "multiple", "rs")  # fmt: skip


def humaneval_x(language: str, directory: Path, limit: int, mutants: bool = False) -> Set:
    path = DATA / "humaneval-x" / f"humaneval_{HUMANEVAL_X[language]}.jsonl.gz"
    with gzip.open(path, "rt") as lines:
        rows = [json.loads(line) for line in lines]
    bodies = [(r["task_id"], body) for r in rows for body in (mutated(r["canonical_solution"]) if mutants else
              [r["canonical_solution"]])]  # fmt: skip
    samples = [{"task_id": task_id, "generation": body} for task_id, body in bodies][: limit or None]
    reference = "codegeex" if language == "rust" else ""  # CodeGeeX's harness, run here for Rust
    if mutants:
        return Set(f"humaneval-x-mutants-{language}", path, samples, reference, language)
    return Set(f"humaneval-x-canonical-{language}", path, samples, reference, language, known=[True] * len(samples))


def mutated(body: str) -> list[str]:
    """A canonical solution (a Rust function's body) and up to four mutants of it: one operator changed, the
    body cut short (it does not compile), a panic."""
    changed = [body.replace(a, b, 1) for a, b in ((" < ", " <= "), (" > ", " >= "), ("+ 1", "+ 2"), ("- 1", "- 2"),
               ("true", "false"), (" == ", " != ")) if a in body]  # fmt: skip
    lines = body.rstrip().split("\n")
    cut = ["\n".join(lines[:-2]) + "\n"] if len(lines) > 3 else []
    return [body, *[*changed, *cut, '\n    panic!("no");\n}\n'][:4]]


def make_set(name: str, directory: Path, limit: int, mxeval: Path | None = None) -> Set:
    """The set called `name`, its first `limit` samples (0: all)."""
    if name.startswith("reflexion-rs-"):
        return reflexion(int(name.rsplit("-", 1)[1]), directory, limit)
    if name.startswith(("humaneval-x-canonical-", "humaneval-x-mutants-")):
        return humaneval_x(name.rsplit("-", 1)[1], directory, limit, mutants="-mutants-" in name)
    base = name.removesuffix("-canonical")
    return mbxp(base, name.endswith("-canonical"), directory, limit, mxeval)


#: MBXP's sets whose rows have no canonical solution (MBGP's, MBPLP's, MBSCP's).
NO_CANONICAL = {"mbgp", "mbplp", "mbscp"}
SETS = [*(name for name in MBXP if name != "mbjp"), *(f"{name}-canonical" for name in MBXP if name not in NO_CANONICAL),
        "reflexion-rs-1", "reflexion-rs-2",
        *(f"humaneval-x-canonical-{language}" for language in HUMANEVAL_X), "humaneval-x-mutants-rust"]  # fmt: skip


# ---- codeexec --------------------------------------------------------------------------------------------


def run_codeexec(one: Set, directory: Path, workers: int, tag: str) -> tuple[float, list[str], list[str]]:
    """Seconds from submitting to the last result, each sample's outcome and detail (runs.warm_run())."""
    took, results = warm_run(str(one.problems), one.samples, directory, f"{one.name}-{tag}", workers)
    outcomes = [r.result.exit_code if r.result else "none" for r in results]
    return took, outcomes, [r.result.detail if r.result else "" for r in results]


# ---- the references --------------------------------------------------------------------------------------


def virtualenv(directory: Path) -> Path:
    """A throw-away virtualenv with what the references import."""
    env = directory / "ref-venv"
    if not (env / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        subprocess.run([str(env / "bin" / "pip"), "install", "-q", "numpy", "tqdm", "fire", "regex"], check=True)
    return env / "bin" / "python"


_MXEVAL = """
import json, sys, time
from mxeval.evaluation import evaluate_functional_correctness
began = time.monotonic()
evaluate_functional_correctness(sys.argv[1], k=[1], n_workers=int(sys.argv[3]), timeout=10.0, problem_file=sys.argv[2])
print(json.dumps({"seconds": time.monotonic() - began}))
"""


def run_mxeval(one: Set, source: Path, directory: Path, workers: int) -> tuple[float, list[str], list[str]]:
    """mxeval's evaluate_functional_correctness from a copy of its package (it writes its programs inside
    it): seconds, each sample's "pass" or "fail", and its result (stderr)."""
    copy = directory / f"mxeval-{one.name}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(source / "mxeval", copy / "mxeval")
    for metadata in (source / "data").glob("*/metadata*.json"):  # read when its package is imported
        (copy / "data" / metadata.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(metadata, copy / "data" / metadata.parent.name / metadata.name)
    samples = directory / f"{one.name}-mxeval.jsonl"
    samples.write_text("".join(json.dumps(sample) + "\n" for sample in one.samples))
    python = virtualenv(directory)
    # NODE_PATH: lodash, which mxeval's JS and TS tests require (mxeval's setup installs it with npm).
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(directory), "NODE_PATH": "/usr/share/nodejs"}
    done = subprocess.run([str(python), "-c", _MXEVAL, str(samples), str(one.problems), str(workers)], cwd=copy,
                          env=env, capture_output=True, text=True, check=False)  # fmt: skip
    if done.returncode:
        raise SystemExit(f"mxeval failed on {one.name}:\n{done.stderr[-3000:]}")
    took = json.loads(done.stdout.strip().splitlines()[-1])["seconds"]
    results = [json.loads(line) for line in Path(f"{samples}_results.jsonl").read_text().splitlines()]
    # Its results file keeps the samples' order.
    return took, ["pass" if r["passed"] else "fail" for r in results], [str(r["result"])[-300:] for r in results]


def run_multiple(one: Set, source: Path, directory: Path, workers: int) -> tuple[float, list[str], list[str]]:
    """MultiPL-E's evaluation (evaluation/src/main.py) on a completions file per sample (the program as
    MultiPL-E builds it: prompt + completion + "\\n" + tests, here "" + the program's head + "\\n" + the rest):
    seconds, each sample's status, and its stderr."""
    problems = load_problems(str(one.problems))
    inputs = directory / f"multiple-{one.name}-in"
    outputs = directory / f"multiple-{one.name}-out"
    for path in (inputs, outputs):
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir()
    for index, sample in enumerate(one.samples):
        program = _program(problems[sample["task_id"]], sample)
        completions = {"name": f"{index:05d}", "language": one.language, "prompt": "", "tests": "",
                       "completions": [program]}  # fmt: skip
        (inputs / f"{index:05d}.json").write_text(json.dumps(completions))
    copy = directory / "multiple-src"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(source / "evaluation" / "src", copy)
    python = virtualenv(directory)
    began = time.monotonic()
    subprocess.run([str(python), "main.py", "--dir", str(inputs), "--output-dir", str(outputs),
                    "--max-workers", str(workers)], cwd=copy, capture_output=True, check=True)  # fmt: skip
    took = time.monotonic() - began
    statuses, said = [], []
    for index in range(len(one.samples)):
        result = json.loads((outputs / f"{index:05d}.results.json").read_text())["results"][0]
        statuses.append(result["status"])
        said.append(result["stderr"][-300:])
    return took, statuses, said


def run_codegeex(one: Set, source: Path, directory: Path, workers: int) -> tuple[float, list[str], list[str]]:
    """CodeGeeX's evaluate_humaneval_x.py from a copy of its codegeex/benchmark/ (its Rust branch runs cargo in
    the copy's cargo project): seconds, each sample's "pass" or "fail", and its result. Made to run here: its
    package's __init__.py (which imports its model's tokenizer) left empty; its cargo project with rand 0.8
    and Debian's crates, offline; Rust/50's test's rand 0.4 calls as 0.8 says them; the samples in a file per
    sample index (its Rust branch names a program's file by its task: two of one task at once would share it).
    Its timeout: 60 s (its script's 5 s is the whole of cargo check and cargo test, on the wall clock). A
    test binary it timed out goes on running (it kills its own process, not cargo's): killed after each file,
    where it would take the CPU from what is measured next."""
    copy = directory / f"codegeex-{one.name}"
    shutil.rmtree(copy, ignore_errors=True)
    for part in ("benchmark", "data"):
        shutil.copytree(source / "codegeex" / part, copy / "codegeex" / part)
    (copy / "codegeex" / "__init__.py").write_text("")
    project = copy / "codegeex" / "benchmark" / "rust"
    manifest = (project / "Cargo.toml").read_text()
    (project / "Cargo.toml").write_text(manifest.replace('rand = "0.4"', 'rand = "0.8"'))
    (project / "Cargo.lock").unlink(missing_ok=True)
    (project / ".cargo").mkdir(exist_ok=True)
    (project / ".cargo" / "config.toml").write_text(
        '[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n'
    )
    with gzip.open(one.problems, "rt") as lines:
        rows = [json.loads(line) for line in lines]
    for row in rows:
        for old, new in (
            ("(0, 2)", "(0..2)"),
            ("(b'a', b'z' + 1)", "(b'a'..b'z' + 1)"),
            ("(b'A', b'Z' + 1)", "(b'A'..b'Z' + 1)"),
        ):
            row["test"] = row["test"].replace(f".gen_range{old}", f".gen_range{new}")
    problems = directory / f"codegeex-{one.name}-problems.jsonl.gz"
    with gzip.open(problems, "wt") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows)
    prompts = {row["task_id"]: row["prompt"] for row in rows}
    files: list[list[int]] = []
    seen: dict[str, int] = {}
    for index, sample in enumerate(one.samples):
        k = seen[sample["task_id"]] = seen.get(sample["task_id"], -1) + 1
        files += [[] for _ in range(k + 1 - len(files))]
        files[k].append(index)
    python = virtualenv(directory)
    env = {"PATH": f"{Path.home() / '.cargo' / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(Path.home()),
           "CARGO_NET_OFFLINE": "true"}  # fmt: skip
    statuses, said = ["none"] * len(one.samples), [""] * len(one.samples)
    took = 0.0
    for k, indices in enumerate(files):
        samples = directory / f"codegeex-{one.name}-{k}.jsonl"
        samples.write_text("".join(json.dumps({"task_id": one.samples[i]["task_id"], "prompt":
                                               prompts[one.samples[i]["task_id"]], "generation":
                                               one.samples[i]["generation"]}) + "\n" for i in indices))  # fmt: skip
        shutil.rmtree(project / "src" / "bin", ignore_errors=True)
        began = time.monotonic()
        with open(directory / f"codegeex-{one.name}-{k}.log", "w") as log:  # not a pipe: what it leaves holds it
            running = subprocess.Popen([str(python), "-m", "codegeex.benchmark.evaluate_humaneval_x", "--input_file",
                                        str(samples), "--problem_file", str(problems), "--n_workers", str(workers),
                                        "--timeout", "60", "--tmp_dir", str(directory / "codegeex-tmp"), "--out_dir",
                                        str(directory / "codegeex-out")], cwd=copy, env=env, stdout=log,
                                       stderr=subprocess.STDOUT, start_new_session=True)  # fmt: skip
            if running.wait():
                raise SystemExit(f"CodeGeeX's evaluation failed on {one.name}: {log.name}")
        took += time.monotonic() - began
        try:  # what it left running: its session's
            os.killpg(running.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        results = directory / "codegeex-out" / f"{samples.stem}_results.jsonl"
        by_task = {r["task_id"]: r for r in map(json.loads, results.read_text().splitlines())}
        for i in indices:
            result = by_task[one.samples[i]["task_id"]]
            statuses[i], said[i] = ("pass" if result["passed"] else "fail"), str(result["result"])[-300:]
    return took, statuses, said


def _program(problem, sample: dict[str, Any]) -> str:
    from codeexec.protocol.models import Sample, SampleKind

    [kind] = [kind for kind in SampleKind if kind.value in sample]
    program = program_for(problem, Sample(kind=kind, text=sample[kind.value]))
    assert program is not None
    return program[:-1] if program.endswith("\n") else program  # MultiPL-E adds "\n" + tests ("")


# ---- the floor -------------------------------------------------------------------------------------------


def floor(one: Set, directory: Path, workers: int) -> tuple[float, float]:
    """Seconds each program's own commands take, one after another without a sandbox, divided among the
    workers: what no harness that compiles and runs each program can beat; and of those, the seconds of the
    programs that ran to their time limit: what no harness with the same limits can beat, however it starts
    a program."""
    problems = load_problems(str(one.problems))
    total = at_limits = 0.0
    for sample in one.samples:
        problem = problems[sample["task_id"]]
        tests = problem.tests
        assert isinstance(tests, ProgramTests)
        language = language_of(tests.language, tests.benchmark)
        toolchain = language.toolchain()
        assert not isinstance(toolchain, str), toolchain
        program = _program(problem, sample) + "\n"
        with tempfile.TemporaryDirectory(dir=directory) as work:
            file = language.file_of(program)
            Path(work, file).write_text(program)
            for name, text in language.companions.items():
                Path(work, name).write_text(text)
            began, limited = time.monotonic(), False
            for kind, argv, env in language.steps(file, toolchain, program):
                env = {name: value.replace("{dir}", work) for name, value in env.items()}
                limit = language.compile_limit_s if kind == "compile" else language.run_limit_s
                try:
                    done = subprocess.run(argv, cwd=work, env={"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": work,
                                          **env}, capture_output=True, timeout=limit, check=False)  # fmt: skip
                except subprocess.TimeoutExpired:
                    limited = True
                    break
                if kind == "compile" and done.returncode not in language.compiled:
                    break
            took = time.monotonic() - began
            total += took
            at_limits += took if limited else 0.0
    return total / workers, at_limits / workers


# ---- comparing -------------------------------------------------------------------------------------------


def passed(outcome: str) -> bool:
    return outcome in ("pass", "OK")


def compare(one: Set, ours: list[str], theirs: list[str], our_said: list[str], their_said: list[str]) -> dict[str, Any]:
    differ = [
        {
            "sample": index,
            "task_id": sample["task_id"],
            "codeexec": ours[index],
            "reference": theirs[index],
            "codeexec_said": our_said[index][:300],
            "reference_said": their_said[index][:300],
        }
        for index, sample in enumerate(one.samples)
        if passed(ours[index]) != passed(theirs[index])
    ]
    n = len(one.samples)
    return {
        "samples": n,
        "same": n - len(differ),
        "agreement": (n - len(differ)) / n,
        "pass@1 codeexec": sum(map(passed, ours)) / n,
        "pass@1 reference": sum(map(passed, theirs)) / n,
        "differ": differ,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mxeval", type=Path, help="a checkout of amazon-science/mxeval")
    parser.add_argument("--multiple", type=Path, help="a checkout of MultiPL-E (its evaluation/src/)")
    parser.add_argument("--codegeex", type=Path, help="a checkout of THUDM/CodeGeeX (its codegeex/benchmark/)")
    parser.add_argument("--sets", default=",".join(SETS), help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument("--workers", type=int, default=CORES)
    parser.add_argument("--limit", type=int, default=0, help="only the first N samples of each set")
    parser.add_argument("--load", action="store_true", help="codeexec again beside 3 busy loops a core")
    parser.add_argument("--no-floor", action="store_true", help="skip timing the floor")
    parser.add_argument("--no-reference", action="store_true", help="skip the references (with --load: flips only)")
    parser.add_argument("--json", type=Path, help="write every figure and difference here")
    args = parser.parse_args()
    report: dict[str, Any] = {}
    # The private Valkey may still be writing its last second when the directory goes: leave what it left.
    with tempfile.TemporaryDirectory(prefix="codeexec-languages-", ignore_cleanup_errors=True) as temporary:
        directory = Path(temporary)
        for name in args.sets.split(","):
            one = make_set(name, directory, args.limit, args.mxeval)
            took, ours, our_said = run_codeexec(one, directory, args.workers, "idle")
            entry: dict[str, Any] = {"codeexec_s": round(took, 2), "codeexec_per_s": round(len(one.samples) / took, 2)}
            source = {"mxeval": args.mxeval, "multiple": args.multiple, "codegeex": args.codegeex}.get(one.reference)
            if one.reference and source is not None and not args.no_reference:
                runner = {"mxeval": run_mxeval, "multiple": run_multiple, "codegeex": run_codegeex}[one.reference]
                their_took, theirs, their_said = runner(one, source, directory, args.workers)
                per_s = round(len(one.samples) / their_took, 2)
                entry |= {"reference_s": round(their_took, 2), "reference_per_s": per_s}
                entry["speedup"] = round(their_took / took, 2)
                entry |= compare(one, ours, theirs, our_said, their_said)
            elif one.known is not None:
                known = ["pass" if ok else "fail" for ok in one.known[: len(one.samples)]]
                entry |= compare(one, ours, known, our_said, [""] * len(known))
            if not args.no_floor:
                floor_s, at_limits_s = floor(one, directory, args.workers)
                entry |= {"floor_s": round(floor_s, 2), "floor_per_s": round(len(one.samples) / floor_s, 2)}
                if at_limits_s and "reference_s" in entry:
                    # However fast a judge starts programs, it waits out those that run to their limit.
                    entry["at_limits_s"] = round(at_limits_s, 2)
                    entry["ceiling"] = round(entry["reference_s"] / at_limits_s, 2)
            if args.load:
                with busy_loops(3 * CORES):
                    _, loaded, loaded_said = run_codeexec(one, directory, args.workers, "load")
                flipped = [
                    {"task_id": sample["task_id"], "idle": [str(a), said[:300]], "load": [str(b), loaded_said[i][:300]]}
                    for i, (sample, a, b, said) in enumerate(zip(one.samples, ours, loaded, our_said, strict=True))
                    if passed(a) != passed(b)
                ]
                entry["flips_under_load"] = len(flipped)
                entry["flipped"] = flipped
            report[name] = entry
            shown = {key: value for key, value in entry.items() if key not in ("differ", "flipped")}
            print(f"{name}: {json.dumps(shown)}", flush=True)
            for difference in entry.get("differ", []):
                print(f"  differs: {json.dumps(difference)}", flush=True)
            for flip in entry.get("flipped", []):
                print(f"  flipped under load: {json.dumps(flip)}", flush=True)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
