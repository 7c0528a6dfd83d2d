"""End-to-end throughput through Celery + Redis against the raw ceiling, measured side by side.

- ceiling: a thread pool with one thread per core, each spawning `python -I -c pass` back to back;
  nothing is evaluated, so no evaluator can beat it on this machine;
- codeexec: the same number of trivial samples (one function, one assertion) submitted to the
  private Valkey and evaluated by local workers (one pool process per core), timed from the first
  job enqueued to the last result recorded.

Rounds alternate between the two so that machine noise hits both; the figure is the ratio of the
median rates (goal: at least 0.90).

    python bench/throughput.py [--samples 2000] [--rounds 3]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from producer.backend import private_backend
from producer.problems import load_problems
from producer.report import progress
from producer.samples import read_samples
from producer.submit import new_meta, submit
from worker.settings import get_settings


def ceiling_rate(samples: int, cores: int, interpreter: str) -> float:
    def spawn(_: int) -> None:
        subprocess.run([interpreter, "-I", "-c", "pass"], check=True)

    began = time.perf_counter()
    with ThreadPoolExecutor(cores) as pool:
        list(pool.map(spawn, range(samples)))
    return samples / (time.perf_counter() - began)


def codeexec_rate(client, directory: Path, samples: int, run: str) -> float:
    problems_path = directory / "problems.jsonl"
    samples_path = directory / f"{run}.jsonl"
    problems_path.write_text(json.dumps({"task_id": "t", "assertions": ["assert f() == 1"]}) + "\n")
    samples_path.write_text(
        "".join(json.dumps({"task_id": "t", "completion": "def f():\n    return 1\n"}) + "\n" for _ in range(samples))
    )
    problems = load_problems(str(problems_path))
    sample_set = read_samples(samples_path, problems)
    meta = new_meta(run, str(problems_path), sample_set, 3.0, [1])
    began = time.perf_counter()
    submit(client, problems, sample_set, meta, get_settings().batch_size)
    while progress(client, run)[0] < samples:
        time.sleep(0.05)  # rarely enough to cost the workers nothing, often enough to time within 1 %
    return samples / (time.perf_counter() - began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    interpreter = get_settings().interpreter

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        with private_backend(directory, cores) as client:
            codeexec_rate(client, directory, 200, "warmup")  # workers up, caches warm
            rates: dict[str, list[float]] = {"ceiling": [], "codeexec": []}
            for round_ in range(args.rounds):
                rates["ceiling"].append(ceiling_rate(args.samples, cores, interpreter))
                rates["codeexec"].append(codeexec_rate(client, directory, args.samples, f"round{round_}"))

    ceiling, ours = statistics.median(rates["ceiling"]), statistics.median(rates["codeexec"])
    print(f"cores: {cores}; samples per round: {args.samples}; rounds: {args.rounds} (alternating)")
    rounds = {name: [round(r, 1) for r in values] for name, values in rates.items()}
    print(f"ceiling (thread pool spawning python -I -c pass): {ceiling:,.1f} /s  {rounds['ceiling']}")
    print(f"codeexec end to end (Celery + Redis + runner):    {ours:,.1f} /s  {rounds['codeexec']}")
    print(f"ratio: {ours / ceiling:.2f} of the ceiling (goal >= 0.90)")


if __name__ == "__main__":
    main()
