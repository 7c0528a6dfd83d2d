"""The kernel-enforced sandbox (worker/candidate/sandbox.py): every escape the denylist lets through fails.

Each escape is checked from outside the candidate as well (the server saw no connection, the file was
not written, the process lives, no process is left), and once with the sandbox off, where it gets
through: each check could fail. Under every supported Python, in both isolation modes.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeexec.protocol.result import RunResult
from codeexec.worker.candidate.sandbox import PROTECTIONS
from codeexec.worker.process.proctree import ticks
from codeexec.worker.process.runner import run_candidate
from helpers import processes_with

pytestmark = pytest.mark.usefixtures("isolation", "candidate_interpreter")

# What a candidate's f() returns: how the attempt ended, as the name of what it raised, or "done".
ATTEMPT = """
def f():
    try:
        attempt()
    except BaseException as exc:
        return type(exc).__name__
    return "done"
"""


def defining(body: str) -> str:
    """Code that defines attempt(), whose body is `body`."""
    return "import os, sys\ndef attempt():\n" + "".join(f"    {line}\n" for line in body.splitlines())


def attempt(body: str, **limits: object) -> RunResult:
    """Run `body` as attempt(); fails the test unless the candidate itself ran (it then returns "done"
    or what it raised, in the detail of a failed assertion)."""
    result = run_candidate(defining(body) + ATTEMPT, ["assert f() == 'done', f()"], 30, **limits)
    assert result.exit_code in ("pass", "assertion_fail"), result
    return result


def refused(result: RunResult) -> str | None:
    """What the attempt raised, or None if it went through."""
    if result.exit_code == "pass":
        return None
    return result.assertions[0].error.removeprefix("AssertionError: ")


@pytest.fixture(autouse=True)
def require_sandbox() -> None:
    result = run_candidate("", [], sandbox="require")
    if result.exit_code != "pass":
        pytest.skip(f"this kernel refuses part of the sandbox: {result.detail}")
    assert all(result.protections[name] == "on" for name in PROTECTIONS)


@pytest.fixture
def tcp_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A listening TCP socket on the loopback, and the connections it accepted."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.05)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept)
    thread.start()
    yield listener.getsockname()[1], accepted
    stop.set()
    thread.join()
    listener.close()


def connections_after(accepted: list[socket.socket], count: int) -> int:
    """How many connections the server accepted once `count` is reached or 2 s of quiet have passed (a
    connection made went through connect() before the run ended, so it is in the backlog by now)."""
    for _ in range(40):
        if len(accepted) >= count:
            break
        threading.Event().wait(0.05)
    return len(accepted)


@pytest.mark.parametrize(
    "route",
    [
        # socket, reached through a module of the installed Python that imports it
        "import multiprocessing.connection as c\ns = c.socket.socket()\ns.connect(('127.0.0.1', PORT))",
        # _socket, loaded by the import machinery recovered through object.__subclasses__(): from a file,
        # or built into the interpreter (Debian's python3)
        "finders = {k.__name__: k for k in ().__class__.__base__.__subclasses__()}\n"
        "spec = finders['PathFinder'].find_spec('_socket') or finders['BuiltinImporter'].find_spec('_socket')\n"
        "_socket = spec.loader.create_module(spec)\n"
        "spec.loader.exec_module(_socket)\n"
        "s = _socket.socket()\ns.connect(('127.0.0.1', PORT))",
    ],
    ids=["socket-through-multiprocessing", "_socket-through-subclasses"],
)
def test_no_connection_reaches_a_server_on_the_host(tcp_server: tuple[int, list[socket.socket]], route: str) -> None:
    port, accepted = tcp_server
    body = route.replace("PORT", str(port))
    assert refused(attempt(body)) is not None
    assert connections_after(accepted, 1) == 0
    assert refused(attempt(body, sandbox="off")) is None  # the same route, no sandbox: it connects
    assert connections_after(accepted, 1) == 1


def test_no_connection_reaches_a_unix_socket_on_the_host(tmp_path: Path) -> None:
    # A socket file (the private Valkey's, Docker's) is not behind the network namespace.
    connect = "import multiprocessing.connection as c\ns = c.socket.socket(c.socket.AF_UNIX)\ns.connect(PATH)"
    assert_no_unix_connection(tmp_path, connect)


def assert_no_unix_connection(tmp_path: Path, body: str, **limits: object) -> None:
    """`body` (PATH: a socket file's, quoted) reaches no listener on a socket file, and with the sandbox off does."""
    path = tmp_path / "server.sock"
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(path))
    listener.listen()
    listener.settimeout(0.05)
    path.chmod(0o777)
    body = body.replace("PATH", repr(str(path)))
    try:
        assert refused(attempt(body, **limits)) is not None
        with pytest.raises(TimeoutError):
            listener.accept()
        assert refused(attempt(body, sandbox="off", **limits)) is None
        listener.accept()[0].close()
    finally:
        listener.close()


@pytest.mark.parametrize(
    "route",
    [
        "os.execv('/bin/sh', ['sh', '-c', 'echo x > MARKER'])",
        "os.posix_spawn('/bin/sh', ['sh', '-c', 'echo x > MARKER'], {})\nos.wait()",
        # _posixsubprocess, through subprocess, which asyncio imports
        "import asyncio.base_events as b\nb.subprocess.run(['/bin/sh', '-c', 'echo x > MARKER'])",
    ],
    ids=["execv", "posix_spawn", "_posixsubprocess"],
)
def test_no_program_runs(tmp_path: Path, route: str) -> None:
    marker = tmp_path / "ran"
    body = route.replace("MARKER", str(marker))
    assert refused(attempt(body)) == "PermissionError"
    assert not marker.exists()
    run_candidate(defining(body) + "attempt()\n", [], 30, sandbox="off")
    assert marker.exists()  # the same route, no sandbox: the program ran (execv ends the candidate)


def test_no_file_outside_its_directory_is_written_and_its_own_are(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    body = f"open({str(outside)!r}, 'w').write('x')"
    assert refused(attempt(body)) == "PermissionError"
    assert not outside.exists()
    assert refused(attempt(body, sandbox="off")) is None
    assert outside.read_text() == "x"
    own = "os.mkdir('d')\nopen('d/x', 'w').write('y')\nos.rename('d/x', 'y')\nassert open('y').read() == 'y'"
    assert refused(attempt(own)) is None


@pytest.mark.parametrize("path", ["/etc/passwd", "HOME/.bashrc", "/proc/1/cmdline", "OTHER/solution.py"])
def test_no_file_outside_what_python_needs_is_read(path: str, tmp_path: Path) -> None:
    # OTHER: a directory as the runner makes one for another candidate.
    other = tempfile.mkdtemp(prefix="codeexec_")
    (Path(other) / "solution.py").write_text("def f(): return 1\n")
    path = path.replace("HOME", os.path.expanduser("~")).replace("OTHER", other)
    if not os.access(path, os.R_OK):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).touch()
    body = f"open({path!r}, 'rb').read()"
    try:
        assert refused(attempt(body)) == "PermissionError"
        assert refused(attempt(body, sandbox="off")) is None
    finally:
        shutil.rmtree(other)


@pytest.mark.parametrize("pid_namespace", ["auto", "off"])
def test_no_other_process_environment_is_read(pid_namespace: str) -> None:
    secret = "codeexec-secret-" + os.urandom(8).hex()
    holder = subprocess.Popen(["sleep", "60"], env={"PASSWORD": secret})
    try:
        body = f"data = open('/proc/{holder.pid}/environ', 'rb').read()\nassert {secret.encode()!r} not in data"
        assert refused(attempt(body, pid_namespace=pid_namespace)) == "PermissionError"
        # With neither the sandbox nor the namespaces (a user namespace keeps it out too), it reads it,
        # and the assertion in the body says so.
        assert refused(attempt(body, pid_namespace="off", sandbox="off")) == "AssertionError"
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("pid_namespace", ["auto", "off"])
def test_no_signal_reaches_a_process_of_the_host(pid_namespace: str) -> None:
    # With a PID namespace the process has no pid in the candidate's world; without one, Landlock's
    # signal scope refuses it (the sandbox's own protection).
    victim = subprocess.Popen(["sleep", "60"])
    try:
        body = f"os.kill({victim.pid}, 9)"
        assert refused(attempt(body, pid_namespace=pid_namespace)) in ("PermissionError", "ProcessLookupError")
        assert victim.poll() is None
        if pid_namespace == "off":
            # The host's clean-up takes a zombie child born in a candidate's first clock tick for the
            # candidate's (worker/process/proctree.py): the victim must be older, or the run reaps it.
            started = int(Path(f"/proc/{victim.pid}/stat").read_text().rpartition(") ")[2].split()[19])
            while ticks() <= started:
                time.sleep(0.001)
            assert refused(attempt(body, pid_namespace="off", sandbox="off")) is None
            assert victim.wait(timeout=30) == -signal.SIGKILL
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize("pid_namespace", ["auto", "off"])
def test_nothing_a_sandboxed_candidate_starts_survives_it(pid_namespace: str) -> None:
    # A double fork and a new session, with no exec (refused): found by working directory, which the
    # candidate names in its verdict.
    code = (
        "import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(39)\n"
        "    os._exit(0)\n"
    )
    result = run_candidate(code, ["assert False, os.getcwd()"], 30, pid_namespace=pid_namespace)
    workdir = result.assertions[0].error.removeprefix("AssertionError: ")
    assert workdir.startswith("/")
    assert processes_with(cwd=[workdir]) == []


@pytest.mark.parametrize("pid_namespace", ["auto", "off"])
def test_the_candidate_holds_no_capability(pid_namespace: str) -> None:
    body = (
        "status = open('/proc/self/status').read().splitlines()\n"
        "held = [line for line in status if line.startswith(('CapEff', 'CapPrm', 'CapAmb'))]\n"
        "assert not any(int(line.split()[1], 16) for line in held), held"
    )
    assert refused(attempt(body, pid_namespace=pid_namespace)) is None
    if pid_namespace == "auto":  # the sandbox off: in the user namespace it is made in, it holds them all
        assert refused(attempt(body, sandbox="off")) == "AssertionError"


LIBC = """finder = [k for k in ().__class__.__base__.__subclasses__() if k.__name__ == 'PathFinder'][0]
spec = finder.find_spec('_ctypes')
_ctypes = spec.loader.create_module(spec)
spec.loader.exec_module(_ctypes)
class Function(_ctypes.CFuncPtr):
    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
class Libc:
    _handle = _ctypes.dlopen(None)
def call(name, *arguments):
    if Function((name, Libc))(*arguments) == -1:
        raise OSError(_ctypes.get_errno(), name)
"""


@pytest.mark.parametrize(
    ("call", "refused_only_here"),
    [
        ("call('unshare', 0x10000000)", True),  # a user namespace of its own
        ("call('ptrace', 0, 0, 0, 0)", True),  # PTRACE_TRACEME
        ("call('syscall', 250, 0, -3, 0)", True),  # keyctl(KEYCTL_GET_KEYRING_ID, the session keyring)
        ("call('syscall', 308, 0, 0)", False),  # setns
        ("call('mount', b'none', b'.', b'tmpfs', 0, 0)", False),
        ("call('syscall', 321, 0, 0, 0)", False),  # bpf
        ("call('syscall', 298, 0, 0, -1, -1, 0)", False),  # perf_event_open
    ],
    ids=["unshare", "ptrace", "keyctl", "setns", "mount", "bpf", "perf_event_open"],
)
def test_no_call_that_reaches_past_its_processes_is_made(call: str, refused_only_here: bool) -> None:
    # With libc in hand (_ctypes, recovered through object.__subclasses__()), the kernel still refuses.
    body = LIBC + f"try:\n    {call}\nexcept OSError as exc:\n    raise OSError(exc.errno, 'refused') from None"
    assert refused(attempt(body)) == "PermissionError"  # EPERM
    if refused_only_here:  # without the sandbox the call is made: the check above could fail
        control = refused(attempt(body, sandbox="off"))
        if control is not None and refused_to_every_process(body):
            pytest.skip(f"the control without the sandbox: {call} is refused to every process here (a container)")
        assert control is None


def refused_to_every_process(body: str) -> bool:
    """Whether a plain Python process, not started by the runner, is refused what `body` does too (as a
    container's seccomp profile refuses ptrace and keyctl)."""
    plain = subprocess.run([sys.executable, "-I", "-c", defining(body) + "attempt()\n"], capture_output=True, text=True)
    return plain.returncode != 0 and "PermissionError" in plain.stderr


def test_ordinary_programs_still_run() -> None:
    code = """
import datetime, hashlib, json, multiprocessing, os, random, tempfile, threading, zoneinfo

def work():
    with open("data.txt", "w") as out:
        out.write("hello")
    assert open("data.txt").read() == "hello"
    os.makedirs("sub/dir")
    with tempfile.TemporaryDirectory() as where, tempfile.NamedTemporaryFile("w+") as named:
        named.write("x")
        named.flush()
        assert os.path.dirname(named.name) == os.getcwd()
        open(os.path.join(where, "f"), "w").write("y")
    found = []
    threads = [threading.Thread(target=found.append, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(found) == [0, 1, 2, 3]
    context = multiprocessing.get_context("fork")
    with context.Pool(2) as pool:
        assert pool.map(abs, range(-2, 1)) == [2, 1, 0]  # the candidate's own functions do not pickle
    queue = context.Queue()
    process = context.Process(target=queue.put, args=(42,))
    process.start()
    assert queue.get(timeout=30) == 42
    process.join()
    paris = datetime.datetime(2024, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
    assert paris.utcoffset() == datetime.timedelta(hours=2)
    assert datetime.datetime.now(datetime.timezone.utc).tzinfo is not None
    assert 0 <= random.random() < 1 and len(os.urandom(8)) == 8
    assert hashlib.sha256(b"x").hexdigest().startswith("2d71")
    assert json.loads(json.dumps({"a": 1})) == {"a": 1}
    assert os.cpu_count() >= 1
    print("to stdout")
    return 1
"""
    result = run_candidate(code, ["assert work() == 1"], 30, sandbox="require")
    assert result.exit_code == "pass", result
    assert all(result.protections[name] == "on" for name in PROTECTIONS)
