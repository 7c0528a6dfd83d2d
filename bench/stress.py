"""The stress loops at their full count: what the suite runs a tenth of (helpers.stress()). Run it before
resolving a change to the candidate's process (worker/process/, worker/candidate/): the same tests, with
CODEEXEC_TEST_STRESS=full, under every supported Python the machine has, in both isolation modes.

    test_cleanup.py   every escape 200 times (suite: 20), with and without a PID namespace
    test_record.py    every race with the record 100 times a Python and isolation (suite: 10)
    test_zygote.py    10,000 candidates through one zygote, its memory flat (suite: 1,000)

Prints each test file's time and outcome, and the table of docs/development.md.

    python bench/stress.py [--busy N]   # N busy loops beside it (default none)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOPS = {
    "tests/test_cleanup.py": "test_nothing_survives_an_escape_every_time",
    "tests/test_record.py": "",
    "tests/test_zygote.py": "memory_stays_flat",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--busy", type=int, default=0, help="busy loops to run beside it")
    options = parser.parse_args()
    env = {**os.environ, "CODEEXEC_TEST_STRESS": "full"}
    env.pop("CODEEXEC_TEST_CANDIDATES", None)  # every supported Python the machine has
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options.busy)]
    failed = 0
    rows = []
    try:
        for path, selected in LOOPS.items():
            began = time.monotonic()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pytest",
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    path,
                    *(["-k", selected] * bool(selected)),
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                text=True,
            )
            summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
            rows.append(f"| {path} | {summary} | {time.monotonic() - began:.0f} s |")
            if done.returncode != 0:
                failed += 1
                print(done.stdout[-5000:], file=sys.stderr)
    finally:
        for loop in busy:
            loop.kill()
    print(f"busy loops beside: {options.busy}")
    print("| stress loops | outcome | time |\n|---|---|---|")
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
