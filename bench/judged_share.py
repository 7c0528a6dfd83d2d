"""How many tests of each problem set the host judges (worker/process/split.py), and which stay in the
candidate's process: the table of docs/judging.md under "Verdicts judged in the host". No timing, no server:
the split is decided from the tests alone, as every worker decides it.

    python bench/judged_share.py [--list]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.agreement import MBPP
from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.kinds import AssertionTests
from codeexec.worker.judging.kinds import kind_of
from codeexec.worker.process.split import split

SETS = {
    "HumanEval": ("humaneval", "all"),
    "MBPP, test split": (str(MBPP / "mbpp.jsonl"), "test"),
    "MBPP, all": (str(MBPP / "mbpp.jsonl"), "all"),
    "HumanEval+": ("humanevalplus", "all"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="also name each test that stays in-process")
    options = parser.parse_args()
    print("| problems | tasks | tests host-compared | in-process |")
    print("|---|---|---|---|")
    listed: list[str] = []
    for name, (spec, part) in SETS.items():
        problems = load_problems(spec, split=part)
        tests = host = 0
        staying: list[str] = []
        for problem in problems.values():
            tests += problem.total
            host += kind_of(problem.tests).host_compared(problem.tests)
            if isinstance(problem.tests, AssertionTests):
                staying += [problem.task_id for text in problem.tests.assertions if split(text) is None]
        print(f"| {name} | {len(problems)} | {host:,} of {tests:,} | {tests - host:,} |")
        if staying:
            listed.append(f"{name}, in-process: {', '.join(sorted(set(staying), key=_number))}")
    if options.list:
        print("", *listed, sep="\n")


def _number(task_id: str) -> int:
    return int(task_id.rpartition("/")[2])


if __name__ == "__main__":
    main()
