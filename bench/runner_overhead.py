"""Runner overhead: a trivial candidate through score_code_exec against a bare `python -I -c pass`.

All arms are timed alternately in one run with the same interpreter, so machine noise hits them
alike; the ratio of the medians is the figure (goal: at most 1.25). The runner is timed with its
default settings (a PID namespace where the kernel allows it) and without the namespace, to show
what that costs.

    python bench/runner_overhead.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from worker.runner import score_code_exec
from worker.settings import get_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()

    interpreter = get_settings().interpreter
    generation = "```python\ndef add(a, b):\n    return a + b\n```"
    assertions = ["assert add(1, 2) == 3"]

    def bare() -> None:
        subprocess.run([interpreter, "-I", "-c", "pass"], check=True)

    def runner() -> None:
        result = score_code_exec(generation, assertions)
        assert result.exit_code == "pass", result

    def runner_without_namespace() -> None:
        result = score_code_exec(generation, assertions, pid_namespace="off")
        assert result.exit_code == "pass", result

    arms = {"bare": bare, "runner": runner, "no namespace": runner_without_namespace}
    timings: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(10):  # warm the page cache and the host's imports
        for call in arms.values():
            call()
    for _ in range(args.rounds):
        for name, call in arms.items():
            began = time.perf_counter()
            call()
            timings[name].append(time.perf_counter() - began)

    ms = {name: statistics.median(values) * 1000 for name, values in timings.items()}
    print(f"interpreter: {interpreter}")
    print(f"rounds: {args.rounds} (interleaved)")
    print(f"python -I -c pass:                  median {ms['bare']:.2f} ms")
    print(f"score_code_exec:                    median {ms['runner']:.2f} ms")
    print(f"score_code_exec, pid_namespace=off: median {ms['no namespace']:.2f} ms")
    print(f"ratio: {ms['runner'] / ms['bare']:.2f}x (goal <= 1.25x)")
    print(f"the namespace: {ms['runner'] / ms['no namespace']:.2f}x ({ms['runner'] - ms['no namespace']:+.2f} ms)")


if __name__ == "__main__":
    main()
