"""Speed on BigCodeBench: codeexec against BigCodeBench's own evaluator, side by side in one run, on the same
samples, in the same environment, with the same number of processes.

codeexec: a private Valkey and N local workers (isolation fork: the environment's warm interpreter with its
modules preloaded), warm, as they stay between runs (a run of two samples goes first, untimed), each set timed
from submission to the last result; its floor, what the samples themselves were charged (codeexec's account
of the time they could have run) over N. BigCodeBench:
bench/bcb_ref.py (its untrusted_check() per sample in a pool of N, as its evaluate() runs them), in the
bigcodebench environment with the bigcodebench 0.2.5 package from PyPI put beside it in a throw-away
directory. Sets: a Qwen2.5-Coder file as it is (its hung samples cost both 240 s), and the same without the
samples BigCodeBench judged timeouts (what a judge costs per sample), and the ground truth of the file's
tasks (each canonical solution after its prompt, as BigCodeBench's ground-truth pass runs it). Printed:
seconds, the ratio, and how many statuses the two gave alike.

    CODEEXEC_DATA_DIR=DIR python bench/bigcodebench_speed.py [--file SAMPLES] [--workers 2]
        [--sets file,no-timeouts,ground-truth]
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from codeexec.producer.inputs.files import read_jsonl
from codeexec.producer.inputs.problems import load_problems
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.local.backend import private_backend
from codeexec.producer.results.files.bigcodebench import status
from codeexec.producer.results.persample import with_results
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, new_meta
from codeexec.protocol.models import Problem
from codeexec.protocol.run import RunOptions
from codeexec.protocol.settings import get_settings
from codeexec.worker import environments

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "bigcodebench"
PROBLEMS = SHARED / "problems" / "BigCodeBench-v0.1.0_hf.jsonl.gz"
DEFAULT = SHARED / "qwen2.5-coder-base" / "7b-base" / "hard" / "completion-sanitized-calibrated.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DEFAULT)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--sets", default="file,no-timeouts,ground-truth")
    args = parser.parse_args()
    data_dir = get_settings().data_dir
    environment = environments.load(data_dir, "bigcodebench")
    if environment is None:
        sys.exit(f"no bigcodebench environment in {data_dir}: codeexec env build bigcodebench (CODEEXEC_DATA_DIR)")
    (reference,) = args.file.parent.glob("*_eval_results.json")
    theirs = json.loads(reference.read_text())["eval"]
    rows = [json.loads(line) for line in args.file.open()]
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        package = Path(tmp) / "bigcodebench-0.2.5"
        pip = [environment.python, "-m", "pip", "install", "-q", "--no-deps", "--target", str(package)]
        subprocess.run([*pip, "bigcodebench==0.2.5"], check=True)
        with gzip.open(PROBLEMS, "rt") as lines:
            given = {row["task_id"]: row for row in map(json.loads, lines)}
        truth = [
            {
                "task_id": r["task_id"],
                "solution": given[r["task_id"]]["complete_prompt"] + "\n" + given[r["task_id"]]["canonical_solution"],
            }
            for r in rows
        ]
        every = {
            "file": (args.file.parent.parent.name + "/" + args.file.parent.name, rows),
            "no-timeouts": (
                "without BigCodeBench's timeouts",
                [r for r in rows if theirs[r["task_id"]][0]["status"] != "timeout"],
            ),
            "ground-truth": ("the ground truth of its tasks", truth),
        }
        sets = dict(every[name] for name in args.sets.split(","))
        directory = Path(tmp) / "valkey"
        directory.mkdir()
        (directory / "envs").symlink_to(environments.directory(data_dir))
        client = stack.enter_context(private_backend(directory, args.workers))
        warm = Path(tmp) / "warm.jsonl"
        warm.write_text(
            "".join(json.dumps({"task_id": r["task_id"], "solution": r["solution"]}) + "\n" for r in truth[:2])
        )
        problems = load_problems(str(PROBLEMS))
        run_codeexec(client, problems, warm, "warm")
        print(
            f"{'set':<34} {'n':>5} {'codeexec s':>11} {'its floor s':>12} {'BigCodeBench s':>15} {'ratio':>7}"
            f" {'same status':>12}"
        )
        for number, (name, chosen) in enumerate(sets.items()):
            samples = Path(tmp) / f"set{number}.jsonl"
            samples.write_text(
                "".join(json.dumps({"task_id": r["task_id"], "solution": r["solution"]}) + "\n" for r in chosen)
            )
            ours, our_statuses, charged = run_codeexec(client, problems, samples, f"set{number}")
            began = time.monotonic()
            done = subprocess.run(
                [environment.python, str(Path(__file__).with_name("bcb_ref.py")), str(PROBLEMS), str(samples),
                 "--parallel", str(args.workers)],
                capture_output=True, text=True, check=True, cwd=tmp,
                env={**os.environ, **environment.variables, "PYTHONPATH": str(package)},
            )  # fmt: skip
            bcb = time.monotonic() - began
            bcb_statuses = json.loads(done.stdout.strip().splitlines()[-1])["statuses"]
            same = sum(a == b for a, b in zip(our_statuses, bcb_statuses, strict=True))
            floor = charged / args.workers
            print(
                f"{name:<34} {len(chosen):>5} {ours:>11.1f} {floor:>12.1f} {bcb:>15.1f} {bcb / ours:>6.2f}x"
                f" {same:>6}/{len(chosen)}"
            )


def run_codeexec(
    client: redis.Redis, problems: dict[str, Problem], samples: Path, run: str
) -> tuple[float, list[str], float]:
    """Seconds from submission to the last result; each status; the seconds the samples were charged."""
    began = time.monotonic()
    found = read_samples(samples, problems)
    how = RunOptions(k=[1], isolation="fork", environment="bigcodebench")
    submitted = Run.submit(client, Submission(problems, found, new_meta(run, str(PROBLEMS), found, problems, how)))
    while submitted.progress()[0] < submitted.meta.n_samples:
        time.sleep(0.05)
    took = time.monotonic() - began
    results = [s.result for s in with_results(submitted, read_jsonl(samples)) if s.result]
    return took, [status(result)[0] for result in results], sum(result.charged_s for result in results)


if __name__ == "__main__":
    main()
