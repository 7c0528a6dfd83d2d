"""The sandbox's relaxed posture (worker/candidate/sandbox.py), for problem sets whose tasks run programs and
talk to themselves over TCP (BigCodeBench): what it allows works, and every escape still fails, from the
candidate's own code and from a program it runs.

As in test_sandbox.py, each escape is checked from outside (no connection, no file, the process lives,
nothing left) and, where it can be, once with the sandbox off, where it gets through.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest
from test_sandbox import LIBC, assert_no_unix_connection, attempt, connections_after, refused, require_sandbox  # noqa: F401
from test_sandbox import tcp_server as tcp_server  # a fixture

from codeexec.worker.process.runner import run_candidate
from helpers import processes_with

pytestmark = pytest.mark.usefixtures("isolation", "candidate_interpreter")

RELAXED = {"posture": "relaxed", "deny_imports": False}


def in_program(script: str) -> str:
    """A body that runs `script` with /bin/sh and fails unless it exits 0."""
    return f"import subprocess\nsubprocess.run(['/bin/sh', '-c', {script!r}], check=True, capture_output=True)"


def test_programs_run_and_a_loopback_server_answers() -> None:
    body = (
        "import socket, subprocess, sys, threading\n"
        "assert subprocess.run(['sh', '-c', 'echo hi'], capture_output=True, text=True).stdout == 'hi\\n'\n"
        "assert os.system('true') == 0\n"
        "open('job.sh', 'w').write('#!/bin/sh\\necho ran\\n')\n"
        "os.chmod('job.sh', 0o755)\n"
        "assert subprocess.run(['./job.sh'], capture_output=True, text=True).stdout == 'ran\\n'\n"
        "server = socket.create_server(('localhost', 0))\n"
        "port = server.getsockname()[1]\n"
        "threading.Thread(target=lambda: server.accept()[0].sendall(b'ok'), daemon=True).start()\n"
        "client = f'import socket; print(socket.create_connection((\"127.0.0.1\", {port})).recv(2).decode())'\n"
        "assert subprocess.run([sys.executable, '-c', client], capture_output=True, text=True).stdout == 'ok\\n'\n"
        "assert subprocess.run(['python', '-c', 'import sys; print(sys.prefix)'], capture_output=True, text=True)"
        ".stdout.strip() == sys.prefix"
    )
    assert refused(attempt(body, **RELAXED)) is None
    assert refused(attempt(body)) is not None  # the strict posture: no program runs


@pytest.mark.parametrize("route", ["python", "program"])
def test_no_connection_reaches_a_server_on_the_host(tcp_server: tuple[int, list[socket.socket]], route: str) -> None:
    port, accepted = tcp_server
    connect = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
    if route == "python":
        body = connect.replace("; ", "\n")
    else:
        body = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {connect!r}], check=True)"
    assert refused(attempt(body, **RELAXED)) is not None
    assert connections_after(accepted, 1) == 0
    assert refused(attempt(body, sandbox="off", **RELAXED)) is None
    assert connections_after(accepted, 1) == 1


def test_no_program_reaches_a_unix_socket_on_the_host(tmp_path: Path) -> None:
    connect = "'import socket; socket.socket(socket.AF_UNIX).connect(' + repr(PATH) + ')'"
    body = f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {connect}], check=True)"
    assert_no_unix_connection(tmp_path, body, **RELAXED)


def test_no_program_writes_outside_its_directory(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    body = in_program(f"echo x > {outside}")
    assert refused(attempt(body, **RELAXED)) is not None
    assert not outside.exists()
    assert refused(attempt(body, sandbox="off", **RELAXED)) is None
    assert outside.read_text() == "x\n"


@pytest.mark.parametrize("path", ["HOME/.bashrc", "/proc/1/cmdline", "OTHER/solution.py"])
def test_no_program_reads_outside_what_it_needs(path: str) -> None:
    other = tempfile.mkdtemp(prefix="codeexec_")  # as the runner makes one for another candidate
    (Path(other) / "solution.py").write_text("def f(): return 1\n")
    path = path.replace("HOME", os.path.expanduser("~")).replace("OTHER", other)
    if not os.access(path, os.R_OK):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).touch()
    body = in_program(f"cat {path}")
    try:
        assert refused(attempt(body, **RELAXED)) is not None
        assert refused(attempt(body, sandbox="off", **RELAXED)) is None
    finally:
        shutil.rmtree(other)


def test_no_program_reads_another_process_environment() -> None:
    secret = "codeexec-secret-" + os.urandom(8).hex()
    holder = subprocess.Popen(["sleep", "60"], env={"PASSWORD": secret})
    try:
        body = in_program(f"cat /proc/{holder.pid}/environ")
        assert refused(attempt(body, pid_namespace="off", **RELAXED)) is not None
        assert refused(attempt(body, pid_namespace="off", sandbox="off", **RELAXED)) is None
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("pid_namespace", ["auto", "off"])
def test_no_program_signals_a_process_of_the_host(pid_namespace: str) -> None:
    victim = subprocess.Popen(["sleep", "60"])
    try:
        assert refused(attempt(in_program(f"kill -9 {victim.pid}"), pid_namespace=pid_namespace, **RELAXED))
        assert victim.poll() is None
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("pid_namespace", ["auto", "off"])
def test_nothing_a_program_starts_survives_the_candidate(pid_namespace: str) -> None:
    # A new session, a background job and an exec: the candidate goes on once both sleeps exist.
    code = (
        "import os, subprocess\n"
        "script = 'sleep 39 & echo up; exec sleep 39'\n"
        "job = subprocess.Popen(['setsid', 'sh', '-c', script], stdout=subprocess.PIPE, start_new_session=True)\n"
        "assert job.stdout.readline() == b'up\\n'\n"
    )
    result = run_candidate(code, ["assert False, os.getcwd()"], 30, pid_namespace=pid_namespace, **RELAXED)
    workdir = result.assertions[0].error.removeprefix("AssertionError: ")
    assert workdir.startswith("/")
    assert processes_with(cwd=[workdir]) == []


def test_a_program_holds_no_capability_and_gains_none() -> None:
    # no_new_privs: an executed setuid program gains nothing (the kernel ignores the bit). The program
    # asks the kernel itself: its own /proc/<pid> is not the candidate's, which Landlock lets it read.
    ask = (
        "import ctypes; libc = ctypes.CDLL(None, use_errno=True); "
        "header = (ctypes.c_uint32 * 2)(0x20080522, 0); sets = (ctypes.c_uint32 * 6)(); "
        "assert libc.capget(header, sets) == 0, ctypes.get_errno(); "
        "print(libc.prctl(39, 0, 0, 0, 0), *sets)"
    )
    body = (
        "import subprocess, sys\n"
        f"said = subprocess.run([sys.executable, '-c', {ask!r}], capture_output=True, text=True, check=True).stdout\n"
        "assert said.split() == ['1', '0', '0', '0', '0', '0', '0'], said"
    )
    assert refused(attempt(body, **RELAXED)) is None
    assert refused(attempt(body, sandbox="off", **RELAXED)) == "AssertionError"


def test_what_is_written_to_shared_memory_is_not_executed() -> None:
    body = (
        "import shutil, subprocess\n"
        "path = f'/dev/shm/codeexec-{os.getpid()}'\n"
        "shutil.copy('/bin/true', path)\n"
        "try:\n"
        "    subprocess.run([path], check=True)\n"
        "finally:\n"
        "    os.unlink(path)"
    )
    assert refused(attempt(body, **RELAXED)) == "PermissionError"
    assert refused(attempt(body, sandbox="off", **RELAXED)) is None


@pytest.mark.parametrize(
    "call",
    ["call('ptrace', 0, 0, 0, 0)", "call('mount', b'none', b'.', b'tmpfs', 0, 0)", "call('syscall', 321, 0, 0, 0)"],
    ids=["ptrace", "mount", "bpf"],
)
def test_the_calls_it_refuses_stay_refused(call: str) -> None:
    body = LIBC + f"try:\n    {call}\nexcept OSError as exc:\n    raise OSError(exc.errno, 'refused') from None"
    assert refused(attempt(body, **RELAXED)) == "PermissionError"
