"""Warm workers: the private Valkey and local workers, kept between commands and stopped when idle.

Starting them costs a command about two seconds (Celery's boot, each pool process's zygote), most of
the time a small evaluation takes. So on the embedded default, a command that runs jobs attaches to
the data directory's *resident*: a detached process that starts the server and the workers and keeps
them until no command has used them for ``keep_warm_s`` seconds (``CODEEXEC_KEEP_WARM_S``; 0 turns
this off, and the command starts and stops its own, as ``backend()`` always did).

- A resident serves one identity (Identity: codeexec's code, the workers' Python, their own settings, how
  many, the environments built). A command of another identity replaces it if no other command is using
  it; if one is, the command joins it when only the number of workers differs, and otherwise waits for
  it to be free, saying so. What a run carries (its limits, settings.RUN_SETTINGS) and the rest of a
  command's environment do not count: a candidate's environment is fixed (worker/process/runner.py).
- Ctrl-C in a command stops the resident, as it stops a command's own workers, unless another
  command is using it (they share its workers, and the queue).
- A resident never joins a server some other command started (that command would stop the server
  under it): the command then starts its own workers, as before.
- Its private Valkey, if it exits (killed, crashed), is started again from its append-only file by
  the server's keeper (producer/local/valkey.py); if it cannot be, the resident stops.
- ``codeexec stop`` stops it now.

Files in the data directory, all named here:

- ``resident.lock``: held exclusively by the resident for its whole life, so a live one is known
  without trusting a pid;
- ``resident.json``: its pid, URL and identity, written once it serves, removed before it stops;
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
import json
import os
import platform
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, Field, ValidationError

from codeexec.producer.inputs.files import InputError
from codeexec.producer.local.lifetime import Stopped, stop_on_sigterm
from codeexec.producer.local.valkey import EmbeddedServer
from codeexec.producer.local.workers import LocalWorkers
from codeexec.protocol.settings import WORKER_SETTINGS, get_settings
from codeexec.worker import environments

ROOT = Path(__file__).resolve().parents[2]
_LOCK, _STATE, _USERS = "resident.lock", "resident.json", "resident.users"
_SPAWN, _PROBE = "resident.spawn", "resident.probe"
_POLL_S = 0.01
_IDLE_CHECK_S = 0.5
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 120.0  # the workers' warm then cold shutdown, then the server's
_WAIT_S = 0.5  # how often a command that waits for the warm workers to be free looks again
_OWN = "the workers' own"


class Identity(BaseModel):
    """What the warm workers were started with that changes how candidates run: codeexec's code, the
    Python the workers run in, their settings (settings.WORKER_SETTINGS: the rest, a run carries), how
    many there are, and the environments built in the data directory (a worker serves those it found at
    its start). Nothing else of a command's environment: every candidate's is fixed (runner.py)."""

    code: str = Field(description="sha256 of codeexec's modules.")
    python: str = Field(description="The workers' Python: its prefix (a virtualenv's) and version.")
    workers: int
    settings: dict[str, Any] = Field(description="settings.WORKER_SETTINGS, as the starting command had them.")
    environments: list[str] = Field(description="Each environment built, as its manifest records it.")

    @classmethod
    def here(cls, workers: int, data_dir: Path) -> Identity:
        """The identity of the warm workers this command would start."""
        settings = get_settings().model_dump(mode="json", include=WORKER_SETTINGS)
        if settings["interpreter"] == sys.executable:  # any path to this Python, as the workers' own is
            settings["interpreter"] = _OWN
        code = hashlib.sha256()
        for path in code_files(ROOT):
            code.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
        return cls(
            code=code.hexdigest(),
            python=f"{Path(sys.prefix).resolve()} ({platform.python_version()})",
            workers=workers,
            settings=settings,
            environments=[built.model_dump_json() for built in environments.built(data_dir)],
        )

    def differences(self, other: Identity | None) -> list[str]:
        """What `other` (the warm workers') has that differs from this, as a person names it."""
        if other is None:
            return ["another version of codeexec"]
        found = []
        if other.code != self.code:
            found.append("another version of codeexec")
        if other.python != self.python:
            found.append(f"another Python ({other.python})")
        for name in sorted(self.settings.keys() | other.settings.keys()):
            if self.settings.get(name) != other.settings.get(name):
                found.append(f"CODEEXEC_{name.upper()}={json.dumps(other.settings.get(name))}")
        if other.environments != self.environments:
            found.append("other environments built")
        if other.workers != self.workers:
            found.append(f"{other.workers} worker(s)")
        return found


class ResidentState(BaseModel):
    pid: int
    url: str
    identity: Identity | None = None  # None: a resident of an older codeexec


def code_files(root: Path) -> list[Path]:
    """codeexec's modules under `root` (an installed package, or a checkout), in a fixed order."""
    parts = ("protocol", "worker", "producer")
    return sorted([root / "__init__.py", *(path for part in parts for path in root.glob(f"{part}/**/*.py"))])


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
    """The URL of a resident of this command's identity with `workers` workers, started if need be; None if
    one cannot serve here (a server another command started is in the way). `users` is the caller's
    `using` lock. Ctrl-C stops the resident unless another command is using it."""
    state = _ensure(users, data_dir, workers, keep_warm_s)
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


def _ensure(users: IO[bytes], data_dir: Path, workers: int, keep_warm_s: float) -> ResidentState | None:
    """The warm workers of this identity: the resident's if it has it, else new ones, which replace it
    if no other command uses it. If another does, a command joins it when it differs only in its number
    of workers, and otherwise waits for it to be free (saying so once): it is never stopped under a run."""
    wanted = Identity.here(workers, data_dir)
    said = False
    while True:
        with _open(data_dir, _SPAWN) as spawn:
            fcntl.flock(spawn, fcntl.LOCK_EX)
            state = current(data_dir)
            if state is None:
                return _spawn(data_dir, wanted, keep_warm_s)
            differs = wanted.differences(state.identity)
            if not differs:
                return state
            # Our shared lock on resident.users turns exclusive only if no other command holds it; if
            # it does not, the lock is gone (flock(2)), and is taken again below.
            if _alone(users, data_dir):
                _say(f"the warm workers ran with {', '.join(differs)}: starting new ones")
                os.kill(state.pid, signal.SIGTERM)  # the new one waits for it to go
                fcntl.flock(users, fcntl.LOCK_SH)
                return _spawn(data_dir, wanted, keep_warm_s)
            if state.identity is not None and differs == [f"{state.identity.workers} worker(s)"]:
                fcntl.flock(users, fcntl.LOCK_SH)
                _say(f"another command is using the {state.identity.workers} warm worker(s): this one uses them too")
                return state
        if not said:
            _say(
                f"the warm workers in {data_dir} run with {', '.join(differs)}, and another command is using "
                "them: waiting for it to end (a command with a CODEEXEC_DATA_DIR of its own need not wait)"
            )
            said = True
        time.sleep(_WAIT_S)  # holding no lock: two commands that wait must not wait for each other
        fcntl.flock(users, fcntl.LOCK_SH)


def _say(text: str) -> None:
    print(f"codeexec: {text}", file=sys.stderr, flush=True)


def _spawn(data_dir: Path, identity: Identity, keep_warm_s: float) -> ResidentState | None:
    """Start a resident with this identity and wait until it serves; None if it declines (a server another
    command started serves the data directory)."""
    log = data_dir / "logs" / "resident.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "codeexec.producer.local.resident", str(data_dir), identity.model_dump_json()],
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
            _say(
                f"the private Valkey and {identity.workers} worker(s) stay up for {keep_warm_s:g} s after the "
                "last command that uses them (`codeexec stop` stops them now)"
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


def serve(data_dir: Path, identity: Identity, keep_warm_s: float) -> int:
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
        server.keep_up()
        local = LocalWorkers(identity.workers, data_dir, url).start()
        written = state_path.with_suffix(".tmp")
        written.write_text(ResidentState(pid=os.getpid(), url=url, identity=identity).model_dump_json())
        written.replace(state_path)
        print(
            f"resident {os.getpid()}: {identity.workers} worker(s) on {url}, idle stop after {keep_warm_s:g} s",
            flush=True,
        )
        if not _serve_until_idle(data_dir, server, local, keep_warm_s):
            return 1
        print(f"resident {os.getpid()}: idle for {keep_warm_s:g} s, stopping", flush=True)
    except Stopped:
        print(f"resident {os.getpid()}: asked to stop", flush=True)
    finally:
        state_path.unlink(missing_ok=True)
        if local:
            local.stop()
        server.stop()
    return 0


def _serve_until_idle(data_dir: Path, server: EmbeddedServer, local: LocalWorkers, keep_warm_s: float) -> bool:
    """Return True holding resident.users exclusively once no command has used it for keep_warm_s; False
    at once if the private Valkey exited and could not be started again (the commands using it say so)."""
    users = _open(data_dir, _USERS)
    last_used = time.monotonic()
    while True:
        time.sleep(_IDLE_CHECK_S)
        if server.failed:
            print(f"resident {os.getpid()}: the private Valkey {server.failed}; stopping", flush=True)
            return False
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
                return True  # resident.users is released when this process exits, after the server has stopped
            else:
                fcntl.flock(users, fcntl.LOCK_UN)


def main() -> int:
    parser = argparse.ArgumentParser(description="the warm private Valkey and workers (started by codeexec)")
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("identity", type=Identity.model_validate_json)
    args = parser.parse_args()
    return serve(args.data_dir, args.identity, get_settings().keep_warm_s)


if __name__ == "__main__":
    sys.exit(main())
