"""Samples for MBPP+'s agreement benchmark (bench/agreement.py --mbppplus): real and made ones.

- Reflexion's GPT-4 MBPP solutions (../shared/data/mbpp/reflexion_gpt4_mbpp-py_397.jsonl, MultiPL-E's
  task names mbpp_N_name) under MBPP+'s task ids (Mbpp/N), those of the tasks MBPP+ has;
- every MBPP+ task's canonical solution (EvalPlus needs a sample of every task);
- three wrong (or subtly right) variants of each canonical solution, by rotation over VARIANTS: the
  canonical program with its entry point wrapped, or cut short. They reach what the real samples
  seldom do: each special oracle, float tolerance, types (tuple for list, 1.0 for 1), raising, calls
  over their time limit, outputs that alias an argument, iterators, print().

No variant keeps state between calls: EvalPlus runs each check in a new process, codeexec the two in
one (docs/judging.md), so a counter would be judged differently by design.

    python bench/mbppplus_samples.py OUT.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from codeexec.producer.inputs.files import read_jsonl
from codeexec.producer.inputs.problems import MBPPPLUS_PATH

REFLEXION = Path(__file__).resolve().parents[2] / "shared" / "data" / "mbpp" / "reflexion_gpt4_mbpp-py_397.jsonl"

_WRAPPER = """

import functools as _variant_functools
import time as _variant_time


def _variant(function):
    @_variant_functools.wraps(function)
    def wrapper(*args):
{body}
    return wrapper


{entry} = _variant({entry})
"""

VARIANTS = {
    # a wrong output of the same kind, mostly (a reversed list is right for the set-compared tasks)
    "off": """\
        out = function(*args)
        if isinstance(out, bool):
            return not out
        if isinstance(out, int):
            return out + 1
        if isinstance(out, float):
            return out * 1.001 + 0.001
        if isinstance(out, str):
            return out + "x"
        if isinstance(out, list):
            return out[::-1]
        if isinstance(out, tuple):
            return out[1:]
        return None""",
    # floats moved by 3e-8 of themselves: within EvalPlus's rtol 1e-7 where a tolerance applies
    "near": """\
        out = function(*args)
        def nudge(value):
            return value * (1 + 3e-8) if isinstance(value, float) else value
        if type(out) in (list, tuple):
            return type(out)(nudge(value) for value in out)
        return nudge(out)""",
    # the same value in another type: a list for a tuple (never ==), 1.0 for 1 and 1 for True (==)
    "retype": """\
        out = function(*args)
        if isinstance(out, tuple):
            return list(out)
        if isinstance(out, list):
            return tuple(out)
        if isinstance(out, bool):
            return int(out)
        if isinstance(out, int):
            return float(out)
        return out""",
    # raises on the larger inputs (most of the plus check's)
    "raise": """\
        if len(repr(args)) > 60:
            raise ValueError("too large")
        return function(*args)""",
    # empties its list arguments after the call: wrong where the output is one of them
    "mutate": """\
        out = function(*args)
        for argument in args:
            if isinstance(argument, list):
                argument.clear()
        return out""",
    # an iterator over the output: right only where EvalPlus compares set(output)
    "iterate": """\
        out = function(*args)
        return iter(out) if isinstance(out, (list, tuple, set)) else out""",
    # over the 1 s time limit on large inputs (a sleep: the same on an idle machine for both)
    "slow": """\
        if len(repr(args)) > 200:
            _variant_time.sleep(1.2)
        print("working", args)
        return function(*args)""",
}
CUT = "cut"  # the program cut in the middle: a syntax error, mostly
ROTATION = [*VARIANTS, CUT]


def variant(program: str, entry_point: str, name: str) -> str:
    if name == CUT:
        return program[: len(program) // 2]
    return program + _WRAPPER.format(body=VARIANTS[name], entry=entry_point)


def samples() -> list[dict[str, str]]:
    tasks = {record["task_id"]: record for _, record in read_jsonl(MBPPPLUS_PATH)}
    found = []
    for _, solution in read_jsonl(REFLEXION):
        task_id = f"Mbpp/{solution['name'].split('_')[1]}"
        if task_id in tasks:
            found.append({"task_id": task_id, "solution": solution["solution"], "source": "reflexion-gpt4"})
    for number, (task_id, task) in enumerate(tasks.items()):
        program = task["prompt"] + task["canonical_solution"]
        found.append({"task_id": task_id, "solution": program, "source": "canonical"})
        for shift in range(3):
            name = ROTATION[(number + shift) % len(ROTATION)]
            code = variant(program, task["entry_point"], name)
            found.append({"task_id": task_id, "solution": code, "source": f"variant-{name}"})
    return found


def write(path: Path) -> int:
    made = samples()
    path.write_text("".join(json.dumps(sample) + "\n" for sample in made))
    return len(made)


if __name__ == "__main__":
    out = Path(sys.argv[1])
    print(f"{write(out)} samples in {out}")
