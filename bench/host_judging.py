"""What judging in the host costs (worker/process/split.py): the same candidates with their tests split, as every
run splits them, and with the very same tests judged in the candidate's process (each wrapped in `if
True:`, which keeps the assert's meaning and keeps it whole), through run_candidate in this process,
fork isolation, the arms alternating candidate by candidate so that machine noise hits them alike.

- HumanEval's canonical solutions with their tests (164 candidates, 1,106 tests): the time per
  candidate, each arm's median over the rounds;
- the round trip: one candidate with 200 asserts whose message is computed (`'no ' + str(i)`: the
  child sends each value and waits for the host's answer) against 200 with a literal message (sent
  with the rest at the end): the difference in charged time, per assert.

    python bench/host_judging.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from codeexec.producer.inputs.files import read_jsonl
from codeexec.producer.inputs.problems import humaneval_path, load_problems
from codeexec.protocol.models import Sample, SampleKind
from codeexec.protocol.result import Outcome
from codeexec.worker.judging.sample_program import program_for
from codeexec.worker.process.runner import run_candidate

ASKS = 200


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    problems = load_problems("humaneval")
    solutions = {record["task_id"]: record["canonical_solution"] for _, record in read_jsonl(humaneval_path())}
    arms = {
        "host-compared": lambda tests: tests,
        "in-process": lambda tests: [f"if True:\n{_indent(test)}" for test in tests],
    }
    seconds: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(args.rounds):
        totals = dict.fromkeys(arms, 0.0)
        for problem in problems.values():
            program = program_for(problem, Sample(kind=SampleKind.COMPLETION, text=solutions[problem.task_id]))
            for name, shape in arms.items():
                tests = shape(problem.tests.assertions)  # type: ignore[union-attr]  # HumanEval's: assertions
                began = time.perf_counter()
                result = run_candidate(program, tests, 10.0)
                totals[name] += time.perf_counter() - began
                assert result.exit_code is Outcome.PASS or problem.task_id == "HumanEval/32", (problem.task_id, result)
        for name in arms:
            seconds[name].append(totals[name] / len(problems))
    ms = {name: statistics.median(values) * 1000 for name, values in seconds.items()}
    print(f"HumanEval canonical, 164 candidates, {args.rounds} rounds (interleaved); median per candidate:")
    for name in arms:
        print(f"  {name:<14} {ms[name]:7.2f} ms")
    print(f"host-compared against in-process: {ms['host-compared'] / ms['in-process']:.2f}x the time")

    program = "def f(x):\n    return x\n"
    asking = [f"assert f({i}) == {i}, 'no ' + str({i})" for i in range(ASKS)]
    literal = [f"assert f({i}) == {i}, 'no {i}'" for i in range(ASKS)]
    charged: dict[str, list[float]] = {"asking": [], "literal": []}
    for _ in range(args.rounds * 10):
        for name, tests in (("asking", asking), ("literal", literal)):
            result = run_candidate(program, tests, 10.0)
            assert result.exit_code is Outcome.PASS, result
            charged[name].append(result.charged_s)
    gap = statistics.median(charged["asking"]) - statistics.median(charged["literal"])
    print(f"round trip for a computed message: {gap / ASKS * 1e6:.1f} us of charged time per assert (median)")


def _indent(text: str) -> str:
    return "".join(f"    {line}" for line in text.splitlines(keepends=True))


if __name__ == "__main__":
    main()
