"""EvalPlus 0.3.1 itself, for the benchmarks that compare codeexec with it (bench/agreement.py,
bench/evalplus_speed.py, bench/load_invariance.py): installed by pip into a throw-away virtualenv on first
use, and run on the HumanEval+ or MBPP+ file codeexec bundles (HUMANEVAL_OVERRIDE_PATH, MBPP_OVERRIDE_PATH,
so nothing is downloaded)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from codeexec.producer.inputs.problems import HUMANEVALPLUS_PATH, MBPPPLUS_PATH

VERSION = "0.3.1"
VENV = Path(tempfile.gettempdir()) / f"codeexec-bench-evalplus-{VERSION}"
#: EvalPlus's --dataset: the bundled file, and the variable that points EvalPlus at it.
DATASETS = {
    "humaneval": (HUMANEVALPLUS_PATH, "HUMANEVAL_OVERRIDE_PATH"),
    "mbpp": (MBPPPLUS_PATH, "MBPP_OVERRIDE_PATH"),
}


def python() -> Path:
    """The throw-away virtualenv's interpreter, with EvalPlus installed."""
    interpreter = VENV / "bin" / "python"
    if not (VENV / ".installed").exists():
        shutil.rmtree(VENV, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        print(f"installing evalplus=={VERSION} into {VENV} ...", file=sys.stderr)
        subprocess.run([str(interpreter), "-m", "pip", "install", "-q", f"evalplus=={VERSION}"], check=True)
        (VENV / ".installed").touch()
    return interpreter


def evaluate(
    samples: Path, workdir: Path, cache: Path, parallel: int = 2, dataset: str = "humaneval"
) -> tuple[float, dict]:
    """Run `evalplus.evaluate --dataset DATASET` on `samples` (copied into `workdir`, where EvalPlus writes
    its results) with its ground-truth cache in `cache` (empty: EvalPlus computes the expected outputs
    first). Returns the command's wall-clock seconds and its eval_results.json."""
    workdir.mkdir(parents=True, exist_ok=True)
    bundled, variable = DATASETS[dataset]
    data = workdir / bundled.name.removesuffix(".gz")
    if not data.exists():
        data.write_bytes(gzip.decompress(bundled.read_bytes()))  # the hash EvalPlus reports
    copy = workdir / samples.name
    shutil.copyfile(samples, copy)
    results = copy.with_name(copy.name.replace(".jsonl", "_eval_results.json"))
    results.unlink(missing_ok=True)  # EvalPlus would load it instead of evaluating (or ask before overwriting)
    environment = os.environ | {variable: str(data), "XDG_CACHE_HOME": str(cache)}
    command = [str(python()), "-m", "evalplus.evaluate", "--dataset", dataset, "--samples", str(copy)]
    began = time.monotonic()
    subprocess.run(
        [*command, "--parallel", str(parallel)],
        env=environment,
        check=True,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    elapsed = time.monotonic() - began
    return elapsed, json.loads(results.read_text())


def in_order(results: dict, task_ids: list[str]) -> list[dict]:
    """EvalPlus's entry of each sample of a samples file whose task ids are `task_ids`, in the file's
    order (its eval_results.json lists a task's samples in that order)."""
    taken: dict[str, int] = {}
    entries = []
    for task_id in task_ids:
        entries.append(results["eval"][task_id][taken.get(task_id, 0)])
        taken[task_id] = taken.get(task_id, 0) + 1
    return entries
