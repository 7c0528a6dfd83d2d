"""Warm workers (producer/local/resident.py): kept between commands on the embedded default, and gone when
they should be: after the idle period, on Ctrl-C, on `codeexec stop`, and when the code or the
settings they were started with change. Real commands, a real Valkey and real Celery workers."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from codeexec.producer.local import resident
from codeexec.protocol.settings import RUN_SETTINGS, WORKER_SETTINGS, RunnerConfig, Settings
from helpers import ROOT, codeexec, private_env, processes_with

RIGHT = "    return any(abs(a - b) < threshold for i, a in enumerate(numbers) for b in numbers[i + 1 :])\n"
WRONG = "    return False\n"
# A candidate that waits for a file the test never writes: the run cannot finish on its own before
# the test interrupts it (six of them at 30 s each, two at a time).
WAITS = "    import os, time\n    while not os.path.exists('/nonexistent/flag'):\n        time.sleep(0.05)\n"
EVAL = [sys.executable, "-m", "codeexec.producer.entry.cli", "eval", "--problems", "humaneval"]
WAIT_S = 300.0  # for what must happen, not how fast it happens


def write_samples(path: Path, *completions: str) -> Path:
    lines = [json.dumps({"task_id": "HumanEval/0", "completion": text}) for text in completions]
    path.write_text("\n".join(lines) + "\n")
    return path


def evaluate(env: dict[str, str], samples: Path, *args: str) -> dict:
    done = codeexec(env, "eval", "--problems", "humaneval", "--samples", str(samples), "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def gone(pid: int) -> bool:
    """The process has exited (a zombie counts: this test process may be the subreaper that adopted it)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


def workers_of(pid: int) -> list[str]:
    """The Celery processes a resident started (their hostname names it)."""
    return processes_with(f"--hostname=local-{pid}@")


def wait_until(condition: object, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"still waiting after {WAIT_S:g} s for {what}"
        time.sleep(0.05)


def started_pids(data_dir: Path) -> list[int]:
    """The residents started in data_dir, from their log."""
    log = data_dir / "logs" / "resident.log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [int(line.split()[1].rstrip(":")) for line in lines if "worker(s) on" in line]


def test_a_second_command_uses_the_warm_workers(data_dir: Path, tmp_path: Path) -> None:
    env = private_env(data_dir)
    samples = write_samples(tmp_path / "two.jsonl", RIGHT, WRONG)
    first = evaluate(env, samples)
    state = resident.current(data_dir)
    assert state is not None and not gone(state.pid), "the workers stopped with the command"
    second = evaluate(env, samples)
    assert resident.current(data_dir) == state
    assert first["pass_at_k"] == second["pass_at_k"] == {"1": 0.5}
    assert len(started_pids(data_dir)) == 1
    assert [path.name for path in (data_dir / "logs").glob("worker-*.log")] == [f"worker-{state.pid}.log"]

    assert workers_of(state.pid), "no Celery worker names the resident"
    stopped = codeexec(env, "stop")
    assert stopped.returncode == 0 and "stopped" in stopped.stdout
    assert resident.current(data_dir) is None
    assert not (data_dir / "valkey.sock").exists(), "the private Valkey is still serving"
    # Celery's pool processes follow their main process by a parent-death signal: soon, not at once.
    wait_until(lambda: workers_of(state.pid) == [], "the resident's Celery processes to exit")
    wait_until(lambda: gone(state.pid), "the resident to exit")
    assert "no warm workers" in codeexec(env, "stop").stdout


@pytest.mark.once  # what the other passes cross, at length
def test_a_run_s_limits_go_with_it_to_the_warm_workers(data_dir: Path, tmp_path: Path) -> None:
    samples = write_samples(tmp_path / "two.jsonl", RIGHT, WRONG)
    evaluate(private_env(data_dir), samples)
    state = resident.current(data_dir)
    # A denied module (a run's own limit: settings.RUN_SETTINGS), and a variable of the shell's: the warm
    # workers serve the command, and deny the module to its candidates only.
    denies = write_samples(tmp_path / "denies.jsonl", "    import json\n" + RIGHT)
    out = tmp_path / "out.jsonl"
    env = private_env(data_dir, CODEEXEC_DENY_EXTRA='["json"]', FOO="1")
    assert evaluate(env, denies, "--per-sample", str(out))["pass_at_k"] == {"1": 0.0}
    assert "json" in out.read_text()
    assert evaluate(private_env(data_dir), denies)["pass_at_k"] == {"1": 1.0}
    assert resident.current(data_dir) == state
    assert len(started_pids(data_dir)) == 1


@pytest.mark.once  # what the other passes cross, at length
def test_another_path_to_the_same_python_uses_the_warm_workers(data_dir: Path, tmp_path: Path) -> None:
    here = Path(sys.executable)
    others = [here.parent / name for name in ("python", "python3", f"python3.{sys.version_info.minor}")]
    other = next((path for path in others if path.name != here.name and path.exists()), None)
    if other is None:
        pytest.skip(f"{here.parent} has no other name for this Python")
    samples = write_samples(tmp_path / "one.jsonl", RIGHT)
    evaluate(private_env(data_dir), samples)
    state = resident.current(data_dir)
    done = subprocess.run(
        [str(other), "-m", "codeexec.producer.entry.cli", "eval", "--problems", "humaneval", "--samples", str(samples)],
        env=private_env(data_dir), capture_output=True, text=True, timeout=WAIT_S,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert resident.current(data_dir) == state and len(started_pids(data_dir)) == 1


@pytest.mark.once  # what the other passes cross, at length
def test_the_workers_own_settings_replace_idle_warm_workers(data_dir: Path, tmp_path: Path) -> None:
    samples = write_samples(tmp_path / "one.jsonl", RIGHT)
    evaluate(private_env(data_dir), samples)
    old = resident.current(data_dir)
    assert old is not None
    done = codeexec(private_env(data_dir, CODEEXEC_MAX_ATTEMPTS="5"), "eval", "--problems", "humaneval",
                    "--samples", str(samples))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "the warm workers ran with CODEEXEC_MAX_ATTEMPTS=3: starting new ones" in done.stderr
    new = resident.current(data_dir)
    assert new is not None and new.pid != old.pid and new.identity and new.identity.settings["max_attempts"] == 5
    wait_until(lambda: gone(old.pid), "the old resident to exit")


@pytest.mark.once  # what the other passes cross, at length
def test_other_settings_wait_while_another_command_uses_the_warm_workers(data_dir: Path, tmp_path: Path) -> None:
    samples = write_samples(tmp_path / "one.jsonl", RIGHT)
    evaluate(private_env(data_dir), samples)
    state = resident.current(data_dir)
    assert state is not None
    with resident.using(data_dir) as users:  # another command, using them meanwhile
        command = subprocess.Popen(
            [*EVAL, "--samples", str(samples), "--json"],
            env=private_env(data_dir, CODEEXEC_MAX_ATTEMPTS="5"), stderr=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert command.stderr is not None
        line = command.stderr.readline()
        assert "run with CODEEXEC_MAX_ATTEMPTS=3, and another command is using them: waiting for it" in line, line
        # The number of workers alone keeps no command waiting: it joins.
        joined = evaluate(private_env(data_dir, CODEEXEC_WORKERS="1"), samples)
        assert joined["pass_at_k"] == {"1": 1.0}
        assert resident.current(data_dir) == state and not gone(state.pid) and command.poll() is None
        users.close()
    out, err = command.communicate(timeout=WAIT_S)
    assert command.returncode == 0, err
    assert json.loads(out)["pass_at_k"] == {"1": 1.0}
    assert "the warm workers ran with CODEEXEC_MAX_ATTEMPTS=3: starting new ones" in err
    wait_until(lambda: gone(state.pid), "the old resident to exit")


def test_the_code_is_part_of_the_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    before = resident.Identity.here(2, tmp_path)
    assert resident.Identity.here(2, tmp_path) == before
    assert resident.Identity.here(3, tmp_path).differences(before) == ["2 worker(s)"]
    copy = tmp_path / "copy"
    for path in resident.code_files(ROOT):
        (copy / path.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        (copy / path.relative_to(ROOT)).write_bytes(path.read_bytes())
    monkeypatch.setattr(resident, "ROOT", copy)
    assert resident.Identity.here(2, tmp_path) == before
    runner = copy / "worker" / "process" / "runner.py"  # a module of a sub-package counts too
    runner.write_text(runner.read_text() + "\n# changed\n")
    assert resident.Identity.here(2, tmp_path).differences(before) == ["another version of codeexec"]


def test_the_workers_stop_after_the_idle_period(data_dir: Path, tmp_path: Path) -> None:
    evaluate(private_env(data_dir, keep_warm_s=1), write_samples(tmp_path / "one.jsonl", RIGHT))
    [pid] = started_pids(data_dir)
    wait_until(lambda: gone(pid), "the resident to stop once idle")
    assert resident.current(data_dir) is None
    assert not (data_dir / "valkey.sock").exists()
    assert "idle for 1 s, stopping" in (data_dir / "logs" / "resident.log").read_text()


def interrupted_eval(env: dict[str, str], samples: Path) -> tuple[subprocess.Popen[str], str]:
    """An eval of candidates that never finish, stopped by Ctrl-C once its run is submitted; its run's name."""
    command = subprocess.Popen(
        [*EVAL, "--samples", str(samples), "--timeout", "30", "--json"],
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        # Ctrl-C as at a terminal: a shell that runs the tests in the background has them ignore
        # SIGINT, and Python leaves an ignored SIGINT ignored.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert command.stderr is not None
    line = command.stderr.readline()
    while line and not line.startswith("run "):  # what it said before it submitted
        line = command.stderr.readline()
    assert line, "the command ended before it submitted its run"
    command.send_signal(signal.SIGINT)
    assert command.wait(timeout=WAIT_S) == 130, command.stderr.read()
    return command, line.split()[1].rstrip(":")


def test_ctrl_c_stops_the_warm_workers(data_dir: Path, tmp_path: Path) -> None:
    env = private_env(data_dir)
    _, run = interrupted_eval(env, write_samples(tmp_path / "waits.jsonl", *[WAITS] * 6))
    assert resident.current(data_dir) is None
    [pid] = started_pids(data_dir)
    assert not (data_dir / "valkey.sock").exists()
    wait_until(lambda: workers_of(pid) == [], "the resident's Celery processes to exit")
    wait_until(lambda: gone(pid), "the resident to exit")
    status = codeexec(private_env(data_dir, keep_warm_s=0), "status", run)
    assert status.returncode == 0 and " / 6 samples done;" in status.stdout, status.stdout
    assert "(complete)" not in status.stdout


@pytest.mark.once  # what the other passes cross, at length
def test_ctrl_c_leaves_the_warm_workers_to_another_command(data_dir: Path, tmp_path: Path) -> None:
    env = private_env(data_dir)
    evaluate(env, write_samples(tmp_path / "one.jsonl", RIGHT))
    state = resident.current(data_dir)
    assert state is not None
    with resident.using(data_dir):  # another command, using them meanwhile
        interrupted_eval(env, write_samples(tmp_path / "waits.jsonl", *[WAITS] * 6))
        assert resident.current(data_dir) == state and not gone(state.pid)


@pytest.mark.once  # what the other passes cross, at length
def test_commands_that_start_together_share_one_resident(data_dir: Path, tmp_path: Path) -> None:
    env = private_env(data_dir)
    samples = write_samples(tmp_path / "two.jsonl", RIGHT, WRONG)
    command = [*EVAL, "--samples", str(samples), "--json"]
    running = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    reports = [json.loads(process.communicate(timeout=WAIT_S)[0]) for process in running]
    assert [process.returncode for process in running] == [0, 0, 0]
    assert [report["pass_at_k"] for report in reports] == [{"1": 0.5}] * 3
    assert len(started_pids(data_dir)) == 1


@pytest.mark.once  # what the other passes cross, at length
def test_a_server_another_command_started_is_left_to_it(data_dir: Path, tmp_path: Path) -> None:
    env = private_env(data_dir)
    server = subprocess.Popen(
        [sys.executable, "-m", "codeexec.producer.entry.cli", "server"], env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("serving ")
        report = evaluate(env, write_samples(tmp_path / "two.jsonl", RIGHT, WRONG))
        assert report["pass_at_k"] == {"1": 0.5}
        assert resident.current(data_dir) is None
        assert "served by a server another command started" in (data_dir / "logs" / "resident.log").read_text()
        assert server.poll() is None, "the command stopped a server it did not start"
    finally:
        server.terminate()
        try:
            server.wait(timeout=WAIT_S)
        finally:
            server.kill()
            server.wait()


def test_every_runner_setting_is_a_run_s_or_the_worker_s() -> None:
    """A run carries its limits to any worker; the worker's own settings make the warm workers' identity. A
    new RunnerConfig field must be one or the other (hash_seed and isolation are RunMeta fields of their own)."""
    assert not RUN_SETTINGS & WORKER_SETTINGS
    assert Settings.model_fields.keys() >= RUN_SETTINGS | WORKER_SETTINGS
    assert RunnerConfig.model_fields.keys() - RUN_SETTINGS - WORKER_SETTINGS == {"hash_seed", "isolation"}
