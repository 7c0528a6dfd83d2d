"""BigCodeBench's own evaluator, run on a samples file: what bench/bigcodebench_speed.py times codeexec against.

Run in a Python that has BigCodeBench's environment and the bigcodebench package (0.2.5, from PyPI, never
part of this repository): for each sample, bigcodebench.eval.untrusted_check() with the arguments its
evaluate() gives it (calibrated solution; AS and data 30 GiB, stack 10 MiB, or the limits given; min_time_limit 1;
gt_time_limit 20, as with --no-gt), in a ProcessPoolExecutor of `--parallel` processes, as evaluate() runs them
with --execution local --parallel N. Prints one JSON object: the seconds it took and each sample's status.

    python bench/bcb_ref.py PROBLEMS.jsonl[.gz] SAMPLES.jsonl --parallel 2 [--limits AS_MB,DATA_MB,STACK_MB]
"""

from __future__ import annotations

import argparse
import gzip
import json
import time
from concurrent.futures import ProcessPoolExecutor


def check(problem: dict, solution: str, limits: tuple[int, int, int]) -> str:
    from bigcodebench.eval import untrusted_check

    calibrated = problem["code_prompt"] + "\n    pass\n" + solution
    status, _ = untrusted_check(calibrated, problem["test"], problem["entry_point"], *limits, 1, 20)
    return status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("problems")
    parser.add_argument("samples")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--limits", default="30720,30720,10", help="address space, data and stack, in MiB")
    args = parser.parse_args()
    opener = gzip.open if args.problems.endswith(".gz") else open
    with opener(args.problems, "rt") as rows:
        problems = {row["task_id"]: row for row in map(json.loads, rows)}
    with open(args.samples) as rows:
        samples = [json.loads(line) for line in rows]
    began = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.parallel) as pool:
        limits = tuple(int(mib) for mib in args.limits.split(","))
        futures = [pool.submit(check, problems[s["task_id"]], s["solution"], limits) for s in samples]
        statuses = [future.result() for future in futures]
    print(json.dumps({"seconds": time.monotonic() - began, "statuses": statuses}))


if __name__ == "__main__":
    main()
