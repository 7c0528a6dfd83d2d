"""Runner overhead: a trivial candidate through score_code_exec against the bare cost of its process.

- isolation "fresh" against a bare `python -I -c pass` (goal: at most 1.25x);
- isolation "fork" against a bare fork of a process of the zygote's size: a helper interpreter started
  like a zygote (worker/candidate/warm.py loaded) that, for each byte it reads from a pipe, forks a child that
  _exits at once, reaps it and answers (goal: at most 2x).

Each runner arm is timed with its default settings (a PID namespace and the sandbox where the kernel
allows them), without the namespace, and without the sandbox (worker/candidate/sandbox.py), to show what each
costs. All arms alternate in one run, so machine noise hits
them alike; the figures are medians.

    python bench/runner_overhead.py [--rounds 200] [--before CHECKOUT | --before-python PYTHON]

--before: a checkout of an earlier commit whose modules are top-level `worker` and `producer` (before
the package was `codeexec`); --before-python: an interpreter whose `codeexec` is an earlier commit's (a
virtualenv it is installed in). Its `fresh` and `fork` arms are timed beside this tree's, each in a
helper process of its own that times one candidate per request, so both sides pay the same.
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

from codeexec.protocol.settings import get_settings
from codeexec.worker.judging.sample_program import score_code_exec

# A zygote's size without its work: worker/candidate/warm.py loaded, then fork, _exit, reap, answer.
FORKER = f"""import os, sys
sys.path[0] = {str(Path(__file__).resolve().parents[1] / "worker" / "candidate")!r}
import warm
while os.read(0, 1):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    os.write(1, b"x")
"""


# Times one candidate per line it reads ("fresh" or "fork"), through a tree's score_code_exec; answers ms.
HELPER = """import sys, time
{import_line}
generation = "```python\\ndef add(a, b):\\n    return a + b\\n```"
for line in sys.stdin:
    began = time.perf_counter()
    result = score_code_exec(generation, ["assert add(1, 2) == 3"], isolation=line.strip())
    took = (time.perf_counter() - began) * 1000
    assert result.exit_code == "pass", result
    print(took, flush=True)
"""


class Helper:
    """A process that runs candidates through one tree's runner, timing each itself."""

    def __init__(self, interpreter: str, import_line: str) -> None:
        code = HELPER.format(import_line=import_line)
        self.process = subprocess.Popen(
            [interpreter, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd="/"
        )

    def time(self, isolation: str) -> float:
        self.process.stdin.write(isolation + "\n")  # type: ignore[union-attr]
        self.process.stdin.flush()  # type: ignore[union-attr]
        return float(self.process.stdout.readline()) / 1000  # type: ignore[union-attr]

    def close(self) -> None:
        self.process.stdin.close()  # type: ignore[union-attr]
        self.process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--before", type=Path, help="an earlier checkout, timed beside this tree (see above)")
    parser.add_argument("--before-python", help="an interpreter of an earlier codeexec, timed beside this tree")
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

    def runner(isolation: str, pid_namespace: str = "auto", sandbox: str = "auto") -> Callable[[], object]:
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
    helpers: list[Helper] = []
    if args.before or args.before_python:
        this = Helper(sys.executable, "from codeexec import score_code_exec")
        if args.before_python:
            before = Helper(args.before_python, "from codeexec import score_code_exec")
        else:
            old_import = (
                f"sys.path.insert(0, {str(args.before.resolve())!r})\nfrom worker.runner import score_code_exec"
            )
            before = Helper(sys.executable, old_import)
        helpers = [this, before]
        for mode in ("fresh", "fork"):
            arms[f"{mode}, this tree (helper)"] = lambda h=this, m=mode: h.time(m)
            arms[f"{mode}, before (helper)"] = lambda h=before, m=mode: h.time(m)
    timings: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(10):  # warm the page cache, the host's imports and the zygote
        for call in arms.values():
            call()
    for round_ in range(args.rounds):
        # Every other round in the reverse order: no arm always follows the same one.
        for name, call in list(arms.items())[:: 1 if round_ % 2 else -1]:
            began = time.perf_counter()
            timed = call()  # a helper's arm times the candidate itself
            timings[name].append(time.perf_counter() - began if timed is None else timed)
    forker.stdin.close()  # type: ignore[union-attr]
    forker.wait()
    for helper in helpers:
        helper.close()

    ms = {name: statistics.median(values) * 1000 for name, values in timings.items()}
    print(f"interpreter: {interpreter}; rounds: {args.rounds} (interleaved); medians")
    for name in arms:
        print(f"  {name:<22} {ms[name]:7.2f} ms")
    print(f"fork:  {ms['fork'] / ms['bare fork']:.2f}x a bare fork of its size (goal <= 2)")
    print(f"fresh: {ms['fresh'] / ms['bare python']:.2f}x a bare python -I -c pass (goal <= 1.25)")
    print(f"fork against fresh: {ms['fresh'] / ms['fork']:.2f}x faster per candidate")
    if helpers:
        for mode in ("fresh", "fork"):
            now, then = ms[f"{mode}, this tree (helper)"], ms[f"{mode}, before (helper)"]
            against = args.before or args.before_python
            print(f"{mode}, this tree against {against}: {now - then:+.2f} ms ({now:.2f} vs {then:.2f} ms)")
    for what, arm in (("the PID namespace", "no namespace"), ("the sandbox", "no sandbox")):
        for mode in ("fork", "fresh"):
            cost = ms[mode] - ms[f"{mode}, {arm}"]
            print(f"{what}, {mode}: {ms[mode] / ms[f'{mode}, {arm}']:.2f}x ({cost:+.2f} ms)")


if __name__ == "__main__":
    main()
