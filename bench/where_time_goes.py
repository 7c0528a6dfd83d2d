"""Where the time goes, per sample, by process: CPU time of every process of an evaluation through
the whole distributed path, in each isolation mode, read from /proc before and after a run.

A candidate's processes are short-lived: their CPU time is counted in the process that reaps them
(the zygote in isolation fork, the worker pool process in fresh). Machine-wide figures come from
/proc/stat; "kernel threads and the rest" is the machine's busy time that no process of the run
accounts for (kernel workers, interrupts, other tenants).

    python bench/where_time_goes.py [--copies 10]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.runs import evaluate
from bench.throughput import CORES, sample_sets
from codeexec.producer.local.backend import private_backend
from codeexec.worker.process.proctree import descendants

TICK_MS = 1000 / os.sysconf("SC_CLK_TCK")
ROLES = (
    "producer (this process)",
    "Valkey",
    "Celery main process",
    "worker pool processes",
    "zygotes",
    "candidates (their processes)",
    "kernel threads and the rest",
    "idle",
)


def cpu_ticks(pid: int) -> tuple[str, int, int] | None:
    """(role, own CPU, CPU of reaped children) of one process, in clock ticks."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(") ")[2].split()
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            command = cmdline.read()
    except OSError:
        return None
    if pid == os.getpid():
        role = ROLES[0]
    elif b"valkey-server" in command:
        role = ROLES[1]
    elif b"serve(" in command:
        role = ROLES[4]
    elif b"worker" in command and int(fields[1]) == os.getpid():
        role = ROLES[2]
    else:
        role = ROLES[3]
    return role, int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


Snapshot = tuple[dict[int, tuple[str, int, int]], list[int]]  # each process's figures; the machine's /proc/stat


def snapshot() -> Snapshot:
    processes = {pid: found for pid in [os.getpid(), *descendants(os.getpid())] if (found := cpu_ticks(pid))}
    with open("/proc/stat") as stat:
        machine = [int(value) for value in stat.readline().split()[1:]]
    return processes, machine


def per_sample(before: Snapshot, after: Snapshot, samples: int) -> dict[str, float]:
    """Milliseconds of CPU per sample, by role."""
    spent = dict.fromkeys(ROLES, 0.0)
    for pid, (role, own, reaped) in after[0].items():
        if pid not in before[0]:
            continue
        _, own_before, reaped_before = before[0][pid]
        spent[role] += (own - own_before) * TICK_MS / samples
        # What a pool process or zygote reaped: candidates' processes (and, for a pool process in
        # fork, nothing else: its zygote is alive).
        spent[ROLES[5]] += (reaped - reaped_before) * TICK_MS / samples
    machine = [(b - a) * TICK_MS / samples for a, b in zip(before[1], after[1], strict=True)]
    idle = machine[3] + machine[4]  # idle, iowait
    spent[ROLES[7]] = idle
    spent[ROLES[6]] = sum(machine[:8]) - idle - sum(spent[role] for role in ROLES[:6])
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--copies", type=int, default=10)
    args = parser.parse_args()
    table: dict[str, dict[str, float]] = {}
    rates: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        samples = next(iter(sample_sets(directory, args.copies).values()))  # HumanEval canonical
        with private_backend(directory / "valkey", CORES) as client:
            for mode in ("fork", "fresh"):
                evaluate(client, "humaneval", samples, f"warmup-{mode}", isolation=mode)
                before = snapshot()
                done = evaluate(client, "humaneval", samples, f"run-{mode}", isolation=mode)
                after = snapshot()
                table[mode] = per_sample(before, after, len(done.verdicts))
                rates[mode] = len(done.verdicts) / done.seconds
    print(f"HumanEval canonical x{args.copies}, {CORES} cores: CPU ms per sample, by process")
    print(f"{'':32} {'fork':>8} {'fresh':>8}")
    for role in ROLES:
        print(f"{role:32} {table['fork'][role]:8.2f} {table['fresh'][role]:8.2f}")
    print(f"{'samples/s':32} {rates['fork']:8.1f} {rates['fresh']:8.1f}")


if __name__ == "__main__":
    main()
