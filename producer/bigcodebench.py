"""BigCodeBench's own results files for a run: the ``*_eval_results.json`` and ``*_pass_at_k.json`` that
``bigcodebench.evaluate`` writes, so that scripts made for BigCodeBench read codeexec's results."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import redis

from codeexec.producer.inputs import InputError
from codeexec.producer.passk import pass_at_k
from codeexec.producer.persample import recorded
from codeexec.producer.problems import BIGCODEBENCH_HARD
from codeexec.worker.judging.program import program_for
from codeexec.worker.models import RunMeta, StoredResult
from codeexec.worker.result import Outcome


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


def write_bcb_results(
    client: redis.Redis,
    meta: RunMeta,
    out: Path,
    samples_path: Path | None = None,
    truth: dict[str, bool] | None = None,
) -> tuple[int, Path]:
    """Write `out` as BigCodeBench 0.2.5 writes <samples>_eval_results.json: {"date", "eval": {task_id: [one
    entry per sample, in the samples file's order]}}, each {task_id, solution, status, details}; and beside
    it its _pass_at_k.json: {"pass@k"..., model, split, subset, calibrated, gt_pass_rate, failed_tasks}, with
    `truth` (each task's canonical solution passed, from the ground-truth run) or, without it, gt_pass_rate
    null. Returns the number of samples and the second file's path; samples without a result are left out."""
    problems, found = recorded(client, meta, samples_path)
    if not any(problem.suite is not None for problem in problems.values()):
        raise InputError(f"run {meta.run!r} has no test-file problems: --bigcodebench-results is for BigCodeBench")
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
    _write(out, {"date": time.strftime("%Y-%m-%d %H:%M"), "eval": evaluated})
    counts = [(len(entries), sum(entry["status"] == "pass" for entry in entries)) for entries in evaluated.values()]
    least = min((n for n, _ in counts), default=0)
    summary: dict[str, Any] = {
        f"pass@{k}": sum(pass_at_k(n, c, k) for n, c in counts) / len(counts) for k in meta.k if k <= least
    }
    failed = sorted((task for task, passed in (truth or {}).items() if not passed), key=_task_number)
    model, split = _named(Path(meta.samples_path).name)
    summary |= {
        "model": model,
        "split": split,
        "subset": "hard" if meta.problems == BIGCODEBENCH_HARD else "full",
        "calibrated": True,
        "gt_pass_rate": None if truth is None else (len(truth) - len(failed)) / len(truth) if truth else 0.0,
        "failed_tasks": failed,
    }
    pass_at_k_path = out.with_name(out.name.replace("_eval_results", "_pass_at_k"))
    if pass_at_k_path == out:
        pass_at_k_path = out.with_name(f"{out.stem}_pass_at_k.json")
    _write(pass_at_k_path, summary)
    return sum(n for n, _ in counts), pass_at_k_path


def _named(name: str) -> tuple[str, str]:
    """The model and the split in a samples file's name, as BigCodeBench names its files
    (<model>--bigcodebench-[hard-]<split>--<backend>-...); the split is "complete" where the name has none."""
    model, _, rest = name.partition("--bigcodebench-")
    split = rest.removeprefix("hard-").partition("--")[0]
    return model.removesuffix(".jsonl"), split if split in ("complete", "instruct") else "complete"


def _task_number(task_id: str) -> tuple[int, str]:
    number = task_id.rpartition("/")[2]
    return (int(number), task_id) if number.isdigit() else (-1, task_id)


def _write(path: Path, document: dict[str, Any]) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document, indent=2))
    partial.replace(path)
