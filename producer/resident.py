"""Warm workers: the private Valkey and local workers, kept between commands and stopped when idle.

Starting them costs a command about two seconds (Celery's boot, each pool process's zygote), most of
the time a small evaluation takes. So on the embedded default, a command that runs jobs attaches to
the data directory's *resident*: a detached process that starts the server and the workers and keeps
them until no command has used them for ``keep_warm_s`` seconds (``CODEEXEC_KEEP_WARM_S``; 0 turns
this off, and the command starts and stops its own, as ``backend()`` always did).

- A resident serves one version of codeexec with one environment and one worker count (its
  fingerprint): a command that differs in any of them stops it and starts its own.
- Ctrl-C in a command stops the resident, as it stops a command's own workers, unless another
  command is using it (they share its workers, and the queue).
- A resident never joins a server some other command started (that command would stop the server
  under it): the command then starts its own workers, as before.
- ``codeexec stop`` stops it now.

Files in the data directory, all named here:

- ``resident.lock``: held exclusively by the resident for its whole life, so a live one is known
  without trusting a pid;
- ``resident.json``: its pid, fingerprint and URL, written once it serves, removed before it stops;
- ``resident.users``: every command using the private Valkey holds it shared; the resident stops
  only once it can take it exclusively (no command attached) and has been idle long enough, and
  holds it while it stops, so that a command arriving then waits and starts the next one;
- ``resident.spawn``: held while a command decides whether to start one, so two commands that
  arrive together start one resident, not two;
- ``resident.probe``: held while the resident, or a command on Ctrl-C, tries resident.users
  exclusively: a command's try turns its shared lock exclusive, which lets go of the shared one for a
  moment, and the resident's try must not take that moment for an idle one;
- ``logs/resident.log``: what each resident did (its workers log to ``logs/worker-<its pid>.log``).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO

from pydantic import BaseModel, ValidationError

from codeexec.producer.inputs import InputError
from codeexec.producer.lifetime import Stopped, stop_on_sigterm
from codeexec.producer.server import EmbeddedServer
from codeexec.producer.workers import LocalWorkers
from codeexec.worker import environments

ROOT = Path(__file__).resolve().parents[1]
_LOCK, _STATE, _USERS = "resident.lock", "resident.json", "resident.users"
_SPAWN, _PROBE = "resident.spawn", "resident.probe"
_POLL_S = 0.01
_IDLE_CHECK_S = 0.5
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 120.0  # the workers' warm then cold shutdown, then the server's
#: Variables that differ between shells but change nothing a worker or a candidate does.
_VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "PYTEST_CURRENT_TEST"})


class ResidentState(BaseModel):
    pid: int
    fingerprint: str
    url: str


def fingerprint(workers: int, data_dir: Path | None = None) -> str:
    """What the resident's workers were started with: this Python, codeexec's code, the environment
    the workers and their candidates inherit, how many there are, and the environments built in the data
    directory (a worker serves those it found at its start: worker/environments.py)."""
    digest = hashlib.sha256(f"{sys.executable}\0{workers}\0".encode())
    for built in environments.built(data_dir) if data_dir is not None else []:
        digest.update(built.model_dump_json().encode() + b"\0")
    for name, value in sorted(os.environ.items()):
        if name not in _VOLATILE:
            digest.update(f"{name}={value}\0".encode())
    for path in code_files(ROOT):
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def code_files(root: Path) -> list[Path]:
    """codeexec's modules under `root` (an installed package, or a checkout), in a fixed order."""
    return sorted([root / "__init__.py", *root.glob("worker/**/*.py"), *root.glob("producer/**/*.py")])


def _open(data_dir: Path, name: str) -> IO[bytes]:
    data_dir.mkdir(parents=True, exist_ok=True)
    return (data_dir / name).open("ab")


def _try_lock(file: IO[bytes], how: int) -> bool:
    try:
        fcntl.flock(file, how | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def current(data_dir: Path) -> ResidentState | None:
    """The resident serving data_dir, if one is alive and serving."""
    with _open(data_dir, _LOCK) as lock:
        if _try_lock(lock, fcntl.LOCK_SH):
            return None  # nobody holds it: whatever resident.json says is left from one that died
    try:
        return ResidentState.model_validate_json((data_dir / _STATE).read_bytes())
    except (OSError, ValidationError):
        return None  # starting, or stopping


@contextmanager
def using(data_dir: Path) -> Iterator[IO[bytes]]:
    """Mark a command as using the private Valkey, so that the resident does not stop under it.
    Waits while a resident is stopping."""
    with _open(data_dir, _USERS) as users:
        fcntl.flock(users, fcntl.LOCK_SH)
        yield users


@contextmanager
def attach(users: IO[bytes], data_dir: Path, workers: int, keep_warm_s: float) -> Iterator[str | None]:
    """The URL of a resident with `workers` workers of this fingerprint, started if need be; None if
    one cannot serve here (a server another command started is in the way). `users` is the caller's
    `using` lock. Ctrl-C stops the resident unless another command is using it."""
    state = _ensure(data_dir, workers, keep_warm_s)
    try:
        yield state.url if state else None
    except KeyboardInterrupt:
        # Turning our shared lock exclusive succeeds only if no other command holds it; it keeps
        # commands that arrive meanwhile waiting until the resident is gone.
        if state and _alone(users, data_dir):
            stop(data_dir)
        raise


def _alone(users: IO[bytes], data_dir: Path) -> bool:
    """Turn the caller's shared lock on resident.users exclusive: True if no other command holds it
    (and none can take it until the caller lets go)."""
    with _open(data_dir, _PROBE) as probe:
        fcntl.flock(probe, fcntl.LOCK_EX)
        return _try_lock(users, fcntl.LOCK_EX)


def _ensure(data_dir: Path, workers: int, keep_warm_s: float) -> ResidentState | None:
    wanted = fingerprint(workers, data_dir)
    with _open(data_dir, _SPAWN) as spawn:
        fcntl.flock(spawn, fcntl.LOCK_EX)
        state = current(data_dir)
        if state and state.fingerprint == wanted:
            return state
        if state:
            os.kill(state.pid, signal.SIGTERM)  # another version or setting: the new one waits for it to go
        log = data_dir / "logs" / "resident.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "codeexec.producer.resident", str(data_dir), str(workers), wanted],
                env=dict(os.environ, CODEEXEC_DATA_DIR=str(data_dir)),
                cwd=data_dir,  # it outlives the command: not the user's directory (held open, on sys.path)
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=out,
                start_new_session=True,  # it outlives the command, and its Ctrl-C
            )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            state = current(data_dir)
            if state and state.pid == process.pid:
                print(
                    f"codeexec: the private Valkey and {workers} worker(s) stay up for {keep_warm_s:g} s after the "
                    "last command that uses them (`codeexec stop` stops them now)",
                    file=sys.stderr,
                )
                return state
            if process.poll() is not None:
                if process.returncode == _DECLINED:
                    return None
                tail = log.read_text(errors="replace")[-1500:]
                raise InputError(f"the warm workers did not start (see {log}):\n{tail}")
            if time.monotonic() > deadline:
                process.kill()
                raise InputError(f"the warm workers did not start within {_START_TIMEOUT_S:g} s (see {log})")
            time.sleep(_POLL_S)


def stop(data_dir: Path) -> bool:
    """Stop the resident serving data_dir, if any, and wait until it is gone; False if there was none."""
    state = current(data_dir)
    if state is None:
        return False
    with suppress(ProcessLookupError):
        os.kill(state.pid, signal.SIGTERM)
    with _open(data_dir, _LOCK) as lock:
        deadline = time.monotonic() + _STOP_TIMEOUT_S
        while not _try_lock(lock, fcntl.LOCK_SH):
            if time.monotonic() > deadline:
                raise InputError(f"the warm workers in {data_dir} did not stop within {_STOP_TIMEOUT_S:g} s")
            time.sleep(_POLL_S)
    return True


# ---- the resident itself --------------------------------------------------------------------------

_DECLINED = 3  # its exit status when a server it did not start serves the data directory


def serve(data_dir: Path, workers: int, wanted: str, keep_warm_s: float) -> int:
    lock = _open(data_dir, _LOCK)
    fcntl.flock(lock, fcntl.LOCK_EX)  # waits for a predecessor that is still stopping
    stop_on_sigterm()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a session of its own: Ctrl-C is for commands
    server = EmbeddedServer(data_dir)
    local = None
    state_path = data_dir / _STATE
    try:
        url = server.start()
        if server.process is None:
            print(f"{url} is served by a server another command started: not keeping workers warm", flush=True)
            return _DECLINED
        local = LocalWorkers(workers, data_dir, url).start()
        written = state_path.with_suffix(".tmp")
        written.write_text(ResidentState(pid=os.getpid(), fingerprint=wanted, url=url).model_dump_json())
        written.replace(state_path)
        print(f"resident {os.getpid()}: {workers} worker(s) on {url}, idle stop after {keep_warm_s:g} s", flush=True)
        _serve_until_idle(data_dir, local, keep_warm_s)
        print(f"resident {os.getpid()}: idle for {keep_warm_s:g} s, stopping", flush=True)
    except Stopped:
        print(f"resident {os.getpid()}: asked to stop", flush=True)
    finally:
        state_path.unlink(missing_ok=True)
        if local:
            local.stop()
        server.stop()
    return 0


def _serve_until_idle(data_dir: Path, local: LocalWorkers, keep_warm_s: float) -> None:
    """Return holding resident.users exclusively once no command has used it for keep_warm_s."""
    users = _open(data_dir, _USERS)
    last_used = time.monotonic()
    while True:
        time.sleep(_IDLE_CHECK_S)
        if not local.alive():
            print(
                f"resident {os.getpid()}: the workers exited ({local.process and local.process.returncode}); "
                "starting them again",
                flush=True,
            )
            local.start()
        with _open(data_dir, _PROBE) as probe:
            fcntl.flock(probe, fcntl.LOCK_EX)
            if not _try_lock(users, fcntl.LOCK_EX):
                last_used = time.monotonic()
            elif time.monotonic() - last_used >= keep_warm_s:
                return  # resident.users is released when this process exits, after the server has stopped
            else:
                fcntl.flock(users, fcntl.LOCK_UN)


def main() -> int:
    parser = argparse.ArgumentParser(description="the warm private Valkey and workers (started by codeexec)")
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("workers", type=int)
    parser.add_argument("fingerprint")
    args = parser.parse_args()
    from codeexec.worker.settings import get_settings

    return serve(args.data_dir, args.workers, args.fingerprint, get_settings().keep_warm_s)


if __name__ == "__main__":
    sys.exit(main())
