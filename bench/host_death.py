"""A worker host that dies mid-sweep: what it costs, with default settings.

A private Valkey and two workers (`codeexec worker --concurrency 1`, each in a process group of its
own, as two hosts would be), and a sweep of samples whose candidates take 0.2 s each. Once a third
of them are done, one worker is SIGKILLed whole, as a host dies. Printed: the time from the kill to
the run's completion and, beside it in the same run, the time the survivor alone needs for as many
samples as were left at the kill (a second sweep of that size). The difference is what the death
cost: goal at most 30 s (it was the visibility timeout, ~1,000 s, before leases).

    python bench/host_death.py [--samples 300]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import redis

from codeexec.producer.inputs.problems import load_problems
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, new_meta
from codeexec.protocol import keys
from codeexec.protocol.run import RunOptions
from codeexec.protocol.settings import get_settings
from codeexec.worker.queue.leases import Lease

ROOT = Path(__file__).resolve().parents[1]


def start_worker(name: str, url: str, log: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "codeexec.producer.entry.cli", "worker", "--concurrency=1", f"--hostname={name}@%h"],
        env={**os.environ, "CODEEXEC_REDIS_URL": url},
        cwd=ROOT,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def sweep(client: redis.Redis, directory: Path, run: str, samples: int) -> int:
    """Submit `samples` samples of 0.2 s each; returns how many."""
    problems_path = directory / "problems.jsonl"
    problems_path.write_text(json.dumps({"task_id": "t", "assertions": ["assert f() == 1"]}) + "\n")
    samples_path = directory / f"{run}.jsonl"
    completion = "import time\ntime.sleep(0.2)\ndef f():\n    return 1\n"
    samples_path.write_text((json.dumps({"task_id": "t", "completion": completion}) + "\n") * samples)
    problems = load_problems(str(problems_path))
    sample_set = read_samples(samples_path, problems)
    meta = new_meta(run, str(problems_path), sample_set, problems, RunOptions(k=[1]))
    Run.submit(client, Submission(problems, sample_set, meta))
    return samples


def doomed_leases(client: redis.Redis, main_pid: int) -> list[str]:
    """The leases held by the pool processes of the worker whose main process is main_pid."""
    pool = {int(pid) for pid in Path(f"/proc/{main_pid}/task/{main_pid}/children").read_text().split()}
    held = []
    for lease_id in client.zrange(keys.LEASES, 0, -1):
        raw = client.get(keys.lease(lease_id))
        if raw and int(Lease.model_validate_json(raw).worker.split(":")[1]) in pool:
            held.append(lease_id)
    return held


def wait(client: redis.Redis, run: str, at_least: int) -> int:
    while (done := Run.fetch(client, run).progress()[0]) < at_least:
        time.sleep(0.05)
    return done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, EmbeddedServer(Path(tmp) / "valkey") as server:
        directory = Path(tmp)
        os.environ["CODEEXEC_REDIS_URL"] = server.url  # for the Celery producer that enqueues
        get_settings.cache_clear()
        client = redis.Redis.from_url(server.url, decode_responses=True)
        doomed = start_worker("doomed", server.url, directory / "doomed.log")
        survivor = start_worker("survivor", server.url, directory / "survivor.log")
        try:
            total = sweep(client, directory, "death", args.samples)
            done = wait(client, "death", total // 3)
            while not (held := doomed_leases(client, doomed.pid)):  # kill it with a job in hand
                time.sleep(0.01)
            os.killpg(doomed.pid, signal.SIGKILL)
            killed = time.monotonic()
            doomed.wait()
            remaining = total - Run.fetch(client, "death").progress()[0]
            while set(held) & set(client.zrange(keys.LEASES, 0, -1)):
                time.sleep(0.05)
            taken_over = time.monotonic() - killed
            wait(client, "death", total)
            after_kill = time.monotonic() - killed
            began = time.monotonic()
            wait(client, "alone", sweep(client, directory, "alone", remaining))
            alone = time.monotonic() - began
        finally:
            for worker in (doomed, survivor):
                if worker.poll() is None:
                    os.killpg(worker.pid, signal.SIGKILL)
                    worker.wait()
    print(f"samples: {total} of 0.2 s each; two workers; one killed whole after {done} were done")
    print(f"its job was taken over and sent again {taken_over:.1f} s after the kill")
    print(f"from the kill to the run's completion:           {after_kill:6.1f} s")
    print(f"the survivor alone, for the {remaining} samples left:   {alone:6.1f} s")
    print(f"what the death cost: {after_kill - alone:+.1f} s (goal <= 30 s)")


if __name__ == "__main__":
    main()
