"""Runner overhead: a trivial candidate through score_code_exec against the bare cost of its process.

- isolation "fresh" against a bare `python -I -c pass` (goal: at most 1.25x);
- isolation "fork" against a bare fork of a process of the zygote's size: a helper interpreter started
  like a zygote (worker/child.py loaded) that, for each byte it reads from a pipe, forks a child that
  _exits at once, reaps it and answers (goal: at most 2x).

Each runner arm is timed with its default settings (a PID namespace and the sandbox where the kernel
allows them), without the namespace, and without the sandbox (worker/sandbox.py), to show what each
costs. All arms alternate in one run, so machine noise hits
them alike; the figures are medians.

    python bench/runner_overhead.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from worker.runner import score_code_exec
from worker.settings import get_settings

# A zygote's size without its work: worker/child.py loaded, then fork, _exit, reap, answer.
FORKER = f"""import os, sys
sys.path[0] = {str(Path(__file__).resolve().parents[1] / "worker")!r}
import child
while os.read(0, 1):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    os.write(1, b"x")
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()

    interpreter = get_settings().interpreter
    generation = "```python\ndef add(a, b):\n    return a + b\n```"
    assertions = ["assert add(1, 2) == 3"]
    forker = subprocess.Popen([interpreter, "-s", "-c", FORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    to_forker, from_forker = forker.stdin.fileno(), forker.stdout.fileno()  # type: ignore[union-attr]

    def bare_fork() -> None:
        os.write(to_forker, b"g")
        assert os.read(from_forker, 1) == b"x"

    def bare_python() -> None:
        subprocess.run([interpreter, "-I", "-c", "pass"], check=True)

    def runner(isolation: str, pid_namespace: str = "auto", sandbox: str = "auto") -> Callable[[], None]:
        def call() -> None:
            result = score_code_exec(
                generation, assertions, isolation=isolation, pid_namespace=pid_namespace, sandbox=sandbox
            )
            assert result.exit_code == "pass", result

        return call

    arms = {
        "bare fork": bare_fork,
        "fork": runner("fork"),
        "fork, no namespace": runner("fork", "off"),
        "fork, no sandbox": runner("fork", sandbox="off"),
        "bare python": bare_python,
        "fresh": runner("fresh"),
        "fresh, no namespace": runner("fresh", "off"),
        "fresh, no sandbox": runner("fresh", sandbox="off"),
    }
    timings: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(10):  # warm the page cache, the host's imports and the zygote
        for call in arms.values():
            call()
    for _ in range(args.rounds):
        for name, call in arms.items():
            began = time.perf_counter()
            call()
            timings[name].append(time.perf_counter() - began)
    forker.stdin.close()  # type: ignore[union-attr]
    forker.wait()

    ms = {name: statistics.median(values) * 1000 for name, values in timings.items()}
    print(f"interpreter: {interpreter}; rounds: {args.rounds} (interleaved); medians")
    for name in arms:
        print(f"  {name:<22} {ms[name]:7.2f} ms")
    print(f"fork:  {ms['fork'] / ms['bare fork']:.2f}x a bare fork of its size (goal <= 2)")
    print(f"fresh: {ms['fresh'] / ms['bare python']:.2f}x a bare python -I -c pass (goal <= 1.25)")
    print(f"fork against fresh: {ms['fresh'] / ms['fork']:.2f}x faster per candidate")
    for what, arm in (("the PID namespace", "no namespace"), ("the sandbox", "no sandbox")):
        for mode in ("fork", "fresh"):
            cost = ms[mode] - ms[f"{mode}, {arm}"]
            print(f"{what}, {mode}: {ms[mode] / ms[f'{mode}, {arm}']:.2f}x ({cost:+.2f} ms)")


if __name__ == "__main__":
    main()
