"""Same verdicts in both isolation modes: every sample evaluated forked from a warm interpreter and in a
fresh one, through the whole distributed path (private Valkey, one worker process per core), compared
line by line. The default isolation is "fork" only if this prints no difference.

Sets: every file of ../shared/data/humaneval-reference (16,400 real generations), MBPP's canonical
solutions (every split, 974), and Reflexion's GPT-4 MBPP solutions (397). Beside the verdicts, each
set's wall time in both modes (the two arms alternate from set to set).

    python bench/isolation_verdicts.py [--sets reference,mbpp,gpt4]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.agreement import MBPP, MBPP_SOLUTIONS, REFERENCE, mbpp_reference
from bench.runs import Evaluated, evaluate
from producer.backend import private_backend
from producer.problems import load_problems, write_canonical_samples

MODES = ("fork", "fresh")


def sets(wanted: list[str], directory: Path) -> list[tuple[str, str, Path]]:
    """(name, problems, samples file) of each set wanted."""
    chosen = []
    if "reference" in wanted:
        every = directory / "humaneval-reference.jsonl"
        every.write_text("".join(path.read_text() for path in sorted(REFERENCE.glob("*.jsonl"))))
        chosen.append(("HumanEval reference, all files", "humaneval", every))
    if "mbpp" in wanted:
        mbpp = str(MBPP / "mbpp.jsonl")
        chosen.append(
            ("MBPP canonical, every split", mbpp, write_canonical_samples(mbpp, directory, load_problems(mbpp)))
        )
    if "gpt4" in wanted:
        chosen.append(("MBPP, Reflexion's GPT-4 solutions", str(MBPP_SOLUTIONS), mbpp_reference(directory, False)))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="reference,mbpp,gpt4")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        with private_backend(directory / "valkey", os.cpu_count() or 1) as client:
            for number, (name, problems, samples) in enumerate(sets(args.sets.split(","), directory)):
                order = MODES if number % 2 == 0 else MODES[::-1]
                arms: dict[str, Evaluated] = {}
                for mode in order:
                    arms[mode] = evaluate(client, problems, samples, f"set{number}-{mode}", isolation=mode)
                rows.append((name, samples.read_text().splitlines(), arms))
    print(f"{'set':<36} {'samples':>8} {'verdicts differ':>16} {'outcomes differ':>16} {'fork/s':>8} {'fresh/s':>8}")
    for name, lines, arms in rows:
        fork, fresh = arms["fork"], arms["fresh"]
        n = len(fork.verdicts)
        verdicts = [i for i in range(n) if fork.verdicts[i] != fresh.verdicts[i]]
        outcomes = [i for i in range(n) if _outcome(fork, i) != _outcome(fresh, i)]
        print(
            f"{name:<36} {n:>8} {len(verdicts):>16} {len(outcomes):>16}"
            f" {n / fork.seconds:>8.1f} {n / fresh.seconds:>8.1f}"
        )
        for i in sorted(set(verdicts) | set(outcomes)):
            task = json.loads(lines[i])["task_id"]
            print(f"    line {i + 1} ({task}): fork {_describe(fork, i)}; fresh {_describe(fresh, i)}")


def _outcome(arm: Evaluated, line: int) -> str | None:
    result = arm.results[line]
    return None if result is None else result.exit_code


def _describe(arm: Evaluated, line: int) -> str:
    result = arm.results[line]
    return "no result" if result is None else f"{result.exit_code} ({result.detail[:100]})"


if __name__ == "__main__":
    main()
