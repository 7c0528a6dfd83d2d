"""Runner overhead: a trivial candidate through score_code_exec against a bare `python -I -c pass`.

Both are timed alternately in one run with the same interpreter, so machine noise hits both alike;
the ratio of the medians is the figure (goal: at most 1.25).

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

    timings: dict[str, list[float]] = {"bare": [], "runner": []}
    for _ in range(10):  # warm the page cache and the host's imports
        bare()
        runner()
    for _ in range(args.rounds):
        for name, call in (("bare", bare), ("runner", runner)):
            began = time.perf_counter()
            call()
            timings[name].append(time.perf_counter() - began)

    bare_ms = statistics.median(timings["bare"]) * 1000
    runner_ms = statistics.median(timings["runner"]) * 1000
    print(f"interpreter: {interpreter}")
    print(f"rounds: {args.rounds} (interleaved)")
    print(f"python -I -c pass: median {bare_ms:.2f} ms")
    print(f"score_code_exec:   median {runner_ms:.2f} ms")
    print(f"ratio: {runner_ms / bare_ms:.2f}x (goal <= 1.25x)")


if __name__ == "__main__":
    main()
