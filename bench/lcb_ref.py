"""LiveCodeBench's own grader, for the benchmarks that compare codeexec with it (bench/competitive.py).

LiveCodeBench is not on PyPI: give a checkout of LiveCodeBench/LiveCodeBench (--lcb-source; this
repository never holds its code). A throw-away virtualenv with what its grader imports (PINS) is
made on first use. Samples go through its own
lcb_runner.evaluation.compute_code_generation_metrics.evaluate_generations: a process pool of
`processes`, each sample check_correctness()'d as LiveCodeBench's runner does, with its driver's
int_max_str_digits, and stdin at /dev/null (the grader's own stdin decides what open(0) reads there).

Run by itself (by the virtualenv's Python) this file is the driver:

    python bench/lcb_ref.py SOURCE IN.jsonl OUT.jsonl TIMEOUT PROCESSES

IN: {"id", "input_output": {inputs, outputs, fn_name}, "code"} a line; OUT: {"id", "graded", "metadata"}.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VENV = Path(tempfile.gettempdir()) / "codeexec-bench-lcb"
# numpy and tqdm: what the grader imports (its uv.lock's versions); sortedcontainers: what LeetCode's
# judge offers, and LeetCodeDataset's reference solutions import (codeexec's candidates have it too).
PINS = ["numpy==2.2.5", "tqdm==4.67.1", "sortedcontainers==2.4.0"]


def python() -> Path:
    interpreter = VENV / "bin" / "python"
    if not (VENV / ".installed").exists():
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(VENV)], check=True)
        print(f"installing {' '.join(PINS)} into {VENV} ...", file=sys.stderr)
        subprocess.run([str(interpreter), "-m", "pip", "install", "-q", *PINS], check=True)
        (VENV / ".installed").touch()
    return interpreter


def grade(source: Path, rows: list[dict], timeout: int = 6, processes: int = 2) -> tuple[float, dict[str, dict]]:
    """LiveCodeBench's verdicts of `rows`, by id ({"graded": per-test codes, "metadata"}), and the
    grader's wall-clock seconds (the samples' grading alone, not the interpreter's start)."""
    if not (source / "lcb_runner" / "evaluation" / "testing_util.py").exists():
        raise SystemExit(f"--lcb-source {source}: not a checkout of LiveCodeBench/LiveCodeBench")
    with tempfile.TemporaryDirectory() as scratch:
        given, taken = Path(scratch) / "in.jsonl", Path(scratch) / "out.jsonl"
        given.write_text("".join(json.dumps(row) + "\n" for row in rows))
        command = [str(python()), __file__, str(source), str(given), str(taken), str(timeout), str(processes)]
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        took = float(done.stderr.strip().splitlines()[-1])
        return took, {row["id"]: row for row in map(json.loads, taken.open())}


def _drive(source: str, given: str, taken: str, timeout: int, processes: int) -> None:
    sys.set_int_max_str_digits(50000)  # as compute_code_generation_metrics.py sets at import
    sys.path.insert(0, source)
    from lcb_runner.evaluation.compute_code_generation_metrics import evaluate_generations

    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    with open(given) as lines:
        rows = [json.loads(line) for line in lines]
    samples = [{"input_output": json.dumps(row["input_output"])} for row in rows]
    generations = [[row["code"]] for row in rows]
    began = time.monotonic()
    results, metadata = evaluate_generations(samples, generations, num_process_evaluate=processes, timeout=timeout)
    took = time.monotonic() - began
    with open(taken, "w") as out:
        for index, row in enumerate(rows):
            graded = [code if isinstance(code, bool) else int(code) for code in results[index][0]]
            out.write(json.dumps({"id": row["id"], "graded": graded, "metadata": metadata[index][0]}, default=str))
            out.write("\n")
    print(took, file=sys.stderr)


if __name__ == "__main__":
    _drive(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
