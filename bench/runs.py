"""What the benchmarks share: one samples file evaluated through the whole distributed path."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import redis

import codeexec
from codeexec.producer.inputs.problems import load_problems
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.results.persample import with_results
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, new_meta
from codeexec.protocol.result import StoredResult
from codeexec.protocol.run import RunOptions
from codeexec.protocol.settings import get_settings


class Evaluated:
    """A samples file's verdicts line by line ("passed" or "failed"; for HumanEval+, EvalPlus's two
    statuses, "pass/fail"), the results where codeexec gave them, and the wall time the evaluation took."""

    def __init__(self, verdicts: list[str], seconds: float, results: list[StoredResult | None] | None = None) -> None:
        self.verdicts, self.seconds = verdicts, seconds
        self.results = results if results is not None else [None] * len(verdicts)


def evaluate(
    client: redis.Redis,
    problems_spec: str,
    samples: Path,
    run: str,
    split: str = "all",
    time_limit_s: float | None = None,
    isolation: str | None = None,
) -> Evaluated:
    """Submit `samples` as run `run` and wait for every result; timed from the first job stored."""
    problems = load_problems(problems_spec, split)
    sample_set = read_samples(samples, problems)
    how = RunOptions(k=[1], split=split, timeout_s=time_limit_s, isolation=isolation or get_settings().isolation)
    meta = new_meta(run, problems_spec, sample_set, problems, how)
    began = time.monotonic()
    submitted = Run.submit(client, Submission(problems, sample_set, meta))
    while submitted.progress()[0] < meta.n_samples:
        time.sleep(0.05)
    seconds = time.monotonic() - began
    lines = [json.loads(line) for line in samples.read_text().splitlines()]
    results = [row.result for row in with_results(submitted, enumerate(lines, start=1))]
    return Evaluated([verdict(result) for result in results], seconds, results)


def verdict(result: StoredResult | None) -> str:
    if result is not None and result.base_status is not None:
        return f"{result.base_status}/{result.plus_status}"
    return "passed" if result is not None and result.exit_code == "pass" else "failed"


def stop_warm_workers(env: dict[str, str]) -> None:
    """`codeexec stop` in the environment's data directory: the resident a benchmark's commands left."""
    subprocess.run(
        [sys.executable, "-m", "codeexec.producer.entry.cli", "stop"], env=env, check=True, capture_output=True
    )


def warm_run(problems: str, samples: list[dict], directory: Path, name: str, workers: int) -> tuple[float, list]:
    """Seconds from submitting `samples` (written as `name`.jsonl in `directory`) to the last result, and each
    sample's result (codeexec.SampleResult), on a private Valkey in `directory` with `workers` local workers.
    The workers are warm, as they stay between runs: a run of the first samples goes first, untimed (a
    worker's first sample of a kind starts what it keeps warm: an interpreter holding a prelude, a toolchain's
    zygote)."""

    path = directory / f"{name}.jsonl"
    path.write_text("".join(json.dumps(sample) + "\n" for sample in samples))
    warm = directory / f"{name}-warm.jsonl"
    warm.write_text("".join(json.dumps(sample) + "\n" for sample in samples[: 2 * workers]))
    # One private Valkey for every run: a process sends its jobs to one Redis (codeexec.connect).
    with codeexec.connect(data_dir=directory / "data", workers=workers) as ce:
        ce.submit(problems, warm, k=[1]).wait()
        began = time.monotonic()
        run = ce.submit(problems, path, k=[1])
        run.wait()
        took = time.monotonic() - began
        return took, list(run.results())
