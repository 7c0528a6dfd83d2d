"""Same verdicts in both isolation modes, and with the sandbox on and off: every sample evaluated forked
from a warm interpreter and in a fresh one (or in the default isolation with workers whose sandbox is on,
and off: worker/candidate/sandbox.py), through the whole distributed path (private Valkey, one worker process
per core), compared line by line. The default isolation is "fork", and the sandbox on, only if this
prints no difference.

Sets: every file of ../shared/data/humaneval-reference (16,400 real generations), MBPP's canonical
solutions (every split, 974), and Reflexion's GPT-4 MBPP solutions (397). Beside the verdicts, each
set's wall time in both modes (the two arms alternate from set to set).

    python bench/isolation_verdicts.py [--sets reference,mbpp,gpt4] [--compare isolation|sandbox]
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
from codeexec.producer.inputs.problems import load_problems, write_canonical_samples
from codeexec.producer.local.backend import private_backend

ARMS = {"isolation": ("fork", "fresh"), "sandbox": ("on", "off")}


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
    parser.add_argument("--compare", choices=sorted(ARMS), default="isolation")
    args = parser.parse_args()
    first, second = ARMS[args.compare]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        chosen = sets(args.sets.split(","), directory)
        runs: dict[tuple[int, str], Evaluated] = {}
        if args.compare == "isolation":
            with private_backend(directory / "valkey", os.cpu_count() or 1) as client:
                for number, (_, problems, samples) in enumerate(chosen):
                    for mode in (first, second) if number % 2 == 0 else (second, first):
                        runs[number, mode] = evaluate(client, problems, samples, f"set{number}-{mode}", isolation=mode)
        else:
            # The sandbox is the workers' setting: the backend and its workers start again for each arm,
            # one after the other, on the same data (the Celery app keeps the first server's address).
            for arm in (first, second):
                os.environ["CODEEXEC_SANDBOX"] = "auto" if arm == "on" else "off"
                with private_backend(directory / "valkey", os.cpu_count() or 1) as client:
                    for number, (_, problems, samples) in enumerate(chosen):
                        runs[number, arm] = evaluate(client, problems, samples, f"set{number}-{arm}")
            os.environ.pop("CODEEXEC_SANDBOX")
        for number, (name, _, samples) in enumerate(chosen):
            rows.append((name, samples.read_text().splitlines(), runs[number, first], runs[number, second]))
    print(
        f"{'set':<36} {'samples':>8} {'verdicts differ':>16} {'outcomes differ':>16}"
        f" {first + '/s':>8} {second + '/s':>8}"
    )
    for name, lines, one, other in rows:
        n = len(one.verdicts)
        verdicts = [i for i in range(n) if one.verdicts[i] != other.verdicts[i]]
        outcomes = [i for i in range(n) if _outcome(one, i) != _outcome(other, i)]
        print(
            f"{name:<36} {n:>8} {len(verdicts):>16} {len(outcomes):>16}"
            f" {n / one.seconds:>8.1f} {n / other.seconds:>8.1f}"
        )
        for i in sorted(set(verdicts) | set(outcomes)):
            task = json.loads(lines[i])["task_id"]
            print(f"    line {i + 1} ({task}): {first} {_describe(one, i)}; {second} {_describe(other, i)}")


def _outcome(arm: Evaluated, line: int) -> str | None:
    result = arm.results[line]
    return None if result is None else result.exit_code


def _describe(arm: Evaluated, line: int) -> str:
    result = arm.results[line]
    return "no result" if result is None else f"{result.exit_code} ({result.detail[:100]})"


if __name__ == "__main__":
    main()
