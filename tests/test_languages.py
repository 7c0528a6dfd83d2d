"""Programs in other languages (worker/languages/, worker/judging/kinds/program.py): each language compiles and runs
a program that passes, one whose test fails and one that does not compile, with the verdicts and messages
its reference harness gives; the references' own rules (Go's FAIL, Racket's and Scala's stderr, C#'s status,
mxeval's TypeScript compile); limits (time, output, memory) and the sandbox's programs posture hold for
compiled programs; and the benchmarks' files are read as the references read them, the real data in
../shared/data/multilang/ through `codeexec eval` with real workers."""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import system
from codeexec.producer.inputs.files import InputError
from codeexec.producer.inputs.problems import LANGUAGE_SETS, load_problems, write_canonical_samples
from codeexec.producer.inputs.samples import read_samples
from codeexec.protocol.kinds import ProgramTests
from codeexec.protocol.models import Problem, Sample, SampleKind
from codeexec.protocol.result import Outcome, RunResult
from codeexec.worker.compilers import cache, prebuilt
from codeexec.worker.judging.helpers.steps import run_in
from codeexec.worker.judging.kinds.program import self_test, self_test_failures
from codeexec.worker.judging.sample_program import program_for
from codeexec.worker.languages import (
    LANGUAGES,
    SELF_TESTS,
    dialects,
    every_way,
    language_of,
    name_of,
    npm_packages,
    packages,
)
from codeexec.worker.languages import language as language_module
from codeexec.worker.languages import rust as rust_module
from helpers import ROOT, codeexec, private_env, write_jsonl

pytestmark = pytest.mark.once  # other languages: what their toolchains do, the same under every Python

SHARED = ROOT.parent / "shared" / "data" / "multilang"

#: Every language as every benchmark runs it: the table's, and each module's DIALECTS.
EVERY_WAY = [way for name in LANGUAGES for way in every_way(name)]


@pytest.fixture(autouse=True, scope="module")
def own_precompiled_headers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """C++'s precompiled headers and what compiles made in a directory of this module's, not the user's data
    directory: the toolchains are looked for again with it."""
    directory = tmp_path_factory.mktemp("pch")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(prebuilt, "root", lambda kind: directory / kind)
        patch.setattr(cache, "directory", lambda: directory / "compiled")
        language_module._found.clear()
        yield
    language_module._found.clear()


def judged(name: str, program: str, benchmark: str = "", limit: float | None = None, **options: object):
    language = language_of(name, benchmark)
    return run_in(program, language, limit or language.run_limit_s, options)


def test_the_suite_installs_every_language_s_packages() -> None:
    """tests/system.py (which .ci/run installs from) names each package a language says it needs, as each
    benchmark runs it, read from the table before codeexec and its requirements are installed: the languages'
    modules import nothing but Python's own (run here without site-packages, as .ci/run runs it first)."""
    script = str(ROOT / "tests" / "system.py")
    debian = subprocess.run([sys.executable, "-S", script], capture_output=True, text=True, check=True, cwd="/")
    npm = subprocess.run([sys.executable, "-S", script, "npm"], capture_output=True, text=True, check=True, cwd="/")
    installed, from_npm = set(debian.stdout.split()), set(npm.stdout.split())
    for language in EVERY_WAY:
        assert set(language.package.split()) <= installed, language.name
        assert set(language.npm.split()) <= from_npm, language.name
    assert {need.package for need in system.NEEDS} <= installed


def test_every_language_is_one_module_in_the_table() -> None:
    modules = {path.stem for path in (ROOT / "worker" / "languages").glob("*.py")} - {"__init__", "language"}
    assert set(SELF_TESTS) == set(LANGUAGES) == modules
    names = [alias.lower() for language in LANGUAGES.values() for alias in {language.name, *language.aliases}]
    assert len(names) == len(set(names)), "an alias names two languages"
    for language in LANGUAGES.values():
        assert name_of(language.name.upper()) == language.name


def test_the_docs_table_says_what_each_language_s_module_says() -> None:
    """docs/languages.md's table has a row for each language, with its module's title, name, Debian packages and
    limits (its commands are said as a user would type them, and are the module's to say)."""
    section = (ROOT / "docs" / "languages.md").read_text().split("## The languages", 1)[1].split("\n## ", 1)[0]
    table = section[section.index("\n| ") + 1 :].split("\n\n", 1)[0]
    lines = table.splitlines()[2:]  # past the header and its rule
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines]
    rows = {row[1].split(" (")[0].strip("`"): row for row in cells}
    assert set(rows) == set(LANGUAGES)
    for name, language in LANGUAGES.items():
        title, _, packages_, compiles, _, limits = rows[name]
        assert title == language.title, name
        assert set(language.package.split()) <= set(re.findall(r"`([^`]+)`", packages_.split(" (")[0])), name
        assert bool(compiles) == bool(language.compile), name
        compile_limit = f"{language.compile_limit_s:g} s" if language.compile else ""
        assert limits == f"{compile_limit}, {language.run_limit_s:g} s", name


def test_ruby_loads_rubygems_when_a_program_first_needs_it() -> None:
    """A program that requires nothing outside Ruby's own library runs without RubyGems (most of its start:
    worker/languages/ruby.py); one that requires a gem finds it as it would have; did_you_mean's words are in
    an error's message, as RubyGems' prelude would have loaded it; a library that is nowhere is a LoadError."""
    assert judged("ruby", "exit(defined?(Gem) ? 1 : 0)\n").exit_code is Outcome.PASS
    gem = "require 'prime'\nexit(defined?(Gem) && Prime.first(3) == [2, 3, 5] ? 0 : 1)\n"  # a bundled gem
    assert judged("ruby", gem).exit_code is Outcome.PASS
    suggested = "def foo; end\nbegin; fooo; rescue NameError => e; exit(e.message['Did you mean?'] ? 0 : 1); end\n"
    assert judged("ruby", suggested).exit_code is Outcome.PASS
    missing = judged("ruby", "require 'no_such_library'\n")
    assert missing.exit_code is Outcome.ERROR and "cannot load such file -- no_such_library" in missing.detail


@pytest.mark.parametrize("name", sorted(SELF_TESTS))
def test_a_language_passes_fails_and_refuses_as_its_harness_does(name: str) -> None:
    """Each language's self-test (its module's SELF_TEST), as `codeexec doctor --check` runs it: a program that
    passes, one whose assertion fails, one that does not compile, each as the language's reference reads it."""
    if isinstance(LANGUAGES[name].toolchain(), str):
        pytest.skip(f"{LANGUAGES[name].toolchain()} (tests/system.py installs it)")
    # What a run's end reads as is tested here, not its limit: the longest a run may have (self_test()). Kotlin's
    # script compiles in its run step, in a JVM of many threads (3.7 s of wall clock, 6.5 s of CPU alone), which
    # the charge corrects for the wait of one thread only; beside the suite's heaviest tests in CI it was
    # charged its whole 15 s (docs/time-limits.md).
    results = self_test(name)
    assert self_test_failures(name, results) == []
    passed, failed = results["passes"], results["fails"]
    assert (passed.score, passed.total) == (1.0, 1), passed
    assert passed.protections and all(state == "on" for state in passed.protections.values()), passed.protections
    assert failed.score == 0.0, failed
    assert (failed.script is not None and failed.script.ended == "exited" and failed.script.status != 0) or name in (
        "csharp",
        "racket",
    )
    if "broken" in results:
        refused = results["broken"]
        assert refused.detail.startswith("it does not compile: ") and len(refused.detail) > 30, refused.detail


def test_a_self_test_that_goes_wrong_says_what_did() -> None:
    wrong = RunResult(exit_code=Outcome.PASS, score=1.0, passed=1, total=1)
    said = self_test_failures("bash", {"passes": wrong, "fails": wrong})
    assert said == ["the program whose assertion fails came to pass, not error: "]


def test_doctor_checks_the_languages_asked_for(tmp_path: Path) -> None:
    done = codeexec(private_env(tmp_path / "data"), "doctor", "--check", "bash,c", "--json")
    languages = json.loads(done.stdout)["languages"]
    assert (languages["bash"]["checked"], languages["c"]["checked"]) == ([], []), languages
    assert "checked" not in languages["cpp"]
    unknown = codeexec(private_env(tmp_path / "data"), "doctor", "--check", "cobol")
    assert unknown.returncode == 2 and "--check: not a language codeexec runs: cobol" in unknown.stderr


def test_the_reference_s_own_rules_where_the_status_is_not_enough() -> None:
    # Racket's rackunit and Mono's Debug.Assert exit 0 when a check fails: stderr decides (MultiPL-E's rule).
    for name in ("racket", "csharp"):
        failed = judged(name, SELF_TESTS[name].fails)
        assert failed.script is not None and failed.script.status == 0 and failed.exit_code is Outcome.ASSERTION_FAIL
    # Scala passes only with nothing on stderr.
    warned = judged("scala", 'object Problem { def main(args: Array[String]) = { System.err.println("x") } }')
    assert warned.exit_code is Outcome.ERROR, warned
    # MultiPL-E's TypeScript fails a type error; mxeval's takes tsc's status 2 (output emitted) as compiled.
    typed = "let x: number = 'text';\nconsole.log(x);\n"
    assert judged("typescript", typed).exit_code is Outcome.SYNTAX_ERROR
    assert judged("typescript", typed, "mxeval").exit_code is Outcome.PASS
    # Go: MultiPL-E's rows are test files run by `go test`, mxeval's programs run by `go run`.
    assert judged(
        "go", 'package main\nfunc main() { panic("Exception --- test case 0 failed") }\n', "mxeval"
    ).exit_code in (
        Outcome.ERROR,
        Outcome.ASSERTION_FAIL,
    )
    assert judged("go", "package main\nfunc main() {}\n", "mxeval").exit_code is Outcome.PASS


def test_a_program_out_of_time_is_stopped_and_its_tree_killed() -> None:
    forever = "#include <unistd.h>\nint main() { fork(); for (;;) {} }\n"
    result = judged("c", forever, limit=0.5)
    assert result.exit_code is Outcome.TIMEOUT and "timed out after 0.5 s" in result.detail, result
    assert result.script is not None and result.script.ended == "time_limit"


def test_a_program_that_prints_without_end_is_stopped_at_its_cap() -> None:
    result = judged("c", '#include <stdio.h>\nint main() { for (;;) puts("xxxxxxxxxxxxxxxx"); }\n', output_bytes=4096)
    assert result.exit_code is Outcome.ERROR and "output overflow" in result.detail, result


def test_memory_is_limited_by_rlimit_data_which_the_jvm_runs_under() -> None:
    big = "#include <stdlib.h>\n#include <string.h>\nint main() { char *p = malloc(1L << 31); if (!p) return 3;"
    big += " memset(p, 1, 1L << 31); return 0; }\n"
    assert judged("c", big, memory_bytes=1 << 30).exit_code is Outcome.ERROR
    assert judged("c", big, memory_bytes=4 << 30).exit_code is Outcome.PASS
    # RLIMIT_AS at 1 GiB breaks the JVM's start (it reserves its heap up front); RLIMIT_DATA does not.
    assert judged("java", SELF_TESTS["java"].passes, memory_bytes=1 << 30).exit_code is Outcome.PASS


# ---- the sandbox: compiled programs make the calls themselves ------------------------------------------------

ESCAPES = {
    "a socket to the host's loopback": (
        "#include <arpa/inet.h>\n#include <sys/socket.h>\nint main() { int s = socket(AF_INET, SOCK_STREAM, 0);"
        " struct sockaddr_in a = {AF_INET, htons(PORT)}; a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);"
        " return connect(s, (struct sockaddr *)&a, sizeof a) == 0 ? 0 : 1; }\n"
    ),
    "a unix socket": ("#include <sys/socket.h>\nint main() { return socket(AF_UNIX, SOCK_STREAM, 0) >= 0 ? 0 : 1; }\n"),
    "ptrace": "#include <sys/ptrace.h>\nint main() { return ptrace(PTRACE_TRACEME, 0, 0, 0) == 0 ? 0 : 1; }\n",
    "writing outside": '#include <stdio.h>\nint main() { return fopen("OUTSIDE", "w") ? 0 : 1; }\n',
    "reading the host's files": '#include <stdio.h>\nint main() { return fopen("/etc/shadow", "r")'
    ' || fopen("HOME/.bashrc", "r") ? 0 : 1; }\n',
    "another process's /proc": '#include <stdio.h>\nint main() { return fopen("/proc/1/environ", "r")'
    ' || fopen("/proc/1/cmdline", "r") ? 0 : 1; }\n',
    "a raw syscall for a user namespace": (
        "#include <unistd.h>\n#include <sys/syscall.h>\n"
        "int main() { return syscall(SYS_unshare, 0x10000000) == 0 ? 0 : 1; }\n"
    ),
    "a mount": '#include <sys/mount.h>\nint main() { return mount("none", ".", "tmpfs", 0, 0) == 0 ? 0 : 1; }\n',
}


#: The escapes that succeed without the sandbox, as root or not.
CONTROLLED = {"a socket to the host's loopback", "a unix socket", "writing outside"}


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_no_compiled_program_escapes(escape: str, tmp_path: Path) -> None:
    """Each program exits 0 only where its call succeeded: under the sandbox, none does."""
    listener = socket.create_server(("127.0.0.1", 0))
    outside = tmp_path / "outside.txt"
    program = (
        ESCAPES[escape]
        .replace("PORT", str(listener.getsockname()[1]))
        .replace("OUTSIDE", str(outside))
        .replace("HOME", os.path.expanduser("~"))
    )
    try:
        result = judged("c", program)
        assert result.exit_code is Outcome.ERROR and result.script is not None and result.script.status == 1, result
        assert not outside.exists()
        if escape in CONTROLLED:  # the same program without the sandbox makes its call: the check above could fail
            assert judged("c", program, sandbox="off").exit_code is Outcome.PASS
    finally:
        listener.close()


def test_a_bounded_fork_bomb_leaves_nothing_behind() -> None:
    # Its processes named by a name of this test's own (their children inherit it): another evaluator on the
    # machine runs programs called ./main too.
    marker = f"bomb{os.getpid()}"[:15]
    bomb = (
        "#include <sys/prctl.h>\n#include <unistd.h>\n"
        f'int main() {{ if (prctl(PR_SET_NAME, "{marker}") != 0) return 3;\n'
        "  for (int i = 0; i < 8; i++) fork();\n  sleep(60);\n}\n"
    )
    result = judged("cpp", bomb, limit=0.5)
    assert result.exit_code is Outcome.TIMEOUT, result
    left = [pid for pid in os.listdir("/proc") if pid.isdigit() and _is(pid, marker.encode())]
    assert not left, left


def _is(pid: str, name: bytes) -> bool:
    try:
        return Path(f"/proc/{pid}/comm").read_bytes().strip() == name
    except OSError:
        return False


# ---- the benchmarks' files -----------------------------------------------------------------------------------


def test_a_completion_is_cut_at_the_first_stop_token_and_a_solution_closes_its_own_function() -> None:
    tests = ProgramTests(language="rust", tests="}\n\nfn main() {\n    assert_eq!(f(), 1);\n}\n", stop_tokens=["\n}"])
    problem = Problem(task_id="t", prompt="fn f() -> i32 {\n", tests=tests)
    completion = Sample(kind=SampleKind.COMPLETION, text="    1\n}\n\nfn other() {}\n")
    assert program_for(problem, completion) == "fn f() -> i32 {\n    1\n" + tests.tests
    solution = Sample(kind=SampleKind.SOLUTION, text="fn f() -> i32 {\n    1\n}")
    program = program_for(problem, solution)
    assert program == "fn f() -> i32 {\n    1\n}\n\nfn main() {\n    assert_eq!(f(), 1);\n}\n"
    assert judged("rust", program).exit_code is Outcome.PASS


@pytest.mark.parametrize(
    ("path", "count", "language", "benchmark"),
    [
        ("multipl-e/humaneval/humaneval-cpp-reworded.jsonl", 161, "cpp", "multipl-e"),
        ("multipl-e/humaneval/humaneval-sh-reworded.jsonl", 158, "bash", "multipl-e"),
        ("multipl-e/mbpp/mbpp-go-reworded.jsonl", 371, "go", "multipl-e"),
        ("mbxp/problems/mbjsp_release_v1.2.jsonl", 966, "javascript", "mxeval"),
        ("mbxp/problems/mbtsp_release_v1.2.jsonl", 968, "typescript", "mxeval"),
        ("humaneval-x/humaneval_java.jsonl.gz", 164, "java", "humaneval-x"),
    ],
)
def test_the_benchmarks_rows_are_read_in_their_languages(path: str, count: int, language: str, benchmark: str) -> None:
    problems = load_problems(str(SHARED / path))
    assert len(problems) == count
    kinds = {(p.tests.language, p.tests.benchmark) for p in problems.values() if isinstance(p.tests, ProgramTests)}
    assert kinds == {(language, benchmark)}


def test_a_row_in_a_language_codeexec_does_not_run_names_the_line(tmp_path: Path) -> None:
    rows = [{"name": "a", "language": "cpp", "prompt": "", "tests": "", "stop_tokens": []},
            {"name": "b", "language": "swift", "prompt": "", "tests": "", "stop_tokens": []}]  # fmt: skip
    with pytest.raises(InputError, match=r"rows.jsonl:2: language 'swift': codeexec does not run it"):
        load_problems(str(write_jsonl(tmp_path / "rows.jsonl", rows)))
    mbxp_cs = [{"task_id": "MBCSP/1", "language": "csharp", "prompt": "", "test": ""}]
    with pytest.raises(InputError, match=r"rows.jsonl:1: language 'csharp' of mxeval: its tests need .NET 6"):
        load_problems(str(write_jsonl(tmp_path / "rows.jsonl", mbxp_cs)))


def test_a_missing_toolchain_names_the_line_and_the_package(tmp_path: Path) -> None:
    rows = write_jsonl(tmp_path / "rows.jsonl", [{"task_id": "MBCPP/1", "language": "cpp", "prompt": "", "test": ""}])
    samples = write_jsonl(tmp_path / "samples.jsonl", [{"task_id": "MBCPP/1", "completion": ""}])
    env = private_env(tmp_path / "data") | {"PATH": str(tmp_path)}  # nowhere a g++ is
    done = codeexec(env, "eval", "--problems", str(rows), "--samples", str(samples))
    assert done.returncode == 2, done.stderr
    assert f"{rows}:1: language 'cpp': no g++ on this machine (apt-get install g++)" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_sample_in_another_language_than_its_problem_s_is_refused(tmp_path: Path) -> None:
    problems = load_problems(str(SHARED / "mbxp" / "problems" / "mbjsp_release_v1.2.jsonl"))
    wrong = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "MBJSP/1", "completion": "x", "language": "python"}])
    with pytest.raises(InputError, match=r"s.jsonl:1: the sample is in 'python', and MBJSP/1's tests are javascript's"):
        read_samples(wrong, problems)


def test_mbxp_and_multipl_e_samples_are_judged_as_their_references_judged_them(tmp_path: Path) -> None:
    """Real generations through `codeexec eval` and real workers: mxeval's JavaScript samples (its verdicts,
    reproduced here with mxeval's evaluator) and GPT-4's Reflexion Rust programs (MultiPL-E's statuses)."""
    env = private_env(tmp_path / "data")
    reference = [json.loads(line) for line in (SHARED / "mbxp/samples/mbjsp_samples.jsonl_results.jsonl").open()][:24]
    ids = {row["task_id"] for row in reference}
    rows = [json.loads(line) for line in (SHARED / "mbxp/problems/mbjsp_release_v1.2.jsonl").open()]
    problems = write_jsonl(tmp_path / "js.jsonl", [row for row in rows if row["task_id"] in ids])
    samples = write_jsonl(tmp_path / "js-samples.jsonl", [{k: r[k] for k in ("task_id", "completion", "language")}
                                                          for r in reference])  # fmt: skip
    rust = [json.loads(line) for line in (SHARED / "reflexion-rs/gpt4_reflexion_humaneval-rs_run1.jsonl").open()][:16]
    statuses = [
        json.loads(line)
        for line in (SHARED / "reflexion-rs/gpt4_reflexion_humaneval-rs_run1.multiple_status.jsonl").open()
    ]
    rust_samples = write_jsonl(tmp_path / "rs.jsonl", [{"name": r["name"], "solution": r["solution"]} for r in rust])
    rust_problems = SHARED / "multipl-e/humaneval/humaneval-rs-reworded.jsonl"
    for problems_, samples_, expected in (
        (problems, samples, [row["passed"] for row in reference]),
        (rust_problems, rust_samples, [s["status"] == "OK" for s in statuses[:16]]),
    ):
        out = tmp_path / "per-sample.jsonl"
        done = codeexec(env, "eval", "--problems", str(problems_), "--samples", str(samples_), "--skip-unknown",
                        "--per-sample", str(out))  # fmt: skip
        assert done.returncode == 0, done.stderr
        verdicts = [json.loads(line)["passed"] for line in out.read_text().splitlines()]
        assert verdicts == expected


def test_doctor_lists_every_language_with_its_toolchain_or_its_package(tmp_path: Path) -> None:
    done = codeexec(private_env(tmp_path / "data"), "doctor", "--json")
    languages = json.loads(done.stdout)["languages"]
    assert set(languages) == set(LANGUAGES)
    for name, found in languages.items():
        if isinstance(LANGUAGES[name].toolchain(), str):
            assert found["missing"].startswith("no ") and "(apt-get install " in found["missing"], found
        else:
            assert Path(found["path"]).is_file() and found["version"] and "warning" not in found["version"], found
    assert json.loads(done.stdout)["programs"], "the programs posture is probed too"
    # One line installs everything missing: each language's toolchain where it is missing, else what each
    # benchmark's way of running it lacks (its own toolchain, a library some of its programs need).
    apt, npm = [], []
    for name, language in LANGUAGES.items():
        if isinstance(language.toolchain(), str):
            apt += language.package.split()
            npm += language.npm.split()
            continue
        for way in dialects(name).values():
            if isinstance(way.toolchain(), str):
                apt += way.package.split()
                npm += way.npm.split()
            for library in way.libraries:
                if not library.found():
                    apt += library.package.split()
                    npm += library.npm.split()
    install = json.loads(done.stdout)["install"]
    assert install == {"apt": list(dict.fromkeys(apt)), "npm": list(dict.fromkeys(npm))}
    plain = codeexec(private_env(tmp_path / "data"), "doctor")
    assert "languages (docs/languages.md):" in plain.stdout and "C++ (cpp)" in plain.stdout
    last = plain.stdout.splitlines()[-1]
    if apt or npm:
        assert last.startswith("to install every language's toolchain and libraries: "), last
        assert ("apt-get install " + " ".join(dict.fromkeys(apt))) * bool(apt) in last, last
    else:
        assert last == "every language's toolchain and libraries are here"


def test_doctor_names_a_library_a_benchmark_s_programs_lack_and_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from codeexec.producer.entry import cli
    from codeexec.worker.languages.language import Library

    found = Library.found
    monkeypatch.setattr(
        Library, "found", lambda self: "boost" not in self.paths[0] and "js-md5" not in self.npm and found(self)
    )
    cli.main(["doctor"])
    said = capsys.readouterr().out
    assert (
        "as humaneval-x runs it, lacks /usr/include/boost/any.hpp: needed by HumanEval-X's CPP/22 and CPP/137 "
        "(apt-get install libboost-dev)" in said
    )
    assert "lacks js-md5: needed by HumanEval-X's JavaScript/162 (npm install -g js-md5)" in said
    last = said.splitlines()[-1]
    assert "libboost-dev" in last.split(" && ")[0] and last.endswith("&& npm install -g js-md5"), last


def test_the_worker_image_s_build_argument_installs_the_languages_packages() -> None:
    """The Dockerfile's LANGUAGES argument asks the languages' table for their packages, as a user's names."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    asked = dockerfile.split('packages=$(python -c "', 1)[1].split('")', 1)[0]
    for names, expected in (
        ("all", packages("all")),
        ("cpp java", "g++ libboost-dev libssl-dev openjdk-17-jdk-headless libjavatuples-java junit5"),
    ):
        done = subprocess.run(
            [sys.executable, "-c", asked.replace("$LANGUAGES", names)], capture_output=True, text=True
        )
        assert done.returncode == 0 and done.stdout.split() == expected.split(), done.stderr
    every = {
        p for language in EVERY_WAY for provides in (language, *language.libraries) for p in provides.package.split()
    }
    assert set(packages("all").split()) == every
    from_npm = dockerfile.split('npm=$(python -c "', 1)[1].split('")', 1)[0].replace("$LANGUAGES", "typescript")
    done = subprocess.run([sys.executable, "-c", from_npm], capture_output=True, text=True)
    assert done.stdout.split() == npm_packages("typescript").split() and "tsx@4" in done.stdout, done.stderr
    assert npm_packages("cpp java") == "", "a language that needs nothing of npm's asks for nothing"
    assert "golang-github-stretchr-testify-dev" in packages("go").split(), "HumanEval-X's way of running Go"
    with pytest.raises(ValueError, match="not a language codeexec runs: cobol"):
        packages("cpp cobol")


@pytest.mark.parametrize("name", sorted(LANGUAGE_SETS))
def test_every_bundled_set_is_read_in_its_language(name: str) -> None:
    path, language = LANGUAGE_SETS[name]
    problems = load_problems(name)
    assert len(problems) >= 150 and path.exists()
    found = {(p.tests.kind, getattr(p.tests, "language", "python")) for p in problems.values()}
    assert len(found) == 1, found
    if language is not None:
        assert name_of(language) == next(iter(found))[1]
    # Bundled with its license, as HumanEval+ is.
    (source,) = [source for source in ("MultiPL-E", "MBXP", "HumanEval-X") if path.name.startswith(source)]
    assert (path.parent / f"{source}-LICENSE").is_file()


def test_a_bundled_set_s_canonical_solutions_pass_where_their_libraries_are(tmp_path: Path) -> None:
    """HumanEval-X's C++ canonical solutions, as CodeGeeX judges them (164 of 164 where Boost and OpenSSL's
    headers are installed): each passes, or fails to compile for want of a header doctor says is lacking. Here every
    tenth task's and the three that include those headers (bench/languages.py's humaneval-x-canonical-cpp
    judges all 164)."""
    chosen = {f"CPP/{number}" for number in [*range(0, 164, 10), 22, 137, 162]}
    samples = write_canonical_samples("humaneval-x-cpp", tmp_path, chosen)
    out = tmp_path / "per-sample.jsonl"
    done = codeexec(private_env(tmp_path / "data"), "eval", "--problems", "humaneval-x-cpp", "--samples", str(samples),
                    "--k", "1", "--per-sample", str(out))  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = [json.loads(line) for line in out.read_text().splitlines()]
    assert {result["task_id"] for result in results} == chosen
    lacking = [library for library in language_of("cpp", "humaneval-x").libraries if not library.found()]
    for result in results:
        if not result["passed"]:  # only for want of a library this machine lacks
            assert result["exit_code"] == "syntax_error", result
            assert any(library.paths[0].removeprefix("/usr/include/") in result["detail"] for library in lacking)
    assert sum(result["passed"] for result in results) >= len(chosen) - 3 * bool(lacking)


def test_humaneval_x_go_imports_what_a_generation_names_and_its_canonical_solutions_pass() -> None:
    """As CodeGeeX assembles a Go program: the test file's head, an import block of the packages the generation
    names (`strings.`; not the prompt's), the prompt without its own imports; testify from Debian's package."""
    problems = load_problems("humaneval-x-go")
    tests = problems["Go/0"].tests
    assert isinstance(tests, ProgramTests) and tests.head.startswith("package main")
    assert tests.before("x := math.Abs(y)\nstrings.Split(a, b)") == (
        f'{tests.head}\nimport (\n"math"\n    "strings"\n)\n'
    )
    assert tests.before("return 1") == f"{tests.head}\n"
    with gzip.open(LANGUAGE_SETS["humaneval-x-go"][0], "rt") as lines:
        rows = {row["task_id"]: row for row in map(json.loads, lines)}
    go = language_of("go", "humaneval-x")
    # Its toolchain reads testify's directory, whichever way of running Go was looked for first.
    language_module._found.clear()
    assert not isinstance(language_of("go").toolchain(), str)
    found = go.toolchain()
    assert not isinstance(found, str) and "/usr/share/gocode" in found.directories
    # Go/32, /38: test files that import math/rand themselves; the others' prompts have an import block of theirs.
    for task_id in ("Go/0", "Go/2", "Go/4", "Go/7", "Go/10", "Go/16", "Go/32", "Go/38"):
        problem = problems[task_id]
        program = program_for(problem, Sample(kind=SampleKind.COMPLETION, text=rows[task_id]["canonical_solution"]))
        assert program is not None and not problem.prompt.count(rows[task_id]["import"] or "\0")
        result = run_in(program, go, go.run_limit_s, {})
        assert result.exit_code is Outcome.PASS, (task_id, result.detail)
    wrong = program_for(problems["Go/0"], Sample(kind=SampleKind.COMPLETION, text="    return false\n}\n"))
    assert wrong is not None
    failed = run_in(wrong, go, go.run_limit_s, {})
    assert failed.exit_code is Outcome.ASSERTION_FAIL and "Error Trace" in failed.detail + failed.script.stdout, failed


def test_humaneval_x_rust_is_a_cargo_binary_s_tests_with_debian_s_crates() -> None:
    """As CodeGeeX assembles a Rust program (main, the declaration, the prompt, the generation, then the test
    with no newline) and cargo checks and tests it: rand, regex and md5 (Debian's, built once) for programs to
    read and not write; Rust/50's test calls rand 0.4's gen_range(low, high), said as rand 0.8 says it."""
    problems = load_problems("humaneval-x-rust")
    with gzip.open(LANGUAGE_SETS["humaneval-x-rust"][0], "rt") as lines:
        rows = {row["task_id"]: row for row in map(json.loads, lines)}
    add = problems["Rust/53"]
    assert isinstance(add.tests, ProgramTests) and add.tests.benchmark == "humaneval-x"
    body = rows["Rust/53"]["canonical_solution"]
    assert program_for(add, Sample(kind=SampleKind.GENERATION, text=body)) == (
        "\nfn main(){ \n } \n" + rows["Rust/53"]["declaration"] + rows["Rust/53"]["prompt"] + body
        + rows["Rust/53"]["test"]
    )  # fmt: skip
    assert "gen_range(b'a'..b'z' + 1)" in problems["Rust/50"].tests.tests
    rust = language_of("rust", "humaneval-x")
    # Rust/38 and /53: rand's random() and gen(); /50: gen_range; /91: a Regex; /162: md5::compute.
    for task_id in ("Rust/0", "Rust/38", "Rust/50", "Rust/53", "Rust/91", "Rust/162"):
        sample = Sample(kind=SampleKind.GENERATION, text=rows[task_id]["canonical_solution"])
        program = program_for(problems[task_id], sample)
        assert program is not None
        result = run_in(program, rust, rust.run_limit_s, {})
        assert result.exit_code is Outcome.PASS, (task_id, result.detail)
    for body, outcome, said in (
        ("\n    return x - y;\n}\n", Outcome.ASSERTION_FAIL, "assertion failed: add(0, 1) == 1"),
        ("\n    return x + \n}\n", Outcome.SYNTAX_ERROR, "expected expression"),
    ):
        program = program_for(add, Sample(kind=SampleKind.GENERATION, text=body))
        assert program is not None
        result = run_in(program, rust, rust.run_limit_s, {})
        assert result.exit_code is outcome and said in result.detail + result.script.stdout, result
    toolchain = rust.toolchain()
    assert not isinstance(toolchain, str)
    deps, libraries = rust_module.crates(toolchain)
    assert set(libraries) == {"rand", "regex", "md5"}
    probe = (
        f'fn main() {{}}\n#[test]\nfn t() {{\n    assert!(std::fs::read_dir("{deps}").is_ok());\n'
        f'    assert!(std::fs::write("{deps}/poison", "x").is_err());\n'
        f'    assert!(std::fs::remove_file("{libraries["md5"]}").is_err());\n}}\n'
    )
    result = run_in(probe, rust, rust.run_limit_s, {})
    assert result.exit_code is Outcome.PASS, result
    assert not (Path(deps) / "poison").exists() and Path(libraries["md5"]).exists()


def test_codegeex_s_generation_follows_the_prompt_in_humaneval_x_and_only_there() -> None:
    """CodeGeeX's samples files name what follows the prompt `generation` (a Python one cut at its first
    unindented line); elsewhere a generation is a model's raw answer."""
    python = load_problems("humaneval-x-python")["Python/0"]
    generation = "    return True\n\ndef extra():\n    pass\n"
    program = program_for(python, Sample(kind=SampleKind.GENERATION, text=generation))
    assert program == f"{python.setup}\n{python.prompt}    return True\n"
    cpp = load_problems("humaneval-x-cpp")["CPP/0"]
    program = program_for(cpp, Sample(kind=SampleKind.GENERATION, text="    return true;\n}\n"))
    assert program is not None and program.startswith(cpp.prompt + "    return true;\n}\n\n")
    humaneval = load_problems("humaneval")["HumanEval/0"]
    answer = "Here it is:\n```python\ndef has_close_elements(a, b):\n    return True\n```\n"
    program = program_for(humaneval, Sample(kind=SampleKind.GENERATION, text=answer))
    assert program is not None and program.endswith("def has_close_elements(a, b):\n    return True\n")


def test_crates_that_cannot_be_built_are_the_machine_s_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where cargo cannot build HumanEval-X's crates, a program is the worker's infra_error saying so, never a
    compile error of the program's."""
    monkeypatch.setattr(rust_module, "REGISTRY", str(tmp_path))  # a registry without the crates
    rust = language_of("rust", "humaneval-x")
    result = run_in("fn main() {}\n", rust, rust.run_limit_s, {})
    assert result.exit_code is Outcome.INFRA_ERROR, result
    assert "could not build the crates rand, regex, md5" in result.detail and "no matching package" in result.detail


def test_go_s_prebuilt_build_cache_is_read_by_programs_and_written_by_none() -> None:
    """A program's go command reads the worker's build cache (GOCACHE) and cannot add to it or change it."""
    probe = (
        'package main\nimport (\n\t"os"\n\t"path/filepath"\n)\nfunc main() {\n\tcache := os.Getenv("GOCACHE")\n'
        "\tif _, err := os.ReadDir(cache); err != nil { os.Exit(3) }\n"
        '\tif os.WriteFile(filepath.Join(cache, "poison"), []byte("x"), 0o644) == nil { os.Exit(4) }\n'
        '\tif os.RemoveAll(filepath.Join(cache, "00")) == nil { os.Exit(5) }\n}\n'
    )
    go = language_of("go", "mxeval")
    toolchain = go.toolchain()
    assert not isinstance(toolchain, str)
    cache = go.cache(toolchain)
    assert cache is not None and (Path(cache) / "00").is_dir()
    result = run_in(probe, go, go.run_limit_s, {})
    assert result.exit_code is Outcome.PASS, result  # read (3), not written (4), nothing removed (5)
    assert not (Path(cache) / "poison").exists() and (Path(cache) / "00").is_dir()


#: HumanEval_53_add (x + y) in each language of MultiPL-E's bundled rows: a right completion and a wrong one,
#: as a model would write them after the prompt (each cut at the first stop token, as MultiPL-E cuts it).
ADD = {
    "cpp": ("    return x + y;\n}\n", "    return x - y;\n}\n"),
    "cs": ("        return x + y;\n    }\n", "        return x - y;\n    }\n"),
    "d": ("{\n    return x + y;\n}\n", "{\n    return x - y;\n}\n"),
    "go": ("    return x + y\n}\n", "    return x - y\n}\n"),
    "java": ("        return x + y;\n    }\n", "        return x - y;\n    }\n"),
    "js": ("  return x + y;\n}\n", "  return x - y;\n}\n"),
    "lua": ("    return x + y\nend\n", "    return x - y\nend\n"),
    "php": ("    return $x + $y;\n}\n", "    return $x - $y;\n}\n"),
    "pl": ("    return $x + $y;\n}\n", "    return $x - $y;\n}\n"),
    "r": ("\n    x + y\n}\n", "\n    x - y\n}\n"),
    "rb": ("  x + y\nend\n", "  x - y\nend\n"),
    "rkt": ("  (+ x y))\n", "  (- x y))\n"),
    "rs": ("    x + y\n}\n", "    x - y\n}\n"),
    "scala": ("        x + y\n    }\n", "        x - y\n    }\n"),
    "sh": ("    echo $(( $1 + $2 ))\n}\n", "    echo $(( $1 - $2 ))\n}\n"),
    "ts": ("  return x + y;\n}\n", "  return x - y;\n}\n"),
}


def test_multipl_e_s_own_rows_pass_a_right_completion_and_fail_a_wrong_one(tmp_path: Path) -> None:
    """Every language through MultiPL-E's own rows (bundled), its completions files (a directory of them is
    the problems and the samples), real workers, and its own results files: OK for x + y, not for x - y."""
    directory = tmp_path / "completions"
    directory.mkdir()
    for name, completions in ADD.items():
        row = load_problems(f"multipl-e-humaneval-{name}")["HumanEval_53_add"]
        assert isinstance(row.tests, ProgramTests)
        record = {"name": f"HumanEval_53_add_{name}", "language": LANGUAGES[row.tests.language].aliases[0],
                  "prompt": row.prompt, "tests": row.tests.tests, "stop_tokens": row.tests.stop_tokens,
                  "completions": list(completions), "temperature": 0.2}  # fmt: skip
        with gzip.open(directory / f"{record['name']}.json.gz", "wt") as out:
            json.dump(record, out)
    results = tmp_path / "results"
    env = private_env(tmp_path / "data")
    done = codeexec(env, "eval", "--problems", str(directory), "--samples", str(directory), "--k", "1",
                    "--multiple-results", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr
    for name in ADD:
        found = json.loads((results / f"HumanEval_53_add_{name}.results.json").read_text())["results"]
        assert [result["status"] for result in found] == ["OK", "Exception"], (name, found)
        # Mono and Racket exit 0 where a check fails: their stderr decides, and MultiPL-E reports that status.
        assert found[0]["exit_code"] == 0 and (found[1]["exit_code"] != 0) is (name not in ("cs", "rkt"))
