"""Helpers the tests share: running the command line, writing inputs, handling worker processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import httpx
import redis

from codeexec.protocol import keys
from codeexec.protocol.kinds import AssertionTests
from codeexec.protocol.models import Problem
from codeexec.protocol.run import RunMeta
from pythons import ROOT

SHARED = ROOT.parent / "shared" / "data"


def stress(suite: int, full: int) -> int:
    """How many times a stress loop repeats: `suite` in the test suite, `full` where bench/stress.py runs
    it (CODEEXEC_TEST_STRESS=full), as a change to the candidate's process must before it is resolved."""
    return full if os.environ.get("CODEEXEC_TEST_STRESS") == "full" else suite


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
        """SIGKILL the worker and its pool at once, as if its machine died; reap what comes back to us."""
        from codeexec.worker.process.proctree import descendants

        pool = self.pool_pids()
        # The pool's processes, their zygotes and candidates: re-parented to this process if running a
        # candidate here made it a subreaper. Each must be reaped, or it stays our zombie and a later
        # test takes it for a candidate's leftover.
        left = {*pool, *(pid for process in pool for pid in descendants(process))}
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        hang = time.monotonic() + HANG_S
        while left:
            for pid in list(left):
                try:
                    if os.waitpid(pid, os.WNOHANG)[0]:
                        left.discard(pid)
                except ChildProcessError:  # not ours: another process reaps it
                    left.discard(pid)
            assert time.monotonic() < hang, f"still running: {left}"
            time.sleep(0.01)


def codeexec(env: dict[str, str], *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the codeexec command line as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "codeexec.producer.entry.cli", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def store_meta(client: redis.Redis, run: str, **fields: object) -> RunMeta:
    """A queued run's RunMeta, stored where the producer stores it; its files, digests and counts made up
    (`fields` give those a test needs)."""
    made_up = {"problems": "p", "samples_path": "s", "samples_sha256": "x", "n_samples": 0, "n_tasks": 0}
    meta = RunMeta.model_validate({"run": run, "created": 0.0, "status": "queued", **made_up, **fields})
    client.set(keys.meta(run), meta.model_dump_json())
    return meta


def assertions_of(problem: Problem) -> list[str]:
    """The assertions of a problem whose tests are assertions."""
    assert isinstance(problem.tests, AssertionTests), problem.tests.kind
    return problem.tests.assertions


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


# Candidate code that sets worker_pid to the pid of the worker process running it: the first ancestor
# that is not one of the runner's own processes (in a PID namespace the candidate's parent is the
# namespace's init; /proc, mounted outside, still shows the pids the worker sees).
# The runner's processes: a fresh interpreter's arguments name its script, a zygote's fork has the
# zygote's (isolation "fork").
WORKER_PID = """import os
worker_pid = int(os.readlink('/proc/self'))
while any(m in open(f'/proc/{worker_pid}/cmdline', 'rb').read() for m in (b'.codeexec_runner.py', b'import serve')):
    worker_pid = int(open(f'/proc/{worker_pid}/stat').read().rpartition(') ')[2].split()[1])"""


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
    candidate sleeps slow_s, and appends its parent's pid (the pool process running it) to ppid_log:
    found in /proc and written outside its directory, which only workers without the sandbox allow
    (CODEEXEC_SANDBOX=off)."""
    problems = [{"task_id": f"t{i}", "assertions": [f"assert f() == {i}", "assert g() == 1"]} for i in range(tasks)]
    samples, n, c = [], {}, {}
    prelude = ""
    if ppid_log is not None:
        prelude += f"{WORKER_PID}\nwith open({str(ppid_log)!r}, 'a') as log:\n    log.write(f'{{worker_pid}}\\n')\n"
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


def refusing_interpreter(directory: Path) -> str:
    """An interpreter (a script in `directory`) whose kernel refuses every namespace (unshare() fails, as
    in a container under Docker's default seccomp profile) and which has no _ctypes (so no Landlock and
    no seccomp either): the runner's scripts, a zygote's included, run under it unchanged."""
    path = directory / "refusing-python"
    path.write_text(
        f"#!{sys.executable} -I\n"
        "import os, runpy, sys\n"
        "def unshare(flags):\n"
        "    raise PermissionError(1, 'Operation not permitted')\n"
        "os.unshare = unshare\n"
        "sys.modules['_ctypes'] = None\n"
        "if sys.argv[-2] == '-c':\n"  # a zygote's code (isolation fork)
        "    code, sys.argv = sys.argv[-1], ['-c']\n"
        "    exec(code, {'__name__': '__main__'})\n"
        "else:\n"
        "    sys.argv = sys.argv[-1:]\n"  # the runner script, after the runner's -s
        "    runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    path.chmod(0o755)
    return str(path)


# Only turns a hang into a failure: what tests wait for with it takes milliseconds.
HANG_S = 120
NUL = b"\0"


def processes_with(*markers: str, cwd: Sequence[str] = ()) -> list[str]:
    """Live processes (not this one) whose arguments hold a marker, or whose working directory is one
    of `cwd` or lies below one (removed since, or not), as "pid: arguments"."""
    encoded = [marker.encode() for marker in markers]
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            arguments = Path(entry.path, "cmdline").read_bytes()
            where = os.readlink(Path(entry.path, "cwd")).removesuffix(" (deleted)") if cwd else ""
        except OSError:  # gone meanwhile, or a zombie (no working directory)
            continue
        if any(marker in arguments for marker in encoded) or any(where == d or where.startswith(d + "/") for d in cwd):
            found.append(f"{entry.name}: {arguments.replace(NUL, b' ').decode(errors='replace')}")
    return found


def wait_for_orphans() -> None:
    """Wait until every child of this process (a subreaper: orphans come here) has ended by itself, but
    for its own idle zygotes (isolation "fork") and compilers kept running (a test of other languages')."""
    from codeexec.worker.compilers import persistent
    from codeexec.worker.process.proctree import children
    from codeexec.worker.process.zygote import idle_pids

    hang = time.monotonic() + HANG_S
    while left := set(children("self")) - idle_pids() - persistent.pids():
        assert time.monotonic() < hang, f"still running: {left}"
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        time.sleep(0.01)


# ---- a run through the command line -------------------------------------------------------------------


def private_env(data_dir: Path, keep_warm_s: float = 60, **extra: str) -> dict[str, str]:
    """A command's environment on the private Valkey of data_dir (no Redis URL), with two local workers."""
    env = {name: value for name, value in os.environ.items() if name != "CODEEXEC_REDIS_URL"}
    return env | {
        "CODEEXEC_DATA_DIR": str(data_dir),
        "CODEEXEC_KEEP_WARM_S": str(keep_warm_s),
        "CODEEXEC_WORKERS": "2",
        **extra,
    }


def report(env: dict[str, str], run: str, *extra: str) -> dict:
    out = codeexec(env, "report", run, "--json", *extra)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def submit(env: dict[str, str], suite: Suite, run: str, *extra: str) -> None:
    out = codeexec(
        env, "submit", "--problems", str(suite.problems), "--samples", str(suite.samples), "--run", run, *extra
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == run


def wait_until(condition: Callable[[], object], what: str) -> None:
    """Wait for `condition`; past HANG_S, fail saying `what`."""
    hang = time.monotonic() + HANG_S
    while not condition():
        assert time.monotonic() < hang, what
        time.sleep(0.05)


def wait_done(client: redis.Redis, run: str, at_least: int, timeout: float = 120) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done = int(client.hget(keys.stats(run), keys.DONE) or 0)
        if done >= at_least:
            return done
        assert time.monotonic() < deadline, f"only {done} of {at_least} samples done"
        time.sleep(0.05)


def assert_exact(env: dict[str, str], run: str, suite: Suite) -> dict:
    """Wait for the run through the CLI, then check every task's n and c and the run's totals."""
    out = codeexec(env, "status", run, "--wait")
    assert out.returncode == 0, out.stderr
    document = report(env, run, "--k", "1,2")
    assert {task: (t["n"], t["c"]) for task, t in document["tasks"].items()} == {
        task: (suite.n[task], suite.c[task]) for task in suite.n
    }
    assert document["n_done"] == document["n_samples"] == suite.total
    assert sum(document["outcomes"].values()) == suite.total
    assert document["complete"] is True
    return document


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """`codeexec serve` as a user starts it, on the test's Valkey."""

    def __init__(self, env: dict[str, str], log: Path, *flags: str) -> None:
        self.env, self.log, self.flags = env, log, flags
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Server:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "codeexec.producer.entry.cli", "serve", "--port", str(self.port), *self.flags],
            env=self.env,
            cwd=ROOT,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

        def answers() -> bool:
            assert self.process is not None and self.process.poll() is None, self.log.read_text()
            try:
                return httpx.get(f"{self.url}/v1/ping", timeout=5).json() == "pong"
            except httpx.TransportError:
                return False

        wait_until(answers, f"the server did not start:\n{self.log.read_text()}")
        return self

    def stop(self, how: int = signal.SIGTERM) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, how)
            self.process.wait(timeout=60)
