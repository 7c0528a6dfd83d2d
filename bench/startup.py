"""Start-up: how long `codeexec eval` on the embedded default takes to its first result, by phase:
with warm workers (the resident an earlier command left: producer/local/resident.py), as the first command
on a data directory (it starts the resident), and with warm workers turned off.

Each round runs, in a new interpreter, what `codeexec eval` does before its first sample is
recorded: import the command line, get a Redis and workers (`backend()`: attach to the resident,
or start the private Valkey and the workers), load HumanEval, submit one sample, wait for its
result. Then, for the whole picture, the command itself on the same one-sample file, from its start
to its exit. "warm" rounds use one data directory whose resident an untimed command started;
"first" rounds a new data directory each (the resident they start is stopped after, untimed); "off"
rounds a new data directory and CODEEXEC_KEEP_WARM_S=0 (the command starts and stops the server and
the workers itself). The modes alternate. Medians over the rounds.

    python bench/startup.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PHASES = ("imports", "Redis and workers", "problems loaded", "submitted", "first result")
COMMAND = [sys.executable, "-m", "codeexec.producer.entry.cli", "eval", "--problems", "humaneval"]
MODES = ("warm", "first", "off")


def one_round(samples: Path) -> dict[str, float]:
    """In a new interpreter: the phases' ends, in seconds from its start."""
    began = time.monotonic()
    sys.path.insert(0, str(ROOT))
    import codeexec.producer.entry.cli  # noqa: F401  (what the command imports)
    from codeexec.producer.inputs.problems import load_problems
    from codeexec.producer.inputs.samples import read_samples
    from codeexec.producer.local.backend import backend
    from codeexec.producer.run import Run
    from codeexec.producer.submission import Submission, new_meta
    from codeexec.protocol.run import RunOptions
    from codeexec.protocol.settings import get_settings

    ends = [time.monotonic()]
    with backend(get_settings(), run_jobs=True) as client:
        ends.append(time.monotonic())
        problems = load_problems("humaneval")
        ends.append(time.monotonic())
        sample_set = read_samples(samples, problems)
        run = f"startup-{os.getpid()}"
        meta = new_meta(run, "humaneval", sample_set, problems, RunOptions(k=[1]))
        submitted = Run.submit(client, Submission(problems, sample_set, meta))
        ends.append(time.monotonic())
        while submitted.progress()[0] < 1:
            time.sleep(0.001)
        ends.append(time.monotonic())
    return {phase: end - began for phase, end in zip(PHASES, ends, strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_round(args.child)))
        return
    sys.path.insert(0, str(ROOT))
    from bench.runs import stop_warm_workers  # not at the top: a child's imports are what it times

    phases: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    commands: dict[str, list[float]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "one.jsonl"
        samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    return False\n"}) + "\n")
        base = {k: v for k, v in os.environ.items() if k != "CODEEXEC_REDIS_URL"}
        base["CODEEXEC_KEEP_WARM_S"] = "600"
        warm = base | {"CODEEXEC_DATA_DIR": f"{tmp}/warm"}
        subprocess.run([*COMMAND, "--samples", str(samples)], env=warm, check=True, capture_output=True)
        try:
            for number in range(args.rounds):
                for mode in MODES:
                    for what in ("phases", "command"):
                        env = warm
                        if mode != "warm":
                            env = base | {"CODEEXEC_DATA_DIR": f"{tmp}/{mode}-{what}-{number}"}
                            env["CODEEXEC_KEEP_WARM_S"] = "0" if mode == "off" else "600"
                        if what == "phases":
                            out = subprocess.run(
                                [sys.executable, __file__, "--child", str(samples)],
                                env=env,
                                check=True,
                                capture_output=True,
                                text=True,
                            )
                            phases[mode].append(json.loads(out.stdout.splitlines()[-1]))
                        else:
                            began = time.monotonic()
                            done = subprocess.run([*COMMAND, "--samples", str(samples)], env=env, capture_output=True)
                            commands[mode].append(time.monotonic() - began)
                            if done.returncode != 0:
                                raise SystemExit(f"codeexec eval failed:\n{done.stderr.decode()}")
                        if mode == "first":
                            stop_warm_workers(env)
        finally:
            stop_warm_workers(warm)
    print(f"codeexec eval, one sample, embedded default; {args.rounds} rounds, medians, seconds from start")
    print(f"  {'':<20}" + "".join(f"{mode:>7}" for mode in MODES))
    for phase in PHASES:
        print(f"  {phase:<20}" + "".join(f"{statistics.median(r[phase] for r in phases[mode]):7.2f}" for mode in MODES))
    whole = "".join(f"{statistics.median(commands[mode]):7.2f}" for mode in MODES)
    print(f"  {'the whole command':<20}{whole}  (to its exit, report printed)")


if __name__ == "__main__":
    main()
