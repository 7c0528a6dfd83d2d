"""The programs bench/service.py sends to /run_code, and its requests of them as verl's SandboxFusion reward
sends them: a request per test, `compile_timeout` and `run_timeout` 10 (verl's `timeout`), memory_limit_MB
verl's 1024 unless told.

Python: APPS-150's ChatGPT programs that ExecEval judged solved, on a stdin problem (64 programs of 20
problems). C++ and Java: no real submissions to these problems are at hand, so a directory of the caller's
(--programs DIR, outside this repository) holds DIR/cpp/<id>.cpp and DIR/java/<id>.java, an APPS-150
problem's id; each the translation of one of those solved Python programs of that problem (the first in the
files' order), made by hand to do what it does line by line (the same data structures and loops, not a
better algorithm: the same work a test costs), and checked to print what the Python program prints on
every test of its problem. Java's class is Main: SandboxFusion writes every Java program to Main.java.

A compiled program's requests go sample by sample: each sample a program's every test in turn (verl sends
a sample's tests at once), and each sample's code its own (a comment naming the sample at its end), since
in RL every sample is new code: a server that keeps what a compile made (codeexec does, by the program's
text) compiles once a sample, as it would for verl, and not once for the whole run."""

from __future__ import annotations

import json
import random
from pathlib import Path

from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.kinds import CaseTests

APPS = Path(__file__).resolve().parents[2] / "shared" / "data" / "competitive" / "apps-mapcoder"
#: A language's file extension in --programs DIR/<language>/, and how a line comment starts in it.
COMPILED = {"cpp": ("cpp", "//"), "java": ("java", "//")}
VERL_MEMORY_MB = 1024  # verl's reward.sandbox_fusion.memory_limit_mb

Program = tuple[str, list[str], list[str]]  # the program, its tests' inputs, their outputs


def stdin_tests(problems: dict, problem_id: str) -> tuple[list[str], list[str]] | None:
    cases = problems[problem_id].tests
    if isinstance(cases, CaseTests) and cases.kind == "stdin":
        return list(cases.inputs), list(cases.outputs)
    return None


def solved_programs() -> list[Program]:
    """(program, inputs, outputs) of every ChatGPT program ExecEval judged solved, on a stdin problem."""
    problems = load_problems(str(APPS / "selected150.jsonl"))
    found = []
    for path in sorted(APPS.glob("ChatGPT-*.jsonl")):
        for line in path.open():
            record = json.loads(line)
            tests = stdin_tests(problems, str(record["id"]))
            if record["is_solved"] and tests is not None:
                found.append((record["source_codes"][0], *tests))
    return found


def compiled_programs(directory: Path, language: str) -> list[Program]:
    """The caller's programs in `language` (DIR/<language>/<APPS-150 id>.<ext>), each with its problem's tests."""
    problems = load_problems(str(APPS / "selected150.jsonl"))
    extension, _ = COMPILED[language]
    found = []
    for path in sorted((directory / language).glob(f"*.{extension}")):
        tests = stdin_tests(problems, path.stem)
        if tests is None:
            raise ValueError(f"{path}: {path.stem} is not a stdin problem of APPS-150")
        found.append((path.read_text(), *tests))
    if not found:
        raise ValueError(f"no {language} programs in {directory / language}")
    return found


def verl_body(language: str, memory_mb: int | None) -> dict:
    """What verl sends beside the code and stdin (call_sandbox_api: compile_timeout = run_timeout = timeout)."""
    return {"language": language, "run_timeout": 10, "compile_timeout": 10, "memory_limit_MB": memory_mb}


def requests_of(programs: list[Program], count: int) -> list[tuple[dict, str]]:
    """`count` verl-style Python requests (a program on one test's input) and the output each should print."""
    every = [
        (program, given, wanted)
        for program, inputs, outputs in programs
        for given, wanted in zip(inputs, outputs, strict=True)
    ]
    random.Random(0).shuffle(every)
    chosen = (every * (count // len(every) + 1))[:count]
    body = verl_body("python", VERL_MEMORY_MB)
    return [({**body, "code": program, "stdin": given}, wanted) for program, given, wanted in chosen]


def sample_requests(
    programs: list[Program], count: int, language: str, memory_mb: int | None
) -> list[tuple[dict, str]]:
    """`count` verl-style requests of a compiled language, sample by sample, each sample's code its own."""
    _, comment = COMPILED[language]
    order = list(programs)
    random.Random(0).shuffle(order)
    body = verl_body(language, memory_mb)
    found: list[tuple[dict, str]] = []
    sample = 0
    while len(found) < count:
        program, inputs, outputs = order[sample % len(order)]
        code = f"{program.rstrip()}\n{comment} sample {sample}\n"
        found += [({**body, "code": code, "stdin": i}, o) for i, o in zip(inputs, outputs, strict=True)]
        sample += 1
    return found[:count]
