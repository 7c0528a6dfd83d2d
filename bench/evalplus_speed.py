"""Speed on HumanEval+: the same samples through EvalPlus 0.3.1 and through codeexec, side by side.

The samples: four reference files of ../shared/data/humanevalplus/reference/ put together into one
samples file (656 samples, 4 a task): --set mixed (default) takes models from the strongest to the
weakest, --set weak the four weakest (most samples fail). Each tool runs twice, as a user runs it,
end to end, each command timed whole:

- cold: EvalPlus with an empty ground-truth cache, so it computes the expected outputs first;
  codeexec (`codeexec eval --problems humanevalplus`) on a fresh private Valkey with no worker up,
  so it starts them and computes its truth;
- warm: EvalPlus again, with the cache it made; codeexec again, its workers still up (keep-warm)
  and the truth kept from the first run (worker/judging/kinds/evalplus.py).

Both get the machine's cores (EvalPlus --parallel N, codeexec N workers). EvalPlus is installed
into a throw-away virtualenv by bench/evalplus_ref.py. Prints samples/s of each and the ratio, and
the floor: the time the samples' own calls were charged (codeexec's per-sample charged_s) spread
over the cores, which no evaluator that runs every input, as EvalPlus does, can go below. Run it on
an otherwise idle machine.

    python bench/evalplus_speed.py [--set mixed|weak] [--cores N]
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

import evalplus_ref

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT.parent / "shared" / "data" / "humanevalplus" / "reference"
SETS = {
    # From the strongest model of the references to the weakest: passing and failing samples.
    "mixed": [
        "reflexion_gpt4",
        "qwen2.5-coder-7b-base",
        "lhb_Claude_custom",
        "lhb_togethercomputer_RedPajama-INCITE-7B-Instruct_Q_A_MARKDOWN",
    ],
    # The four weakest: mostly failing samples, where what an evaluator spends per sample shows.
    "weak": [
        "lhb_togethercomputer_RedPajama-INCITE-7B-Instruct_Q_A_MARKDOWN",
        "lhb_TheBloke_guanaco-13B-GPTQ_ALPACA_MEDIUM",
        "lhb_TheBloke_WizardLM-30B-Uncensored-GPTQ_VICUNA_LONG",
        "lhb_GeorgiaTechResearchInstitute_starcoder-gpteacher-code-instruct_ALPACA_INPUT_MARKDOWN",
    ],
}


def codeexec_eval(samples: Path, data_dir: Path, cores: int) -> tuple[float, dict, float]:
    """The command's wall-clock seconds, its JSON report, and the seconds its samples were charged."""
    environment = os.environ | {"CODEEXEC_DATA_DIR": str(data_dir)}
    per_sample = data_dir / "per-sample.jsonl"
    command = [sys.executable, "-m", "codeexec.producer.entry.cli", "eval", "--problems", "humanevalplus"]
    command += ["--samples", str(samples)]
    command += ["--workers", str(cores), "--k", "1", "--json", "--per-sample", str(per_sample)]
    began = time.monotonic()
    out = subprocess.run(command, env=environment, capture_output=True, text=True)
    elapsed = time.monotonic() - began
    if out.returncode:
        raise SystemExit(out.stderr)
    charged = sum(json.loads(line)["charged_s"] for line in per_sample.open())
    return elapsed, json.loads(out.stdout), charged


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=list(SETS), default="mixed")
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    evalplus_ref.python()  # installed before anything is timed
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        samples = directory / "samples.jsonl"
        with samples.open("w") as out:
            for name in SETS[args.set]:
                for line in (REFERENCE / f"{name}.evalplus.jsonl").open():
                    record = json.loads(line)
                    out.write(json.dumps({"task_id": record["task_id"], "completion": record["completion"]}) + "\n")
        count = sum(1 for _ in samples.open())
        print(f"{count} samples ({args.set}: {', '.join(SETS[args.set])}), {args.cores} cores")
        for phase in ("cold", "warm"):
            theirs, _ = evalplus_ref.evaluate(samples, directory / "evalplus", directory / "cache", args.cores)
            ours, report, charged = codeexec_eval(samples, directory / "codeexec", args.cores)
            print(
                f"{phase}: EvalPlus {count / theirs:6.1f} samples/s ({theirs:.1f} s); "
                f"codeexec {count / ours:6.1f} samples/s ({ours:.1f} s); codeexec / EvalPlus {theirs / ours:.2f}x; "
                f"floor {charged / args.cores:.1f} s (pass@1 base {report['base_pass_at_k']['1']:.4f}, "
                f"plus {report['pass_at_k']['1']:.4f})"
            )
        subprocess.run(
            [sys.executable, "-m", "codeexec.producer.entry.cli", "stop"],
            env=os.environ | {"CODEEXEC_DATA_DIR": str(directory / "codeexec")},
            capture_output=True,
        )


if __name__ == "__main__":
    main()
