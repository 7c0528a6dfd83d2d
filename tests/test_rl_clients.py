"""The RL frameworks' own clients, unchanged, against a real `codeexec serve`: the sandbox-fusion 0.3.7 client
(sync, async, run_concurrent), verl 0.9.1's check_correctness and default_compute_score, and
tinker-cookbook 0.6.1's code grading, each from PyPI in a virtualenv of its own (verl's reward files
are imported without its package __init__, which would pull in torch and ray: what each runs is verl's
code as it is). Each client's script runs in that virtualenv and asserts what it got."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from helpers import Server
from pythons import find_interpreter

CLIENTS = ["sandbox-fusion==0.3.7", "chz", "aiohttp", "requests"]
NO_DEPS = ["verl==0.9.1", "tinker-cookbook==0.6.1"]  # their reward code needs none of their heavy dependencies
# The clients run in a virtualenv of their own Python, against the server test_service.py tests under each.
pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def client_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A virtualenv with the clients: verl wants Python < 3.13, tinker-cookbook >= 3.11."""
    interpreter = next((found for minor in (11, 12) if (found := find_interpreter(minor))), None)
    if interpreter is None:
        pytest.skip("the RL clients need Python 3.11 or 3.12 (verl < 3.13, tinker-cookbook >= 3.11); neither is here")
    venv = tmp_path_factory.mktemp("rl-clients") / "venv"
    subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "pip"), "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, *CLIENTS], check=True)
    subprocess.run([*pip, "--no-deps", *NO_DEPS], check=True)
    return str(venv / "bin" / "python")


def run_client(python: str, script: str, url: str, tmp_path: Path) -> str:
    path = tmp_path / "client.py"
    path.write_text(script)
    done = subprocess.run([python, str(path), url], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    return done.stdout


SANDBOX_FUSION = """
import asyncio, base64, sys
from sandbox_fusion import (RunCodeRequest, RunStatus, SummaryMapping, run_code, run_code_async,
                            run_concurrent, set_endpoint, summary_run_code_result)
set_endpoint(sys.argv[1])  # the base URL: the client adds /run_code
ok = run_code(RunCodeRequest(code="print(int(input())+1)", stdin="41", language="python"), client_timeout=60)
assert ok.status == RunStatus.Success and ok.run_result.stdout == "42\\n", ok
f = run_code(RunCodeRequest(code="print(open('d/x.txt').read()); open('o.txt','w').write('hi')", language="python",
             files={"d/x.txt": base64.b64encode(b"data").decode()}, fetch_files=["o.txt"]))
assert f.run_result.stdout == "data\\n" and base64.b64decode(f.files["o.txt"]) == b"hi", f
m = SummaryMapping(RunTimeout="TLE", RunFailed="RE")
tle = run_code(RunCodeRequest(code="import time; time.sleep(5)", run_timeout=0.5, language="python"))
assert summary_run_code_result(tle, m) == "TLE", tle
bad = run_code(RunCodeRequest(code="raise SystemExit(3)", language="python"))
assert bad.status == RunStatus.Failed and summary_run_code_result(bad, m) == "RE", bad
tests = "def test_one():\\n    assert 1 + 1 == 2\\n"
assert run_code(RunCodeRequest(code=tests, language="pytest")).status == RunStatus.Success
requests = [RunCodeRequest(code=f"print({i}*{i})", language="python") for i in range(16)]
outs = run_concurrent(run_code, args=[[r] for r in requests], concurrency=8)
assert [o.run_result.stdout for o in outs] == [f"{i*i}\\n" for i in range(16)]
a = asyncio.run(run_code_async(RunCodeRequest(code="print('async')", language="python"), client_timeout=60))
assert a.run_result.stdout == "async\\n"
print("sandbox-fusion: OK")
"""

VERL = """
import importlib.util, json, pathlib, sys, types
# verl's reward files as they are, without verl/__init__.py (torch, ray): rl_clients.md's shim.
root = pathlib.Path(importlib.util.find_spec("verl").submodule_search_locations[0])
for name, sub in (("verl", root), ("verl.utils", root / "utils")):
    module = types.ModuleType(name); module.__path__ = [str(sub)]; sys.modules[name] = module
from verl.utils.reward_score import default_compute_score
from verl.utils.reward_score.sandbox_fusion.utils import check_correctness
assert "torch" not in sys.modules
url = sys.argv[1] + "/run_code"  # verl is given the endpoint itself
truth = {"inputs": ["1 2\\n", "3 4\\n", "5 5\\n"], "outputs": ["3\\n", "7\\n", "11\\n"]}
answer = "```python\\na, b = map(int, input().split())\\nprint(a + b)\\n```"
for source in ("codecontests", "apps", "taco", "codeforces"):
    score = default_compute_score(source, answer, json.dumps(truth), sandbox_fusion_url=url, memory_limit_mb=1024)
    score = score[0] if isinstance(score, tuple) else score
    assert abs(score - 2 / 3) < 1e-9, (source, score)  # 5 + 5 is 10, not 11
# Called directly, verl sends "memory_limit_MB": null, which SandboxFusion answers with 422 (every case -1).
score = default_compute_score("codecontests", answer, truth, sandbox_fusion_url=url)
assert abs((score[0] if isinstance(score, tuple) else score) - 2 / 3) < 1e-9, score
results, meta = check_correctness(url, truth, "a, b = map(int, input().split())\\nprint(a + b)")
assert results == [True, True, False], (results, meta)
results, _ = check_correctness(url, {"inputs": ["1\\n2"], "outputs": ["3"], "fn_name": "add"},
                               "def add(a, b):\\n    return a + b")
assert results == [True], results
results, _ = check_correctness(url, {"inputs": ["1\\n"], "outputs": ["1\\n"]}, "while True: pass", timeout=1)
assert results == [-3], results
results, _ = check_correctness(url, {"inputs": ["1\\n"], "outputs": ["1\\n"]}, "raise ValueError")
assert results == [-2], results
results, _ = check_correctness(url, {"inputs": ["", ""], "outputs": [None, None],
                                     "assert_case": ["assert f(1) == 2", "assert f(1) == 3"]},
                               "def f(x):\\n    return x + 1")
assert results == [True, -2], results
print("verl: OK")
"""

TINKER = """
import asyncio, os, sys
os.environ["SANDBOX_URL"] = sys.argv[1] + "/run_code"
from tinker_cookbook.recipes.code_rl.code_grading import sandbox_check_correctness, taco_to_lcb_format
tests = taco_to_lcb_format({"inputs": ["1 2\\n", "3 4\\n"], "outputs": ["3\\n", "7\\n"]})
right = "a, b = map(int, input().split())\\nprint(a + b)"
async def main():
    passed, details = await sandbox_check_correctness(tests, right, timeout=6)
    assert passed is True, details
    passed, details = await sandbox_check_correctness(tests, "print(3)", timeout=6)
    assert passed is False, details
    # Call-based: its inputs and outputs are JSON texts (lists crash its harness).
    calls = taco_to_lcb_format({"inputs": ["1\\n2", "5\\n5"], "outputs": ["3", "10"], "fn_name": "add"})
    passed, details = await sandbox_check_correctness(calls, "def add(a, b):\\n    return a + b", timeout=6)
    assert passed is True, details
    passed, details = await sandbox_check_correctness(tests, "while True: pass", timeout=1)
    assert passed is False, details
asyncio.run(main())
print("tinker-cookbook: OK")
"""


@pytest.mark.parametrize("client", ["sandbox_fusion", "verl", "tinker"])
def test_the_rl_clients_score_against_codeexec_unchanged(
    client: str, client_python: str, service: Server, tmp_path: Path
) -> None:
    script = {"sandbox_fusion": SANDBOX_FUSION, "verl": VERL, "tinker": TINKER}[client]
    assert run_client(client_python, script, service.url, tmp_path).strip().endswith(": OK")
