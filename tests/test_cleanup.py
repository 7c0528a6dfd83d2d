"""Nothing a candidate starts outlives it: every process is dead and reaped before the result is back.

Survivors are looked for from outside the runner, by markers: an exec'd program carries a per-test
marker as its argv[0], and every process forked from the candidate's interpreter carries that run's
working directory, as its own (the escapes do not chdir) and, started fresh, in its arguments (the
runner script lies in it). A zombie has neither, but it would be a child of this process (the host,
a subreaper): none may be left either, but for the idle zygotes of isolation "fork".
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from codeexec.protocol.result import RunResult
from codeexec.protocol.settings import get_settings
from codeexec.worker.process import proctree
from codeexec.worker.process.proctree import CandidateTree, become_subreaper, children
from codeexec.worker.process.runner import run_candidate
from codeexec.worker.process.zygote import idle_pids as zygote_pids
from helpers import HANG_S, ROOT, processes_with, refusing_interpreter, stress, wait_for_orphans

REPETITIONS = stress(20, 200)
pytestmark = pytest.mark.usefixtures("isolation")


def skip_without_namespace() -> None:
    result = run_candidate("", ["assert True"], pid_namespace="require")
    if result.exit_code != "pass":
        pytest.skip(f"the kernel refuses a PID namespace here: {result.detail}")


@pytest.fixture(params=["require", "off"], ids=["pid-namespace", "no-namespace"])
def pid_namespace(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """With the namespace (where the kernel allows it), and without: the best-effort fallback."""
    if request.param == "require":
        skip_without_namespace()
    monkeypatch.setenv("CODEEXEC_PID_NAMESPACE", request.param)
    get_settings.cache_clear()
    yield request.param
    get_settings.cache_clear()


class Probe:
    """Runs candidates that report their working directory, and finds what they left behind."""

    def __init__(self, directory: Path) -> None:
        # What this process had started before (an earlier test's zombie, where tests share a process:
        # pytest-xdist's workers) is no candidate's.
        self.before = set(children("self"))
        self.marker = f"codeexec-test-{uuid.uuid4().hex}"
        self.report = directory / "workdirs"
        self.prelude = f"import os, signal, sys, time\nopen({str(self.report)!r}, 'a').write(os.getcwd() + '\\n')\n"

    def run(self, code: str, assertions: list[str] | None = None, **limits: object) -> RunResult:
        """Without the sandbox (worker/candidate/sandbox.py): the escapes exec programs, and the report lies outside
        the working directory. tests/test_sandbox.py looks for survivors with the sandbox on."""
        code = code.replace("MARKER", repr(self.marker))
        assertions = ["assert f() == 1"] if assertions is None else assertions
        return run_candidate(self.prelude + code, assertions, **{"sandbox": "off", **limits})

    def survivors(self) -> list[str]:
        """Every process still carrying a marker (in its arguments, or a working directory as its own),
        and every child of ours (zombies included) but the idle zygotes."""
        workdirs = self.report.read_text().split() if self.report.exists() else []
        ours = [pid for pid in children("self") if pid not in zygote_pids() and pid not in self.before]
        return [f"child of the host: {pid}: {_arguments(pid)}" for pid in ours] + processes_with(
            self.marker, *workdirs, cwd=workdirs
        )


def _arguments(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")[:200]
    except OSError:
        return "(gone)"


@pytest.fixture
def probe(tmp_path: Path) -> Probe:
    become_subreaper()  # as the runner makes every host: orphans come back here, where they can be seen
    return Probe(tmp_path)


# ---- escapes, each 20 times (200 in bench/stress.py) -----------------------------------------------------

ESCAPES = {
    # The report that opened this work: a new session, a double fork, an exec, and a verdict that does
    # not wait for any of it.
    "double fork and setsid": """
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv('/bin/sleep', [MARKER, '39'])
            os._exit(0)
        def f():
            return 1
    """,
    # A process in a session of its own forking as fast as it can while the cleanup kills it (at most
    # 40 children, each an exec'd sleep): the verdict is given once it is under way.
    "fork while being killed": """
        r, w = os.pipe()
        if os.fork() == 0:
            os.setsid()
            for i in range(40):
                if os.fork() == 0:
                    os.execv('/bin/sleep', [MARKER, '39'])
                if i == 2:
                    os.write(w, b'x')
            time.sleep(39)
        os.read(r, 1)
        def f():
            return 1
    """,
    # A grandchild that ignores SIGTERM and SIGHUP, leaves the session and sleeps.
    "grandchild ignoring SIGTERM": """
        if os.fork() == 0:
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                signal.signal(signal.SIGHUP, signal.SIG_IGN)
                os.setsid()
                time.sleep(39)
            os._exit(0)
        def f():
            return 1
    """,
}


@pytest.mark.once  # a stress loop
@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_nothing_survives_an_escape_every_time(
    escape: str, candidate_interpreter: str, pid_namespace: str, probe: Probe
) -> None:
    if pid_namespace == "off" and candidate_interpreter != sys.executable:
        pytest.skip("the fallback is the host's work: tried with this Python only")
    code = textwrap.dedent(ESCAPES[escape])
    for repetition in range(REPETITIONS):
        result = probe.run(code)
        assert result.exit_code == "pass", (repetition, result)
        assert not (left := probe.survivors()), (repetition, left)


def test_a_process_whose_environment_cannot_be_read_is_told_by_its_state(monkeypatch: pytest.MonkeyPatch) -> None:
    # Run without privilege, the host cannot read the environment of a process that is exiting (its
    # memory is gone: EACCES): a fork of the candidate's that left its session, exiting while the
    # clean-up looked, was taken for another's, and the orphans it left outlived the run (6 runs of 800
    # of test_sandbox's double fork without a namespace, as a user beside two busy loops; seen first in
    # the worker container). A zombie born during the run is the candidate's; a live process,
    # undecided until it can be read.
    real_open = open

    def unreadable(path: str, *arguments: object, **keywords: object) -> object:
        if str(path).endswith("/environ"):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *arguments, **keywords)

    tree = CandidateTree()
    tree.root = subprocess.Popen(["true"])  # a root whose session neither child is in
    tree.root.wait()
    exiting = os.fork()
    if exiting == 0:
        os._exit(0)
    living = subprocess.Popen(["sleep", "30"])
    try:
        hang = time.monotonic() + HANG_S
        while Path(f"/proc/{exiting}/stat").read_text().rpartition(") ")[2].split()[0] != "Z":
            assert time.monotonic() < hang
            time.sleep(0.001)
        monkeypatch.setattr(proctree, "open", unreadable, raising=False)
        assert tree.belongs(exiting) is True
        assert tree.belongs(living.pid) is None
    finally:
        os.waitpid(exiting, 0)
        living.kill()
        living.wait()


def test_a_descendant_that_clears_its_environment_is_gone_too(probe: Probe) -> None:
    # Invisible to the fallback (no token, no session of the candidate's): only the namespace holds it.
    skip_without_namespace()
    code = textwrap.dedent("""
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                os.execve('/bin/sleep', [MARKER, '39'], {})
            os._exit(0)
        def f():
            return 1
    """)
    for repetition in range(REPETITIONS):
        assert probe.run(code, pid_namespace="require").exit_code == "pass"
        assert not (left := probe.survivors()), (repetition, left)


# ---- where the kernel refuses -----------------------------------------------------------------------------


def test_a_refused_namespace_is_reported_and_required_means_required(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # An interpreter whose unshare() fails as a kernel that refuses namespaces makes it fail (as in
    # a container under Docker's default seccomp profile): the runner script runs under it unchanged.
    refusing = refusing_interpreter(tmp_path)
    monkeypatch.setattr("codeexec.worker.process.watch._reported", set())
    result = run_candidate("def f():\n    return 1\n", ["assert f() == 1"], interpreter=refusing, sandbox="off")
    assert result.exit_code == "pass"
    expected = "candidates run without pid_namespace: the kernel refused: [Errno 1] Operation not permitted"
    assert [r.getMessage() for r in caplog.records].count(expected + " (see docs/security.md)") == 1
    run_candidate("def f():\n    return 1\n", ["assert f() == 1"], interpreter=refusing, sandbox="off")
    assert len([r for r in caplog.records if r.getMessage().startswith(expected)]) == 1  # once per process
    limits = {"interpreter": refusing, "pid_namespace": "require", "sandbox": "off"}
    result = run_candidate("x = 1", ["assert x == 1"], **limits)
    assert result.exit_code == "infra_error"
    assert "required, and not in place: pid_namespace (refused: [Errno 1] Operation not permitted)" in result.detail


# ---- every ending --------------------------------------------------------------------------------------


def test_a_candidate_that_times_out_is_gone(pid_namespace: str, probe: Probe) -> None:
    result = probe.run("signal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(3600)\n", timeout_s=0.3)
    assert result.exit_code == "timeout"
    assert not probe.survivors()


def test_its_children_are_gone_however_it_ends(pid_namespace: str, probe: Probe) -> None:
    forks = "if os.fork() == 0:\n    time.sleep(3600)\ndef f():\n    return 1\n"
    endings = {
        "": "pass",  # finishes normally, the child still running
        "os._exit(0)\n": "error",  # leaves before the verdict
        "os.kill(os.getpid(), signal.SIGKILL)\n": "error",  # killed
        "time.sleep(3600)\n": "timeout",
        "print('x' * 300_000)\n": "error",  # output overflow
    }
    for ending, outcome in endings.items():
        assert probe.run(forks + ending, timeout_s=0.5).exit_code == outcome, ending
        assert not probe.survivors(), ending


def test_a_child_left_as_a_zombie_is_reaped(pid_namespace: str, probe: Probe) -> None:
    code = "if os.fork() == 0:\n    os._exit(0)\ndef f():\n    return 1\n"
    assert probe.run(code).exit_code == "pass"
    assert not probe.survivors()


def test_a_candidate_that_kills_itself_dies_of_it(pid_namespace: str, probe: Probe) -> None:
    # It is not PID 1, which ignores the signals it has no handler for.
    result = probe.run("os.kill(os.getpid(), signal.SIGTERM)\n")
    assert result.exit_code == "error"
    assert result.detail == "the interpreter was killed by SIGTERM before the runner finished"


def test_a_candidate_cannot_stop_its_init(probe: Probe) -> None:
    skip_without_namespace()
    code = "assert os.getpid() != 1\n"
    code += "for sig in (signal.SIGKILL, signal.SIGSTOP, signal.SIGINT, signal.SIGTERM):\n"
    code += "    try:\n        os.kill(os.getppid(), sig)\n    except OSError:\n        pass\n"
    code += "if os.fork() == 0:\n    time.sleep(3600)\ndef f():\n    return 1\n"
    assert probe.run(code, pid_namespace="require").exit_code == "pass"
    assert not probe.survivors()


def test_a_candidate_cannot_signal_its_host(probe: Probe) -> None:
    # Outside its namespace nothing has a pid it can name: this process's pid is no process there.
    skip_without_namespace()
    code = f"try:\n    os.kill({os.getpid()}, signal.SIGKILL)\nexcept ProcessLookupError:\n    pass\n"
    code += "def f():\n    return 1\n"
    assert probe.run(code, pid_namespace="require").exit_code == "pass"


def test_if_the_host_dies_the_candidate_and_its_children_die_too(pid_namespace: str, probe: Probe) -> None:
    code = probe.prelude + "if os.fork() == 0:\n    os.setsid()\n    time.sleep(3600)\ntime.sleep(3600)\n"
    script = f"from codeexec.worker.process.runner import run_candidate\nrun_candidate({code!r}, [], 30)"
    host = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, "CODEEXEC_PID_NAMESPACE": pid_namespace, "CODEEXEC_SANDBOX": "off"},  # as Probe.run
    )
    hang = time.monotonic() + HANG_S
    try:
        while not probe.report.exists() or not probe.report.read_text().endswith("\n"):
            assert host.poll() is None, "the host ended before its candidate started"
            assert time.monotonic() < hang, "the candidate never started"
            time.sleep(0.01)
    finally:
        host.send_signal(signal.SIGKILL)
        host.wait()
    wait_for_orphans()  # what the host left is re-parented to us: it must end on its own
    assert not probe.survivors()
