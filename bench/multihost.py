"""Throughput with one worker host against two, side by side, over a real network path.

Test hosts are network namespaces on this machine (tests/netns.py): Redis on one, the producer on
another, and the workers on one host (two pool processes) or on two hosts (one pool process each),
the same total, in alternating rounds. Each round is one `codeexec eval --redis-url ... --workers 0`
on the producer host, timed whole (its start-up is the same in both arms).

On a 2-core machine the two hosts share the same two cores, so this measures what spreading the
workers over a network costs (more connections, more TCP round trips to Redis), not a speed-up; on
real machines each host brings its own cores. Needs root and iproute2.

    python bench/multihost.py [--samples 2000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # test hosts, shared with the test

from codeexec.producer.local.valkey import server_binary
from netns import Network, unavailable

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "bench-hosts-only"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if reason := unavailable():
        sys.exit(f"cannot build test hosts here: {reason}")

    with tempfile.TemporaryDirectory() as tmp, Network(["redis", "w1", "w2", "producer"]) as net:
        directory = Path(tmp)
        (directory / "redis").mkdir()
        net.popen(
            "redis",
            [server_binary(), "--bind", net.address("redis"), "--port", "6379", "--protected-mode", "no",
             "--requirepass", PASSWORD, "--save", "", "--appendonly", "yes", "--dir", str(directory / "redis")],
            directory / "redis.log",
        )  # fmt: skip
        url = f"redis://:{PASSWORD}@{net.address('redis')}:6379/0"
        env = {**os.environ, "CODEEXEC_REDIS_URL": url}
        problems = directory / "problems.jsonl"
        problems.write_text(json.dumps({"task_id": "t", "assertions": ["assert f() == 1"]}) + "\n")
        samples = directory / "samples.jsonl"
        samples.write_text(json.dumps({"task_id": "t", "completion": "def f():\n    return 1\n"}) + "\n")
        samples.write_text(samples.read_text() * args.samples)

        def sweep(name: str) -> float:
            command = [sys.executable, "-m", "codeexec.producer.entry.cli", "eval", "--problems", str(problems),
                       "--samples", str(samples), "--run", name, "--workers", "0", "--json"]  # fmt: skip
            began = time.perf_counter()
            out = net.run("producer", command, env=env, timeout=3600)
            assert out.returncode == 0, out.stderr
            return args.samples / (time.perf_counter() - began)

        def with_workers(hosts: dict[str, int], name: str) -> float:
            command = [sys.executable, "-m", "codeexec.producer.entry.cli", "worker"]
            workers = [
                net.popen(host, [*command, f"--concurrency={count}"], directory / f"{host}.log", env=env)
                for host, count in hosts.items()
            ]
            try:
                time.sleep(3)  # the workers connect; not part of the sweep
                return sweep(name)
            finally:
                for worker in workers:
                    os.killpg(worker.pid, 15)
                    worker.wait()

        rates: dict[str, list[float]] = {"one host": [], "two hosts": []}
        for round_ in range(args.rounds):
            rates["one host"].append(with_workers({"w1": 2}, f"one{round_}"))
            rates["two hosts"].append(with_workers({"w1": 1, "w2": 1}, f"two{round_}"))

    one, two = statistics.median(rates["one host"]), statistics.median(rates["two hosts"])
    print(f"samples per round: {args.samples}; rounds: {args.rounds} (alternating); cores: {os.cpu_count()}")
    for name, values in rates.items():
        print(f"{name:<10} {statistics.median(values):8.1f} samples/s  {[round(v, 1) for v in values]}")
    print(f"two hosts / one host: {two / one:.2f} (same cores: the cost of the network path, not a speed-up)")


if __name__ == "__main__":
    main()
