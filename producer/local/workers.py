"""The local workers a command starts: one `celery worker` process with a pool process per core."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from codeexec.producer.local.lifetime import dies_with_parent
from codeexec.protocol import keys

WORKER_FLAGS = ["--loglevel=WARNING", "--without-mingle", "--without-gossip"]


def queues(environments: list[str]) -> str:
    """The Celery queues a worker that serves `environments` consumes (-Q): its own Python's, and theirs."""
    return ",".join(keys.queue(name) for name in [None, *environments])


class LocalWorkers:
    """A `celery worker` on this machine with `count` pool processes, logging to the data directory."""

    def __init__(self, count: int, data_dir: Path, redis_url: str) -> None:
        self.count = count
        self.data_dir = data_dir
        self.env = dict(os.environ, CODEEXEC_REDIS_URL=redis_url)
        self.log = data_dir / "logs" / f"worker-{os.getpid()}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> LocalWorkers:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "codeexec.producer.entry.cli",
                    "worker",
                    f"--concurrency={self.count}",
                    f"--hostname=local-{os.getpid()}@%h",
                ],
                env=self.env,
                cwd=self.data_dir,  # not the user's directory: nothing of theirs on sys.path, nor held open
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,  # Ctrl-C reaches the producer; it stops the workers in order
                # If the producer dies without stopping them, they die as if their host had: their
                # unacknowledged jobs go to the next worker, and Celery's pool processes and the
                # candidates follow their parents down (parent-death signal, lifeline).
                preexec_fn=dies_with_parent(signal.SIGKILL),
            )
        return self

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """Warm shutdown (finish the running job), then cold (unacknowledged jobs go back to the queue)."""
        if self.process is None:
            return
        for sig, grace in ((signal.SIGTERM, 10), (signal.SIGQUIT, 10), (signal.SIGKILL, 30)):
            if self.process.poll() is not None:
                break
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                continue
        self.process.wait()
        self.process = None
