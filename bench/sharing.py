"""A quick run submitted during a big sweep: how long it takes, and what the sweep loses.

A private Valkey and its local workers (one per core), HumanEval's canonical solutions: `big` is
them `--copies` times over (3,280 samples by default, as the issue measured), `small` is them once
(164). In one session, on the same workers, each measured side by side:

1. small alone: from its submission to its last result;
2. big alone: its samples per second, from submission to its last result;
3. big again, and small submitted once a quarter of big is done: small's time (goal: within 3x of
   alone), and big's samples per second beside (2). Both runs' samples per second together are
   given too: what sharing costs the workers' throughput.

Before runs shared workers (first in, first out), small finished with big: 29.6 s after its
submission where alone it took ~2-3 s.

    python bench/sharing.py [--copies 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import redis

from codeexec.producer.inputs.problems import load_problems, write_canonical_samples
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.local.backend import private_backend
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, new_meta
from codeexec.protocol.run import RunOptions
from codeexec.protocol.settings import get_settings

PROBLEMS = "humaneval"


def submitted(client: redis.Redis, run: str, samples: Path) -> float:
    """Submit the samples file as `run`; when it was submitted (time.monotonic())."""
    problems = load_problems(PROBLEMS)
    sample_set = read_samples(samples, problems)
    meta = new_meta(run, PROBLEMS, sample_set, problems, RunOptions(k=[1]))
    began = time.monotonic()
    Run.submit(client, Submission(problems, sample_set, meta))
    return began


def finished(client: redis.Redis, run: str) -> float:
    """Wait for the run's last result; when it came (time.monotonic(), to within 5 ms)."""
    while True:
        done, total = Run.fetch(client, run).progress()
        if done >= total:
            return time.monotonic()
        time.sleep(0.005)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        small_file = write_canonical_samples(PROBLEMS, directory, load_problems(PROBLEMS))
        lines = small_file.read_text().splitlines(keepends=True)
        big_file = directory / "big.jsonl"
        big_file.write_text("".join(lines * args.copies))
        big_n, small_n = len(lines) * args.copies, len(lines)
        figures: dict[str, list[float]] = {"small alone": [], "small in big": [], "big alone": [], "big shared": []}
        both: list[float] = []
        with private_backend(directory / "data", workers=get_settings().workers) as client:
            submitted(client, "warmup", small_file)  # workers warm, outside the figures
            finished(client, "warmup")
            for round_ in range(args.repeat):
                began = submitted(client, f"small-alone-{round_}", small_file)
                figures["small alone"].append(finished(client, f"small-alone-{round_}") - began)

                began = submitted(client, f"big-alone-{round_}", big_file)
                figures["big alone"].append(big_n / (finished(client, f"big-alone-{round_}") - began))

                big_began = submitted(client, f"big-{round_}", big_file)
                while Run.fetch(client, f"big-{round_}").progress()[0] < big_n // 4:
                    time.sleep(0.005)
                small_began = submitted(client, f"small-{round_}", small_file)
                small_ended = finished(client, f"small-{round_}")
                assert Run.fetch(client, f"big-{round_}").progress()[0] < big_n, (
                    "big ended before small: make it bigger"
                )
                figures["small in big"].append(small_ended - small_began)
                big_ended = finished(client, f"big-{round_}")
                figures["big shared"].append(big_n / (big_ended - big_began))
                both.append((big_n + small_n) / (big_ended - big_began))
                print(
                    f"round {round_ + 1}: "
                    + ", ".join(f"{name} {values[-1]:.2f}" for name, values in figures.items())
                    + f", both shared {both[-1]:.1f} samples/s",
                    file=sys.stderr,
                )

    median = {name: statistics.median(values) for name, values in figures.items()}
    print(f"{small_n} samples submitted a quarter of the way into {big_n:,}; medians of {args.repeat} rounds:")
    print(
        f"small: {median['small in big']:.2f} s during big, {median['small alone']:.2f} s alone: "
        f"ratio {median['small in big'] / median['small alone']:.2f} (goal <= 3)"
    )
    print(
        f"big: {median['big shared']:.1f} samples/s with small, {median['big alone']:.1f} alone: "
        f"ratio {median['big shared'] / median['big alone']:.2f}; both runs together "
        f"{statistics.median(both):.1f} samples/s: ratio {statistics.median(both) / median['big alone']:.2f}"
    )
    print(json.dumps({name: [round(v, 3) for v in values] for name, values in figures.items()}), file=sys.stderr)


if __name__ == "__main__":
    main()
