"""SandboxFusion's own runner tests, pointed at a server: `codeexec serve` (started here, on a private Valkey),
or any URL (SandboxFusion's own server, to compare).

The tests are SandboxFusion's files as they are (sandbox/tests/runners/test_python.py, test_pytest.py,
test_isolation.py, and test_<language>.py of each other language codeexec's /run_code runs: test_cpp.py,
test_java.py, ...; from a checkout of bytedance/SandboxFusion the caller has: they are Apache-2.0 code,
never copied into this repository), run in a throw-away virtualenv beside a conftest written here. It
makes their `TestClient(app)` an httpx client of the server's URL and loads their request and answer
models from the checkout itself (sandbox/runners/types.py, and the classes of sandbox/server/sandbox_api.py),
so what they send and check is SandboxFusion's. The test that asserts internet access
(test_isolation_network_external_access) is left out: it sends traffic off the machine.

    python bench/sandboxfusion_tests.py --sf-source DIR [--url URL] [--venv DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from service import codeexec_server

from codeexec.worker.languages import RUN_CODE

#: Python's and the isolation tests, and each other language's this server runs (RUN_CODE).
FILES = ("test_python.py", "test_pytest.py", "test_isolation.py", *(f"test_{name.lower()}.py" for name in RUN_CODE))
PACKAGES = ["pytest", "pytest-asyncio", "httpx", "pydantic", "fastapi"]

CONFTEST = '''
"""SandboxFusion's runner tests against SF_URL: TestClient is an httpx client of it, the models SandboxFusion's."""
import ast, os, sys, types
import httpx

SOURCE, URL = os.environ["SF_SOURCE"], os.environ["SF_URL"]


def package(name):
    module = types.ModuleType(name)
    module.__path__ = []
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)
    return module


package("sandbox"), package("sandbox.runners"), package("sandbox.server")
runner_types = types.ModuleType("sandbox.runners.types")
exec(compile(open(os.path.join(SOURCE, "sandbox/runners/types.py")).read(), "types.py", "exec"), runner_types.__dict__)
sys.modules["sandbox.runners.types"] = runner_types
for name, value in vars(runner_types).items():
    if not name.startswith("_"):
        setattr(sys.modules["sandbox.runners"], name, value)
# sandbox_api.py's classes (its models), without the server it imports.
path = os.path.join(SOURCE, "sandbox/server/sandbox_api.py")
tree = ast.parse(open(path).read())
kept = [
    node for node in tree.body
    if isinstance(node, ast.ClassDef)
    or (isinstance(node, ast.ImportFrom) and node.module in ("typing", "enum", "pydantic"))
]
api = types.ModuleType("sandbox.server.sandbox_api")
api.__dict__.update({k: v for k, v in vars(runner_types).items() if not k.startswith("__")})
exec(compile(ast.Module(body=kept, type_ignores=[]), path, "exec"), api.__dict__)
sys.modules["sandbox.server.sandbox_api"] = api
server = types.ModuleType("sandbox.server.server")
server.app = None
sys.modules["sandbox.server.server"] = server

import fastapi.testclient  # noqa: E402

fastapi.testclient.TestClient = lambda app=None, **_: httpx.Client(base_url=URL, timeout=120)
'''

INI = "[pytest]\naddopts = -p no:cacheprovider\nasyncio_mode = auto\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sf-source", type=Path, required=True, help="a checkout of bytedance/SandboxFusion")
    parser.add_argument("--url", help="a server to test (default: codeexec serve, started here)")
    parser.add_argument("--venv", type=Path, help="the test virtualenv, kept (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sf-tests-") as scratch:
        where = Path(scratch)
        venv = args.venv or where / "venv"
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *PACKAGES], check=True)
        (where / "conftest.py").write_text(CONFTEST)
        (where / "pytest.ini").write_text(INI)
        for name in FILES:
            shutil.copy(args.sf_source / "sandbox" / "tests" / "runners" / name, where / name)
        command = [str(venv / "bin" / "python"), "-m", "pytest", "-v", "-k", "not external_access", *FILES]

        def run(url: str) -> int:
            env = {**os.environ, "SF_SOURCE": str(args.sf_source.resolve()), "SF_URL": url}
            return subprocess.run(command, cwd=where, env=env).returncode

        if args.url:
            code = run(args.url)
        else:
            with codeexec_server(os.cpu_count() or 1) as url:
                code = run(url)
    sys.exit(code)


if __name__ == "__main__":
    main()
