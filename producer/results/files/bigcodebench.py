"""BigCodeBench's own results files for a run: the ``*_eval_results.json`` and ``*_pass_at_k.json`` that
``bigcodebench.evaluate`` writes, so that scripts made for BigCodeBench read codeexec's results, with the ground
truth of its tasks (a run of their canonical solutions, as BigCodeBench checks its own)."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from codeexec.producer.inputs.files import InputError, write_whole
from codeexec.producer.inputs.problems import BIGCODEBENCH_HARD, load_problems, write_canonical_samples
from codeexec.producer.inputs.samples import read_samples
from codeexec.producer.results.files import ResultsFile
from codeexec.producer.results.passk import pass_at_k
from codeexec.producer.results.persample import Recorded, samples_with_results
from codeexec.producer.run import Run
from codeexec.producer.submission import Submission, new_meta
from codeexec.protocol.result import Outcome, StoredResult
from codeexec.protocol.run import RunOptions
from codeexec.protocol.settings import get_settings
from codeexec.worker.judging.sample_program import program_for


def status(stored: StoredResult) -> tuple[str, dict[str, str]]:
    """BigCodeBench's status and details of a sample: "pass"; "fail" with each failing test's traceback by
    its method's name, or with "ALL" (the module did not load: a syntax error, an exception at its top
    level, no TestCases); "timeout" for a sample that never reported, which in BigCodeBench is also one that
    crashed (a signal, os._exit, the memory limit's kill), with no details."""
    if stored.exit_code is Outcome.PASS:
        return "pass", {}
    if stored.exit_code is Outcome.ASSERTION_FAIL:
        failing = (test for test in stored.tests if test.outcome in ("fail", "error"))
        return "fail", {test.name.rpartition(".")[2]: test.detail for test in failing}
    if stored.exit_code in (Outcome.ERROR, Outcome.SYNTAX_ERROR) and stored.message is not None:
        return "fail", {"ALL": stored.message}
    return "timeout", {}


def write(run: Run, out: Path, samples_path: Path | None = None, make: bool = False) -> list[str]:
    """Write BigCodeBench's results files of the run (write_files()), with its ground truth: its run made and
    waited for where `make` (eval), else as far as it is."""
    truth = truth_run(run, make)
    if truth is not None and make:
        truth.wait()
    verdicts = ground_truth(run, truth)
    count, beside = write_files(run, out, samples_path, verdicts)
    return [
        f"wrote BigCodeBench's results of {count} samples to {out} and {beside}",
        ground_truth_line(truth_name(run), verdicts),
    ]


def write_files(
    run: Recorded,
    out: Path,
    samples_path: Path | None = None,
    truth: dict[str, bool] | None = None,
) -> tuple[int, Path]:
    """Write `out` as BigCodeBench 0.2.5 writes <samples>_eval_results.json: {"date", "eval": {task_id: [one
    entry per sample, in the samples file's order]}}, each {task_id, solution, status, details}; and beside
    it its _pass_at_k.json: {"pass@k"..., model, split, subset, calibrated, gt_pass_rate, failed_tasks}, with
    `truth` (each task's canonical solution passed, from the ground-truth run) or, without it, gt_pass_rate
    null. Returns the number of samples and the second file's path; samples without a result are left out."""
    meta = run.meta
    problems, found = samples_with_results(run, samples_path)
    evaluated: dict[str, list[dict[str, Any]]] = {}
    for line, stored in found:
        verdict, details = status(stored)
        evaluated.setdefault(line.task_id, []).append(
            {
                "task_id": line.task_id,
                "solution": program_for(problems[line.task_id], line.sample) or "",
                "status": verdict,
                "details": details,
            }
        )
    write_whole(out, json.dumps({"date": time.strftime("%Y-%m-%d %H:%M"), "eval": evaluated}, indent=2))
    counts = [(len(entries), sum(entry["status"] == "pass" for entry in entries)) for entries in evaluated.values()]
    least = min((n for n, _ in counts), default=0)
    summary: dict[str, Any] = {
        f"pass@{k}": sum(pass_at_k(n, c, k) for n, c in counts) / len(counts)
        for k in meta.options.ks(least)
        if k <= least
    }
    model, split = _named(Path(meta.samples_path).name)
    summary |= {
        "model": model,
        "split": split,
        "subset": "hard" if meta.problems == BIGCODEBENCH_HARD else "full",
        "calibrated": True,
        "gt_pass_rate": None if truth is None else _pass_rate(truth),
        "failed_tasks": _failed(truth or {}),
    }
    pass_at_k_path = out.with_name(out.name.replace("_eval_results", "_pass_at_k"))
    if pass_at_k_path == out:
        pass_at_k_path = out.with_name(f"{out.stem}_pass_at_k.json")
    write_whole(pass_at_k_path, json.dumps(summary, indent=2))
    return sum(n for n, _ in counts), pass_at_k_path


def truth_name(run: Recorded) -> str:
    """The name of the run of the canonical solutions of `run`'s tasks, run as its samples were (problems,
    environment, isolation, limit): BigCodeBench's ground truth. Like BigCodeBench's cached ground truth it is
    one run, kept for every later run alike."""
    meta, options = run.meta, run.meta.options
    alike = [meta.problems_sha256, options.split, sorted(run.tasks()), options.environment, options.isolation,
             options.timeout_s]  # fmt: skip
    return "gt-" + hashlib.sha256(json.dumps(alike).encode()).hexdigest()[:16]


def truth_run(run: Run, make: bool) -> Run | None:
    """The ground-truth run of `run` (truth_name()); submitted here if there is none and `make`, else None."""
    meta, options = run.meta, run.meta.options
    name = truth_name(run)
    tasks = sorted(run.tasks())
    try:
        return Run.fetch(run.client, name)
    except InputError:  # not made
        if not make:
            return None
    problems = load_problems(meta.problems, options.split, options.challenge)
    chosen = {task_id: problems[task_id] for task_id in tasks}
    samples = read_samples(write_canonical_samples(meta.problems, get_settings().data_dir / "samples", chosen), chosen)
    how = RunOptions(k=[1], split=options.split, isolation=options.isolation, environment=options.environment,
                     timeout_s=options.timeout_s)  # fmt: skip
    return Run.submit(run.client, Submission(chosen, samples, new_meta(name, meta.problems, samples, chosen, how)))


def ground_truth(run: Recorded, truth: Run | None) -> dict[str, bool] | None:
    """Whether each of the run's tasks' canonical solution passed in its ground-truth run (truth_run()); None
    until that run is complete."""
    if truth is None:
        return None
    done, total = truth.progress()
    if done < total:
        return None
    tasks = sorted(run.tasks())
    found = truth.task_results(tasks)
    return {task_id: status(found[task_id][0])[0] == "pass" for task_id in tasks}


def ground_truth_line(run: str, truth: dict[str, bool] | None) -> str:
    """What to say of the ground truth, as BigCodeBench says it."""
    if truth is None:
        return f"ground truth: not yet complete (run {run}; codeexec status {run} --wait)"
    failed = _failed(truth)
    return f"ground truth pass rate: {_pass_rate(truth):.3f} (run {run})" + (
        f"; failed tasks: {', '.join(failed)}" if failed else ""
    )


def _failed(truth: dict[str, bool]) -> list[str]:
    """The tasks whose canonical solution failed, in task order (BigCodeBench's failed_tasks)."""
    return sorted((task for task, passed in truth.items() if not passed), key=_task_number)


def _pass_rate(truth: dict[str, bool]) -> float:
    return sum(truth.values()) / len(truth) if truth else 0.0


def _named(name: str) -> tuple[str, str]:
    """The model and the split in a samples file's name, as BigCodeBench names its files
    (<model>--bigcodebench-[hard-]<split>--<backend>-...); the split is "complete" where the name has none."""
    model, _, rest = name.partition("--bigcodebench-")
    split = rest.removeprefix("hard-").partition("--")[0]
    return model.removesuffix(".jsonl"), split if split in ("complete", "instruct") else "complete"


def _task_number(task_id: str) -> tuple[int, str]:
    number = task_id.rpartition("/")[2]
    return (int(number), task_id) if number.isdigit() else (-1, task_id)


FILE = ResultsFile(
    "--bigcodebench-results",
    "OUT.json",
    "also write BigCodeBench's _eval_results.json (OUT.json) and _pass_at_k.json (beside it) for the run",
    frozenset({"suite"}),
    write,
)
