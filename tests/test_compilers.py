"""Compiling once (worker/compilers/: cache.py, prebuilt.py, persistent.py; docs/languages.md, "Compiling once"):
C++'s precompiled system headers, a program compiled once for every run of the same source, and the
compilers kept running (javac, scalac, tsc), each judging as its command judges and sandboxed."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from test_languages import judged, own_precompiled_headers  # noqa: F401 (a fixture of this module too)

from codeexec.protocol.result import Outcome
from codeexec.worker.compilers import cache, persistent, prebuilt
from codeexec.worker.judging.helpers import steps as stepped
from codeexec.worker.judging.helpers.steps import run_in
from codeexec.worker.languages import SELF_TESTS, cpp, language_of

pytestmark = pytest.mark.once  # other languages: what their toolchains do, the same under every Python


def test_the_system_headers_a_second_program_begins_with_are_precompiled_and_change_no_verdict() -> None:
    head = "#include <bits/stdc++.h>\nusing namespace std;\n"
    good = head + "int main() { vector<int> v{2, 1}; sort(v.begin(), v.end()); assert(v[0] == 1); }\n"
    bad = head + "int main() { vector<int> v{2, 1}; assert(v[0] == 1); }\n"
    outcomes = [judged("cpp", program, "mxeval").exit_code for program in (good, good, bad, good)]
    assert outcomes == [Outcome.PASS, Outcome.PASS, Outcome.ASSERTION_FAIL, Outcome.PASS]
    pch = prebuilt.root(cpp.PCH)
    built = [gch for gch in pch.glob("*/prefix.h.gch") if "stdc++" in gch.with_suffix("").read_text()]
    assert len(built) == 1 and built[0].with_suffix("").read_text() == "#include <bits/stdc++.h>\n"
    # Its directory made again (the sandbox's rules know the one before): the headers go unused, nothing fails.
    shutil.rmtree(pch)
    pch.mkdir()
    assert [judged("cpp", program, "mxeval").exit_code for program in (good, good, bad)] == outcomes[:3]
    assert not list(pch.glob("*/prefix.h.gch"))


def test_a_program_compiled_once_is_not_compiled_again_and_keeps_its_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same source again runs what its compile made then (worker/compilers/cache.py); what the program
    does to its own files while it runs is never kept: here it puts a script that exits 0 where its binary was."""
    replaces = (
        '#include <stdio.h>\n#include <sys/stat.h>\nint main() { FILE *f = fopen("x", "w");'
        ' fputs("#!/bin/sh\\nexit 0\\n", f); fclose(f); chmod("x", 0755); rename("x", "main"); return 1; }\n'
    )
    first = judged("c", replaces)
    again = judged("c", replaces)
    assert first.exit_code is again.exit_code is Outcome.ERROR, (first, again)
    assert first.script is not None and again.script is not None and first.script.status == again.script.status == 1
    compiles: list[str] = []  # each compile made: by a step, or by a compiler kept running
    steps, warm_compile = stepped._steps, stepped.compile_warm

    def counted_steps(program: str, language: object, given: list, *rest: object, **named: object) -> object:
        compiles.extend(step.kind for step in given if step.kind == "compile")
        return steps(program, language, given, *rest, **named)  # type: ignore[arg-type]

    def counted_warm(*given: object) -> object:
        compiles.append("compile")
        return warm_compile(*given)  # type: ignore[arg-type]

    monkeypatch.setattr(stepped, "_steps", counted_steps)
    monkeypatch.setattr(stepped, "compile_warm", counted_warm)
    for name in ("rust", "typescript", "csharp"):
        program = f"{SELF_TESTS[name].passes}\n// compiled once\n"  # a text no other test compiled (and kept)
        compiles.clear()
        first = judged(name, program)
        assert first.exit_code is Outcome.PASS and compiles == ["compile"], (name, first, compiles)
        again = judged(name, program)
        assert again.exit_code is Outcome.PASS and compiles == ["compile"], (name, again, compiles)  # kept: none
    assert len(list(cache.directory().glob("*/*"))) >= 4


#: Java programs whose compile says something: each is judged by javac kept running as a javac command judges it.
JAVA = [
    SELF_TESTS["java"].passes,
    SELF_TESTS["java"].broken,
    'class Problem { public static void main(String[] a) { int x = "s"; } }',  # a type error
    "import java.util.*;\nclass Problem { public static void main(String[] a) { List l = new ArrayList(); l.add(1);"
    " Runnable r = () -> {}; class In {} assert l.size() == 1; } }",  # a note (unchecked), several classes
    "class Problem { public static void main(String[] a) { Helper.go(); } }",  # a class that is nowhere
    "class Problem { public static void main(String[] a) {"
    ' String \u00e9t\u00e9 = "\u00e9"; assert \u00e9t\u00e9.length() == 1; } }',  # not ASCII
    "import org.javatuples.Pair;\nclass Problem { public static void main(String[] a) {"
    " assert Pair.with(1, 2).getValue1() == 2; } }",  # MultiPL-E's class path
]


#: TypeScript programs whose compile says something, for both of its harnesses' rules.
TYPESCRIPT = [
    SELF_TESTS["typescript"].passes,
    SELF_TESTS["typescript"].fails,
    SELF_TESTS["typescript"].broken,  # a type error: MultiPL-E's fails it, mxeval's runs what tsc emitted
    "let x = (;\n",  # a syntax error
    "import * as assert from 'assert';\nassert.deepEqual([1], [1]);\n",  # no @types/node: an error, emitted
    "const \u00e9t\u00e9: string = '\u00e9';\nif (\u00e9t\u00e9.length !== 1) { throw new Error('no'); }\n",
]
#: Scala programs whose compile says something.
SCALA = [
    SELF_TESTS["scala"].passes,
    SELF_TESTS["scala"].broken,
    'object Problem { def main(args: Array[String]) = { val x: Int = "s" } }',  # a type error
    "object Problem { case class P(a: Int)\n def main(args: Array[String]) = { assert(P(1) == P(1)) } }",
    "package p\nobject Problem { def main(args: Array[String]) = {} }",  # its classes in a directory of theirs
    "object Problem { def main(args: Array[String]) = {"
    ' val \u00e9t\u00e9 = "\u00e9"; assert(\u00e9t\u00e9.length == 1) } }',  # not ASCII
]
#: Each language with a compiler kept running (Language.warm), and programs to compare it on.
WARM = {"java": JAVA, "scala": SCALA, "typescript": TYPESCRIPT}


@pytest.mark.parametrize("name", sorted(WARM))
def test_a_compiler_kept_running_judges_as_its_command_does(name: str) -> None:
    # mxeval's TypeScript compiles by rules of its own; its Java and Scala differ only in their class (Main).
    for benchmark, chosen in (("", WARM[name]), ("mxeval", WARM[name] if name == "typescript" else WARM[name][:1])):
        kept = language_of(name, benchmark)
        assert kept.warm
        command = replace(kept, warm=())
        for program in chosen:
            if benchmark == "mxeval":
                program = program.replace("class Problem", "class Main").replace("object Problem", "object Main")
            warm_result = run_in(program, kept, 15.0, {})
            shutil.rmtree(cache.directory(), ignore_errors=True)  # what it kept would be no command's compile
            cold = run_in(program, command, 15.0, {})
            assert (warm_result.exit_code, warm_result.detail) == (cold.exit_code, cold.detail), (program, warm_result)
        assert [key for key in persistent._running if key[0] == name], "the compiler was not kept running"


def test_a_warm_compile_out_of_time_is_the_program_s_and_a_new_compiler_serves_the_next() -> None:
    # ~0.5 s of javac's CPU time, warm: ten times the limit, whatever the load (CPU time is charged).
    huge = (
        "class Problem {\n"
        + "".join(
            f"  static int f{i}(int x) {{ int y = x * {i}; for (int j = 0; j < 3; j++) y += j; return y; }}\n"
            for i in range(3000)
        )
        + "  public static void main(String[] a) { assert f1(1) == 4; }\n}\n"
    )
    java = language_of("java", "")
    quick = replace(java, compile_limit_s=0.05)
    timed_out = run_in(huge, quick, 15.0, {})
    assert timed_out.exit_code is Outcome.SYNTAX_ERROR, timed_out
    assert timed_out.detail == "the compile timed out after 0.05 s", timed_out.detail
    assert run_in(huge, java, 15.0, {}).exit_code is Outcome.PASS


def test_a_status_not_the_warm_compiler_s_verdict_is_left_to_a_javac_command() -> None:
    """A status outside warm_statuses (javac's own error) stops the compiler: a javac command decides."""
    java = language_of("java", "")
    distrusting = replace(java, warm_statuses=frozenset({0}))
    broken = SELF_TESTS["java"].broken
    assert run_in(SELF_TESTS["java"].passes, distrusting, 15.0, {}).exit_code is Outcome.PASS
    running = set(persistent._running)
    assert [key for key in running if key[0] == "java"]
    refused = run_in(broken, distrusting, 15.0, {})
    assert (refused.exit_code, refused.detail) == (
        (cold := run_in(broken, replace(java, warm=()), 15.0, {})).exit_code,
        cold.detail,
    )
    assert refused.protections.get("pid_namespace") == "on", "a javac command's run"
    assert len(set(persistent._running)) == len(running) - 1, "the compiler was not stopped"


def test_the_warm_compiler_s_process_is_sandboxed(tmp_path: Path) -> None:
    """What the compiler's process runs under (persistent.py, run as a script before it is the compiler): here a
    shell in its place tries what a compiler must not do. Writing its own directory is the control."""
    listener = socket.create_server(("127.0.0.1", 0))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    outside = tmp_path / "outside.txt"
    probe = (
        f"echo > {scratch}/own && echo own; echo > {outside} && echo outside;"
        " cat /etc/shadow >/dev/null && echo shadow;"
        f" cat /proc/1/environ >/dev/null && echo proc1; echo > /dev/tcp/127.0.0.1/{listener.getsockname()[1]}"
        " && echo tcp; exit 0"
    )
    given = {
        "scratch": str(scratch), "toolchains": [], "sandbox": "auto", "data_bytes": 1 << 30,
        "argv": ["/bin/bash", "-c", probe], "env": {"PATH": "/usr/bin:/bin"},
    }  # fmt: skip
    try:
        ran = subprocess.run(
            [sys.executable, "-m", "codeexec.worker.compilers.persistent", json.dumps(given)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        listener.close()
    states, *said = ran.stdout.splitlines()
    assert json.loads(states) == {
        "pid_namespace": "off", "network": "on", "syscalls": "on", "filesystem": "on", "signals": "on",
        "capabilities": "on",
    }  # fmt: skip
    assert said == ["own"], ran
    assert not outside.exists()
