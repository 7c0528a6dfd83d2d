"""/run_code in the languages besides Python (worker/languages/__init__.py, RUN_CODE): a real server, a real
Valkey, a real Celery worker and the real toolchains, each language run as SandboxFusion's runner runs it
(its commands, its compile_result and run_result), and a program compiled once for the requests that send
it again."""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from codeexec.worker.languages import RUN_CODE
from helpers import Server, Worker

pytestmark = pytest.mark.once  # other languages: what their toolchains do, the same under every Python

#: Each language SandboxFusion names: a program that reads a number and prints it and one more, and one that
#: fails an assertion (its module's RUN_CODE).
PROGRAMS = {name: (served.echo, served.failing) for name, (_, served) in RUN_CODE.items()}


def run_code(url: str, **request: object) -> dict:
    response = httpx.post(f"{url}/run_code", json={"run_timeout": 30, "compile_timeout": 60, **request}, timeout=300)
    assert response.status_code == 200, response.text
    return response.json()


def test_each_language_runs_as_sandboxfusion_runs_it(service: Server) -> None:
    for name, (echo, failing) in PROGRAMS.items():
        if name in ("go_test", "junit", "jest"):  # a test file: its report, not its output
            ok = run_code(service.url, code=echo, language=name)
            said = ok["run_result"]["stdout"] + ok["run_result"]["stderr"]
            assert ok["status"] == "Success", (name, ok)
            assert "ok" in said or "1 tests successful" in said or "1 passed" in said, (name, ok)
        else:
            ok = run_code(service.url, code=echo, language=name, stdin="41")
            assert ok["status"] == "Success", (name, ok)
            assert ok["run_result"]["stdout"].split() == ["41", "42"], (name, ok)
        assert ok["run_result"]["return_code"] == 0 and ok["run_result"]["execution_time"] > 0, (name, ok)
        failed = run_code(service.url, code=failing, language=name)
        assert failed["status"] == "Failed", (name, failed)
        assert failed["run_result"]["status"] == "Finished" and failed["run_result"]["return_code"] != 0, name


def test_a_compile_s_result_and_a_failed_compile(service: Server) -> None:
    """SandboxFusion's compile_result: a compiled language's whatever its end; a compile that fails is
    Failed with the compiler's words, and no run."""
    ok = run_code(service.url, code=PROGRAMS["cpp"][0], language="cpp", stdin="1")
    assert ok["compile_result"]["status"] == "Finished" and ok["compile_result"]["return_code"] == 0
    broken = {
        "cpp": ("int main() { return x; }\n", "error"),
        "rust": ('fn main() { let x: i32 = "a"; }\n', "error"),
        "go": ("package main\nfunc main() { x }\n", "undefined: x"),
        # SandboxFusion's Java is Main.java, whatever the public class: javac refuses another's name.
        "java": ("public class Solution { public static void main(String[] a) {} }\n", "Solution.java"),
    }
    for name, (program, words) in broken.items():
        failed = run_code(service.url, code=program, language=name)
        assert failed["status"] == "Failed" and failed["run_result"] is None, (name, failed)
        assert failed["compile_result"]["status"] == "Finished" and failed["compile_result"]["return_code"] != 0
        assert words in failed["compile_result"]["stderr"] + failed["compile_result"]["stdout"], (name, failed)
    assert run_code(service.url, code="echo hi\n", language="bash")["compile_result"] is None


def test_typescript_jest_and_csharp_as_sandboxfusion_s_runtimes_have_them(service: Server) -> None:
    """tsx checks no types (a type error runs; a syntax error fails the run); Jest's results are in
    jest-report.json as SandboxFusion's autoeval reads them; C# has .NET's implicit usings, its Debug.Assert
    checks and fails the run."""
    typed = run_code(service.url, code="const x: number = 'text';\nconsole.log(x);\n", language="typescript")
    assert typed["status"] == "Success" and typed["run_result"]["stdout"] == "text\n", typed
    broken = run_code(service.url, code="const x = ;\n", language="typescript")
    assert broken["status"] == "Failed" and "Unexpected" in broken["run_result"]["stderr"], broken
    for code, passed in ((PROGRAMS["jest"][0], "passed"), (PROGRAMS["jest"][1], "failed")):
        ran = run_code(service.url, code=code, language="jest", fetch_files=["jest-report.json"])
        report = json.loads(base64.b64decode(ran["files"]["jest-report.json"]))
        [suite] = report["testResults"]
        assert suite["testFilePath"].endswith(".test.ts") and [case["status"] for case in suite["testResults"]] == [
            passed
        ], report
    program = "public class P { public static void Main() {\n  var ok = new List<int> { 1 }.Any();\n" \
        '  Debug.Assert(!ok, "Assertion failed"); } }\n'  # fmt: skip
    failed = run_code(service.url, code="using System.Diagnostics;\n" + program, language="csharp")
    assert failed["status"] == "Failed" and "Assertion failed" in failed["run_result"]["stderr"], failed


def test_time_limits_of_the_run_and_of_the_compile(service: Server) -> None:
    slow = '#include <unistd.h>\n#include <cstdio>\nint main() { puts("started"); fflush(stdout); sleep(30); }\n'
    ran = run_code(service.url, code=slow, language="cpp", run_timeout=0.5)
    assert ran["status"] == "Failed" and ran["run_result"]["status"] == "TimeLimitExceeded"
    assert ran["run_result"]["return_code"] is None and ran["run_result"]["stdout"] == "started\n"
    # A compile that cannot end: templates instantiated without end, under a compile limit of a tenth of a second.
    endless = "template<int N> struct F { enum { v = F<N + 1>::v }; };\nint main() { return F<0>::v; }\n"
    compiled = run_code(service.url, code=endless, language="cpp", compile_timeout=0.1)
    assert compiled["status"] == "Failed" and compiled["run_result"] is None
    assert compiled["compile_result"]["status"] in ("TimeLimitExceeded", "Finished"), compiled
    if compiled["compile_result"]["status"] == "Finished":  # g++ gave up first: its depth limit
        assert compiled["compile_result"]["return_code"] != 0


def test_files_in_and_out_of_a_compiled_program(service: Server) -> None:
    program = (
        '#include <fstream>\n#include <iostream>\n#include "given.h"\n'
        'int main() { std::ifstream in("data/in.txt"); int n; in >> n;\n'
        '  std::ofstream("out.txt") << n * FACTOR; std::cout << "done" << std::endl; }\n'
    )
    files = {"given.h": b"#define FACTOR 3\n", "data/in.txt": b"14\n"}
    sent = {path: base64.b64encode(content).decode() for path, content in files.items()}
    ran = run_code(service.url, code=program, language="cpp", files=sent, fetch_files=["out.txt", "missing.txt"])
    assert ran["status"] == "Success", ran
    assert {path: base64.b64decode(data) for path, data in ran["files"].items()} == {"out.txt": b"42"}
    # Another header under the same name: another compile (a compile's key holds the files beside it).
    sent["given.h"] = base64.b64encode(b"#define FACTOR 4\n").decode()
    again = run_code(service.url, code=program, language="cpp", files=sent, fetch_files=["out.txt"])
    assert base64.b64decode(again["files"]["out.txt"]) == b"56"


def test_a_program_sent_again_is_compiled_once(service: Server, tmp_path: Path) -> None:
    """verl sends a request per test, all for one program, at once: the worker compiles it once (worker/
    compilers/cache.py keeps what the compile made, and a process about to compile what another is
    compiling waits for it), and each request runs it on its own input."""
    # Slow to compile (a few hundred instantiations), so that both of the worker's processes take a request of
    # it while it compiles.
    program = (
        PROGRAMS["cpp"][0]
        .replace("n + 1", "n + 7")
        .replace(
            "int main()",
            "template <int N> struct F { static long v() { return F<N - 1>::v() + N; } };\n"
            "template <> struct F<0> { static long v() { return 0; } };\nint main()",
        )
        .replace("std::endl;", "std::endl; if (n < 0) std::cout << F<400>::v();")
    )
    kept = tmp_path / "data" / "compiled"
    before = set(kept.glob("*/*")) if kept.exists() else set()

    async def send() -> list[dict]:
        async with httpx.AsyncClient(timeout=300) as client:
            sent = [
                client.post(f"{service.url}/run_code", json={"code": program, "language": "cpp", "stdin": str(given),
                                                             "compile_timeout": 60})
                for given in range(4)
            ]  # fmt: skip
            return [answer.json() for answer in await asyncio.gather(*sent)]

    answers = asyncio.run(send())
    for given, ran in enumerate(answers):
        assert ran["run_result"]["stdout"].split() == [str(given), str(given + 7)], ran
        assert ran["compile_result"]["status"] == "Finished" and ran["compile_result"]["return_code"] == 0
    assert len(set(kept.glob("*/*")) - before) == 1
    compiles = [ran["compile_result"]["execution_time"] for ran in answers]
    assert sum(1 for took in compiles if took > 0) == 1, compiles  # the others found what it made


def test_a_language_this_server_does_not_run(service: Server) -> None:
    julia = run_code(service.url, code="println(1)", language="julia")
    assert julia["status"] == "SandboxError" and "'julia' is not run by this server" in julia["message"]
    unknown = httpx.post(f"{service.url}/run_code", json={"code": "x", "language": "cobol"}, timeout=60)
    assert unknown.status_code == 422
    assert "this server runs python, pytest, bash, cpp" in unknown.text and "julia" not in unknown.text


def test_a_batch_takes_a_language_per_sample(service: Server) -> None:
    """One test set, samples in Python, C++ and Java: each judged in its own language (compiled once, a run
    per test); a compile error is verl's -4 on every test; a language codeexec does not run, or a call-based
    set for a compiled program, is a 422 that queues nothing."""
    double = {"inputs": ["3\n", "5\n"], "outputs": ["6\n", "10\n"]}
    cpp = "#include <iostream>\nint main() { long long x; std::cin >> x; std::cout << 2 * x << std::endl; }\n"
    java = "public class Main { public static void main(String[] a) {\n" \
        "  System.out.println(2 * new java.util.Scanner(System.in).nextInt()); } }\n"  # fmt: skip
    samples = [
        {"code": "print(2 * int(input()))", "id": "py"},
        {"code": cpp, "language": "cpp", "id": "cpp"},
        {"code": cpp.replace("2 * x", "(x == 5 ? 0 : 2 * x)"), "language": "c++", "id": "cpp-wrong"},
        {"code": java, "language": "java", "id": "java"},
        {"code": "int main() { return x; }", "language": "cpp", "id": "cpp-broken"},
    ]
    body = {"tests": {"default": double}, "samples": samples, "extract": "none", "stream": False}
    response = httpx.post(f"{service.url}/v1/batch", json=body, timeout=300)
    assert response.status_code == 200, response.text
    lines = {line["id"]: line for line in response.json()["results"]}
    assert {name: lines[name]["results"] for name in lines} == {
        "py": [True, True], "cpp": [True, True], "cpp-wrong": [True, False], "java": [True, True],
        "cpp-broken": [-4, -4],
    }  # fmt: skip
    assert lines["cpp-broken"]["status"] == "syntax_error" and "error" in lines["cpp-broken"]["detail"]
    for bad, said in (({"language": "cobol"}, "not a language codeexec runs"), ({"language": "cpp"}, "fn_name")):
        sets = {"default": {"inputs": [[1]], "outputs": [2], "fn_name": "f"}} if "fn_name" in said else body["tests"]
        refused = httpx.post(
            f"{service.url}/v1/batch", json={"tests": sets, "samples": [{"code": "x", **bad}]}, timeout=60
        )
        assert refused.status_code == 422 and said in refused.text, refused.text


def test_verl_s_and_trl_s_hooks_take_a_language(service: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    from codeexec.producer.service.client import compute_score, trl_reward

    truth = {"inputs": ["3\n", "5\n"], "outputs": ["6\n", "10\n"]}
    cpp = "```cpp\n#include <iostream>\nint main() { int x; std::cin >> x; std::cout << 2 * x << std::endl; }\n```"
    scores = compute_score(
        data_sources=["codecontests"] * 3,
        solution_strs=[cpp, "```python\nprint(2 * int(input()))\n```", cpp],
        ground_truths=[truth] * 3,
        extra_infos=[{"language": "cpp"}, {}, {}],  # the last one is judged as Python: it is no Python program
        url=service.url,
    )
    assert scores == [1.0, 1.0, 0.0]
    monkeypatch.setenv("CODEEXEC_SERVE_URL", service.url)
    rewards = asyncio.run(trl_reward([cpp, cpp], ground_truth=[truth, truth], language=["cpp", "python"]))
    assert rewards == [1.0, 0.0]


def test_a_toolchain_a_worker_lacks_is_a_sandbox_error_naming_its_package(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's side (its toolchain lacking: the machine's failure, infra_error, with the package to
    install) and the server's answer to it (SandboxError, saying so)."""
    from codeexec.producer.service.endpoints import run_code_response
    from codeexec.protocol.kinds import Script
    from codeexec.protocol.result import Outcome, StoredResult
    from codeexec.worker.judging.kinds import script
    from codeexec.worker.languages import language as language_module

    monkeypatch.setattr(language_module.shutil, "which", lambda tool, path=None: None)
    language_module._found.clear()
    try:
        result = script.run_other("print(1)", Script(language="lua", file="tmp.py", time_limit_s=5), {})
    finally:
        language_module._found.clear()
    assert result.exit_code is Outcome.INFRA_ERROR and "install lua5.4" in result.detail
    answer = run_code_response(StoredResult.from_run(result))
    assert answer.status == "SandboxError" and "install lua5.4" in answer.message


def path_without(directory: Path, *lacking: str) -> str:
    """A PATH of links to every command of this one's but those whose names start with one of `lacking`: a
    machine without those toolchains."""
    directory.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        for command in Path(folder).glob("*") if Path(folder).is_dir() else ():
            if not command.name.startswith(lacking) and not os.path.lexists(directory / command.name):
                (directory / command.name).symlink_to(command)
    return str(directory)


def test_a_language_no_worker_has_is_answered_at_once_naming_its_packages(
    serve: Callable[..., Server], start_worker: Callable[..., Worker], tmp_path: Path
) -> None:
    """Workers say which toolchains they have: a language none has is refused before anything is queued,
    the 422 of a name that is not SandboxFusion's lists what this server runs and what its workers lack
    (with the packages), and a program that reaches a worker without its toolchain is answered on the first
    attempt, not after the retries meant for a machine's passing failure."""
    worker = start_worker("w1", extra_env={"PATH": path_without(tmp_path / "bin", "lua")})
    url = serve().url
    lua = run_code(url, code="print(1)", language="lua")
    assert lua["status"] == "SandboxError" and lua["run_result"]["status"] == "Error", lua
    assert "no worker of this server has the toolchain of lua (apt-get install lua5.4 lua-unit)" in lua["message"]
    assert run_code(url, code="print(41 + 1)", language="python")["run_result"]["stdout"] == "42\n"

    cobol = httpx.post(f"{url}/run_code", json={"code": "x", "language": "cobol"}, timeout=60)
    assert cobol.status_code == 422, cobol.text
    [said] = cobol.json()["detail"]
    assert said["loc"] == ["body", "language"], said
    runs, lacking = said["msg"].split("; this server runs ")[1].split("; its workers lack the toolchains of ")
    assert "bash" in runs.split(", ") and "lua" not in runs.split(", ")
    assert lacking == "lua (apt-get install lua5.4 lua-unit)"

    batch = {
        "tests": {"double": {"inputs": ["3\n"], "outputs": ["6\n"]}},
        "samples": [{"code": "print(2 * io.read('n'))", "tests": "double", "language": "lua"}],
        "stream": False,
    }
    answer = httpx.post(f"{url}/v1/batch", json=batch, timeout=300)
    assert answer.status_code == 200, answer.text
    [line] = answer.json()["results"]
    assert line["status"] == "infra_error" and "apt-get install lua5.4" in line["detail"], line
    assert "attempts" not in line["detail"] and "infra_error (attempt" not in worker.log.read_text()
