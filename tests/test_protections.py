"""Honest status: what candidates run under is probed, logged, recorded with each run and printed by
`codeexec doctor`; a protection the kernel refuses is reported, and `require` means required."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from codeexec.worker.process.protections import NAMES
from codeexec.worker.process.runner import run_candidate
from helpers import HANG_S, ROOT, Worker, codeexec, refusing_interpreter, report, write_jsonl

ALL_ON = " ".join(f"{name}=on" for name in NAMES)


@pytest.fixture
def refusing(tmp_path: Path) -> str:
    return refusing_interpreter(tmp_path)


@pytest.mark.usefixtures("isolation")
def test_a_refused_protection_is_reported_and_require_means_required(
    refusing: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("codeexec.worker.process.watch._reported", set())
    result = run_candidate("x = 1", ["assert x == 1"], interpreter=refusing)
    assert result.exit_code == "pass"
    assert result.protections["network"] == "refused: [Errno 1] Operation not permitted"
    for name in ("filesystem", "syscalls", "signals", "capabilities"):
        assert result.protections[name].startswith("refused: import of _ctypes halted"), result.protections
    logged = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("candidates run without syscalls: the kernel refused: import of _ctypes") for m in logged)
    result = run_candidate("x = 1", ["assert x == 1"], interpreter=refusing, sandbox="require", pid_namespace="off")
    assert result.exit_code == "infra_error"
    assert "required, and not in place: network (refused: [Errno 1] Operation not permitted)" in result.detail
    assert run_candidate("x = 1", ["assert x == 1"], sandbox="require").exit_code == "pass"  # where it is in place


def test_doctor_prints_the_protections_and_fails_when_required_ones_are_missing(
    env: dict[str, str], refusing: str
) -> None:
    done = codeexec(env, "doctor")
    assert done.returncode == 0, done.stderr
    modes = [f"{isolation}{posture}" for posture in ("", ", relaxed posture", ", programs posture")
             for isolation in ("fork", "fresh")]  # fmt: skip
    for mode in modes:
        assert f"isolation {mode}:" in done.stdout
    for name in NAMES:
        assert [line.split() for line in done.stdout.splitlines()].count([name, "on"]) == len(modes), done.stdout
    # Each relaxation of the relaxed posture is named (docs/security.md says what each allows).
    assert "  - no import denylist" in done.stdout and "  - execve: the system's programs" in done.stdout
    assert "loopback is up" in done.stdout and "/proc/meminfo" in done.stdout
    refused = codeexec({**env, "CODEEXEC_INTERPRETER": refusing, "CODEEXEC_SANDBOX": "require"}, "doctor")
    assert refused.returncode == 1
    assert "required, and not in place (isolation fork): network (refused:" in refused.stderr
    assert "network        refused: [Errno 1] Operation not permitted" in refused.stdout


def test_a_worker_logs_its_protections_and_does_not_start_without_required_ones(
    env: dict[str, str], refusing: str, start_worker: Callable[..., Worker]
) -> None:
    worker = start_worker("w1")
    logged = f"candidates (isolation fork) run under: {', '.join(NAMES)}"
    hang = time.monotonic() + HANG_S  # the probe's zygote can pass for a pool process: wait for the line
    while logged not in worker.log.read_text():
        assert time.monotonic() < hang, worker.log.read_text()
        time.sleep(0.05)
    refused = subprocess.run(
        [sys.executable, "-m", "codeexec.producer.entry.cli", "worker", "--concurrency=1"],
        env={**env, "CODEEXEC_INTERPRETER": refusing, "CODEEXEC_SANDBOX": "require"},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert refused.returncode != 0
    assert "required, and not in place here: network (refused: [Errno 1] Operation not permitted)" in refused.stderr
    assert "the worker does not start" in refused.stderr


def test_the_report_says_what_each_host_ran_candidates_under(
    env: dict[str, str], tmp_path: Path, start_worker: Callable[..., Worker]
) -> None:
    problems = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "t", "assertions": ["assert f() == 1"]}])
    samples = write_jsonl(tmp_path / "s.jsonl", [{"task_id": "t", "completion": "def f():\n    return 1\n"}] * 5)
    start_worker("w1")
    assert codeexec(env, "submit", "--problems", str(problems), "--samples", str(samples), "--run", "r").returncode == 0
    assert codeexec(env, "status", "r", "--wait").returncode == 0
    assert report(env, "r")["protections"] == {socket.gethostname(): {ALL_ON: 5}}
    shown = codeexec(env, "report", "r")
    assert f"sandbox on host {socket.gethostname()}" in shown.stdout
    assert "all on: pid_namespace, network, filesystem, syscalls, signals, capabilities (5 samples)" in shown.stdout
