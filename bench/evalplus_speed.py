"""Speed on HumanEval+: the same samples through EvalPlus 0.3.1 and through codeexec, side by side.

The samples: reference files of ../shared/data/humanevalplus/reference/ put together into one
samples file (default: four files, from the strongest model to the weakest: 656 samples, 4 a task).
Each tool runs twice, as a user runs it, end to end, each command timed whole:

- cold: EvalPlus with an empty ground-truth cache, so it computes the expected outputs first;
  codeexec (`codeexec eval --problems humanevalplus`) on a fresh private Valkey with no worker up,
  so it starts them and computes its truth;
- warm: EvalPlus again, with the cache it made; codeexec again, its workers still up (keep-warm)
  and the truth kept from the first run (worker/evalplus.py).

Both get the machine's cores (EvalPlus --parallel N, codeexec N workers). EvalPlus is installed
into a throw-away virtualenv by bench/evalplus_ref.py. Prints samples/s of each and the ratio;
run it on an otherwise idle machine, since EvalPlus's verdicts (not codeexec's) move with load.

    python bench/evalplus_speed.py [--files N] [--cores N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import evalplus_ref

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "data" / "humanevalplus" / "reference"
# From the strongest to the weakest model of the references: a mix of passing and failing samples.
FILES = [
    "reflexion_gpt4",
    "qwen2.5-coder-7b-base",
    "lhb_Claude_custom",
    "lhb_togethercomputer_RedPajama-INCITE-7B-Instruct_Q_A_MARKDOWN",
    "wizardcoder33b_v1.1",
    "lhb_gpt3_final_500c_long",
]


def codeexec_eval(samples: Path, data_dir: Path, cores: int) -> tuple[float, dict]:
    environment = os.environ | {"CODEEXEC_DATA_DIR": str(data_dir), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "producer.cli", "eval", "--problems", "humanevalplus", "--samples", str(samples)]
    began = time.monotonic()
    out = subprocess.run(
        [*command, "--workers", str(cores), "--k", "1", "--json"], env=environment, capture_output=True, text=True
    )
    elapsed = time.monotonic() - began
    if out.returncode:
        raise SystemExit(out.stderr)
    return elapsed, json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=4, help=f"how many reference files (1-{len(FILES)})")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    evalplus_ref.python()  # installed before anything is timed
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        samples = directory / "samples.jsonl"
        with samples.open("w") as out:
            for name in FILES[: args.files]:
                for line in (REFERENCE / f"{name}.evalplus.jsonl").open():
                    record = json.loads(line)
                    out.write(json.dumps({"task_id": record["task_id"], "completion": record["completion"]}) + "\n")
        count = sum(1 for _ in samples.open())
        print(f"{count} samples ({args.files} files), {args.cores} cores", file=sys.stderr)
        figures = {}
        for phase in ("cold", "warm"):
            theirs, _ = evalplus_ref.evaluate(samples, directory / "evalplus", directory / "cache", args.cores)
            ours, report = codeexec_eval(samples, directory / "codeexec", args.cores)
            figures[phase] = (theirs, ours)
            print(
                f"{phase}: EvalPlus {count / theirs:6.1f} samples/s ({theirs:.1f} s); "
                f"codeexec {count / ours:6.1f} samples/s ({ours:.1f} s); codeexec / EvalPlus {theirs / ours:.2f}x "
                f"(pass@1 base {report['base_pass_at_k']['1']:.4f}, plus {report['pass_at_k']['1']:.4f})"
            )
        subprocess.run(
            [sys.executable, "-m", "producer.cli", "stop"],
            env=os.environ | {"CODEEXEC_DATA_DIR": str(directory / "codeexec"), "PYTHONPATH": str(ROOT)},
            capture_output=True,
        )


if __name__ == "__main__":
    main()
