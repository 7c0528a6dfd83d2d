"""Helpers the tests share: running the command line, writing inputs, handling worker processes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"


@dataclass
class Worker:
    name: str
    process: subprocess.Popen[bytes]
    log: Path

    def pool_pids(self) -> list[int]:
        """The worker's pool processes (children of its main process)."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text().split()
        return [int(pid) for pid in children]

    def kill_whole(self) -> None:
        """SIGKILL the worker and its pool at once, as if its machine died."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()


def codeexec(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the codeexec command line as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "producer.cli", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@dataclass
class Suite:
    """A generated problem set and samples whose every outcome is known in advance."""

    problems: Path
    samples: Path
    n: dict[str, int]
    c: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.n.values())


def make_suite(
    directory: Path,
    tasks: int = 8,
    per_task: int = 5,
    slow_s: float = 0.0,
    ppid_log: Path | None = None,
    extra: str = "",
) -> Suite:
    """Task t<i> asks f() == i; sample j of it passes unless (i + j) % 3 == 0. Optionally each
    candidate sleeps slow_s, and appends its parent's pid (the pool process running it) to ppid_log."""
    problems = [{"task_id": f"t{i}", "assertions": [f"assert f() == {i}", "assert g() == 1"]} for i in range(tasks)]
    samples, n, c = [], {}, {}
    prelude = ""
    if ppid_log is not None:
        prelude += f"import os\nwith open({str(ppid_log)!r}, 'a') as log:\n    log.write(f'{{os.getppid()}}\\n')\n"
    if slow_s:
        prelude += f"import time\ntime.sleep({slow_s})\n"
    for i in range(tasks):
        task_id = f"t{i}"
        n[task_id], c[task_id] = per_task, 0
        for j in range(per_task):
            passes = (i + j) % 3 != 0
            c[task_id] += passes
            body = f"def f():\n    return {i if passes else -1}\ndef g():\n    return 1\n"
            samples.append({"task_id": task_id, "completion": prelude + extra + body})
    return Suite(
        write_jsonl(directory / "problems.jsonl", problems), write_jsonl(directory / "samples.jsonl", samples), n, c
    )
