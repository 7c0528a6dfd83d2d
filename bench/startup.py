"""Start-up: how long `codeexec eval` on the embedded default takes to its first result, by phase.

Each round runs, in a new interpreter and a new data directory, what `codeexec eval` does before
its first sample is recorded: import the command line, start the private Valkey, start the local
workers (the command does not wait for them: they start while it loads and submits), load
HumanEval, submit one sample, wait for its result. Then, for the whole picture, the command itself
on the same one-sample file, timed from its start to its exit (it also stops the workers and the
server, in order). Medians over the rounds.

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
PHASES = ("imports", "Valkey", "workers started", "problems loaded", "submitted", "first result")


def one_round(data_dir: Path, samples: Path) -> dict[str, float]:
    """In a new interpreter: the phases' ends, in seconds from its start."""
    began = time.monotonic()
    sys.path.insert(0, str(ROOT))
    import producer.cli  # noqa: F401  (what the command imports)
    from producer.backend import LocalWorkers
    from producer.problems import load_problems
    from producer.report import progress
    from producer.samples import read_samples
    from producer.server import EmbeddedServer
    from producer.submit import new_meta, submit
    from worker.settings import get_settings
    from worker.store import connect

    ends = [time.monotonic()]
    server = EmbeddedServer(data_dir)
    url = server.start()
    ends.append(time.monotonic())
    workers = LocalWorkers(os.cpu_count() or 1, data_dir, url).start()
    ends.append(time.monotonic())
    try:
        client = connect(url)
        problems = load_problems("humaneval")
        ends.append(time.monotonic())
        sample_set = read_samples(samples, problems)
        meta = new_meta("startup", "humaneval", sample_set, 3.0, [1], "all")
        submit(client, problems, sample_set, meta, get_settings().batch_size)
        ends.append(time.monotonic())
        while progress(client, "startup")[0] < 1:
            time.sleep(0.005)
        ends.append(time.monotonic())
    finally:
        workers.stop()
        server.stop()
    return {phase: end - began for phase, end in zip(PHASES, ends, strict=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        os.environ["CODEEXEC_DATA_DIR"] = args.child[0]  # the workers and the Celery app read it
        print(json.dumps(one_round(Path(args.child[0]), Path(args.child[1]))))
        return
    rounds: list[dict[str, float]] = []
    commands: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        samples = Path(tmp) / "one.jsonl"
        samples.write_text(json.dumps({"task_id": "HumanEval/0", "completion": "    return False\n"}) + "\n")
        env = {k: v for k, v in os.environ.items() if k not in ("CODEEXEC_REDIS_URL", "CODEEXEC_DATA_DIR")}
        for number in range(args.rounds):
            data = Path(tmp) / f"phases{number}"
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(data), str(samples)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            )
            rounds.append(json.loads(out.stdout.splitlines()[-1]))
            command = [sys.executable, "-m", "producer.cli", "eval", "--problems", "humaneval"]
            command += ["--samples", str(samples), "--data-dir", str(Path(tmp) / f"eval{number}")]
            began = time.monotonic()
            done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
            commands.append(time.monotonic() - began)
            if done.returncode != 0:
                raise SystemExit(f"codeexec eval failed:\n{done.stderr}")
    print(f"codeexec eval, one sample, embedded default; {args.rounds} rounds, medians, seconds from start")
    for phase in PHASES:
        print(f"  {phase:<18} {statistics.median(r[phase] for r in rounds):6.2f}")
    whole = statistics.median(commands)
    print(f"  the whole command  {whole:6.2f}  (to its exit: it stops the workers and the server)")


if __name__ == "__main__":
    main()
