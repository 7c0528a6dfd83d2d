"""A compile's cost, side by side in one run: the language's compile command as a reference harness runs it,
the same command with Java's class-data sharing (an archive of javac's classes, and the JVM's quick-start
flags), and codeexec's compiler kept running (worker/compilers/persistent.py: sandboxed, as the workers run it).
Each on the same programs (MBXP's canonical solutions with their tests, as mxeval compiles them), one after
another on an idle machine; each variant's statuses must be the command's.

    python bench/warm_compilers.py [--languages java,typescript] [--programs 40]

Prints, per language and variant, the mean wall-clock and CPU milliseconds a compile (CPU: the command's
processes; the warm compiler's, as its limit charges it) and the ratio to the command's wall clock.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from languages import _program, make_set

from codeexec.producer.inputs.problems import load_problems
from codeexec.protocol.kinds import ProgramTests
from codeexec.protocol.settings import runner_config
from codeexec.worker.compilers.persistent import compile_warm
from codeexec.worker.languages import language_of
from codeexec.worker.languages.language import Language, Toolchain

SETS = {"java": "mbjp-canonical", "typescript": "mbtsp-canonical"}
#: The JVM's quick-start flags beside an archive: the client compiler only, one collector thread.
QUICK = ["-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"]


def programs(language: str, count: int, directory: Path) -> tuple[Language, list[tuple[str, str]]]:
    """The language (as the set's benchmark runs it) and its first `count` programs: (file name, text)."""
    one = make_set(SETS[language], directory, count)
    problems = load_problems(str(one.problems))
    found: list[tuple[str, str]] = []
    chosen: Language | None = None
    for sample in one.samples:
        problem = problems[sample["task_id"]]
        assert isinstance(problem.tests, ProgramTests)
        chosen = language_of(problem.tests.language, problem.tests.benchmark)
        text = _program(problem, sample) + "\n"
        found.append((chosen.file_of(text), text))
    assert chosen is not None
    return chosen, found


def by_command(argv: list[str], file: str, text: str, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall s, CPU s, status) of the compile command `argv` on the program, in a directory of its own."""
    with tempfile.TemporaryDirectory() as work:
        Path(work, file).write_text(text)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        began = time.monotonic()
        done = subprocess.run(argv, cwd=work, env=env, capture_output=True, check=False)
        wall = time.monotonic() - began
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, done.returncode


def measure(name: str, count: int, directory: Path) -> None:
    language, found = programs(name, count, directory)
    toolchain = language.toolchain()
    assert isinstance(toolchain, Toolchain), toolchain
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(directory), **language.env}
    variants: dict[str, list[tuple[float, float, int]]] = {}

    def command(file: str) -> list[str]:
        [(_, argv, _)] = [step for step in language.steps(file, toolchain) if step[0] == "compile"]
        return argv

    variants["command"] = [by_command(command(file), file, text, env) for file, text in found]
    if name == "java":
        archive = directory / "javac.jsa"
        file, text = found[0]
        javac, *rest = command(file)
        by_command([javac, f"-J-XX:ArchiveClassesAtExit={archive}", *rest], file, text, env)
        for label, flags in (("class-data sharing", []), ("class-data sharing, quick start", QUICK)):
            variants[label] = [
                by_command([javac, f"-J-XX:SharedArchiveFile={archive}", *flags, *command(file)[1:]], file, text, env)
                for file, text in found
            ]
    config = runner_config()
    warm: list[tuple[float, float, int]] = []
    for file, text in found:
        compiled = compile_warm(language, toolchain, command(file), {file: text.encode()}, 60.0, config)
        assert compiled is not None and compiled.status is not None, "no compiler kept running"
        warm.append((compiled.wall_s, compiled.charged_s, compiled.status))
    variants["kept running (first compile included)"] = warm
    variants["kept running (after the first)"] = warm[1:]
    statuses = [status for _, _, status in variants["command"]]
    base = sum(wall for wall, _, _ in variants["command"]) / len(found)
    compiles = sum(status in language.compiled for status in statuses)
    print(f"\n{name}: {len(found)} programs ({SETS[name]}), {compiles} compile")
    print(f"  {'variant':42} {'wall ms':>8} {'CPU ms':>8} {'x':>6}")
    for label, each in variants.items():
        kept = statuses[1:] if label.endswith("after the first)") else statuses
        assert [status for _, _, status in each] == kept, f"{label}: other statuses than the command's"
        wall = sum(item[0] for item in each) / len(each)
        cpu = sum(item[1] for item in each) / len(each)
        print(f"  {label:42} {wall * 1e3:8.0f} {cpu * 1e3:8.0f} {base / wall:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--languages", default="java,typescript", help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument("--programs", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        for name in args.languages.split(","):
            measure(name, args.programs, Path(work))
    print(f"\n(measured {time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
