"""A compiler kept running (Language.warm), where its own start costs most of a compile: a cold javac spends
~0.7 s of its ~0.75 s on a small program starting a JVM and loading itself; kept running, it compiles the
same program in ~35 ms (docs/languages.md has the figures). One per worker process, language and settings,
started at its first compile and ended with the process (its stdin closes; it dies with its parent besides).

It runs sandboxed for all its life as a compile step is (worker/candidate/sandbox.py, the programs posture),
made so by this module run as a script before it executes the compiler: a network namespace of its own, the
seccomp filter, Landlock (the system's and the toolchain's directories read and executed, its own scratch
directory written, nothing else), no capabilities, the run's memory limit as RLIMIT_DATA. Where a protection
the settings require is refused, there is no warm compiler, and programs compile as steps. It runs none of
the programs' code (javac: no annotation processing); what it cannot stop, a compiler bug that a program's
source exploits to change a later compile in the same process, is in docs/security.md.

A compile: the program's files are written to a fresh directory of the scratch one; that directory and the
compile's arguments are sent (Language.warm_arguments(): javac's file names made absolute); the compiler's
status and what it said are read back, then the files it made there (as a kept compile's are: the run gets
them), and the directory is removed. Its time is the compiler process's CPU time over the compile (all its
threads: a JVM's compiler and collector threads too), which load does not grow; the wall clock only as the
ceiling (the run's factor of the limit). Over the limit it is killed, and the compile ran out of time. A
status that is not the compiler's verdict on the program (Language.warm_statuses: javac's 3, an internal
error or an OutOfMemoryError), or a compiler that dies or says too much, is killed, and the program
compiles as a step: the cold compile decides.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codeexec.protocol.settings import RunnerConfig
from codeexec.worker.candidate import sandbox
from codeexec.worker.process import workfiles
from codeexec.worker.process.runner import CANDIDATE_DIR, environment
from codeexec.worker.process.seccomp import seccomp_filter

if TYPE_CHECKING:
    from codeexec.worker.languages.language import Language, Toolchain

#: How long a compiler may take to start, on the wall clock, before it is given up for this process.
START_S = 120.0
#: What a compiler may say about one program (javac's diagnostics): beyond it, it is not trusted.
MOST_SAID = 16 << 20
_INT = struct.Struct(">i")
_TICK = os.sysconf("SC_CLK_TCK")
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Compiled:
    """A warm compile's end: `ended` "pass" (the compiler answered: `status`, what it `said`, the files it
    `made`) or "limit" (out of time: `detail` says which); the CPU seconds it was `charged`, its `wall_s`;
    and the protections the compiler runs under."""

    ended: str
    status: int | None
    said: str
    made: dict[str, bytes]
    charged_s: float
    wall_s: float
    detail: str
    protections: dict[str, str]


def compile_warm(
    language: Language, toolchain: Toolchain, argv: list[str], files: dict[str, bytes], limit_s: float,
    config: RunnerConfig,
) -> Compiled | None:  # fmt: skip
    """The compile of `files` by `argv` (the language's one compile step) in this process's warm compiler
    for `language`, or None where there is none or it failed (the program then compiles as a step)."""
    # The compile's words but its last (Java's file, named for its class): one compiler for each set of flags.
    key = (language.name, language.warm, tuple(argv[:-1]), config.memory_bytes, config.sandbox)
    with _lock:
        compiler = _running.get(key)
        if compiler is not None and compiler.process.poll() is not None:  # it died since: its directory goes
            compiler.stop()
            compiler = None
        if compiler is None:
            if key in _failed:
                return None
            compiler = _Compiler.start(language, toolchain, config)
            if compiler is None:
                _failed.add(key)
                return None
            _running[key] = compiler
        answer = compiler.compile(language, argv, files, limit_s, config.wall_ceiling_factor * limit_s)
        failed = answer is None or (answer.ended == "pass" and answer.status not in language.warm_statuses)
        if failed or answer is None or answer.ended == "limit":  # not to be trusted, or killed: a new one next
            compiler.stop()
            del _running[key]
        return None if failed else answer


_lock = threading.Lock()
_running: dict[tuple, _Compiler] = {}
_failed: set[tuple] = set()  # settings whose compiler did not start: not tried again by this process


def pids() -> set[int]:
    """The processes of this process's compilers kept running (as zygote.idle_pids(): its children that
    outlive every program)."""
    with _lock:
        return {compiler.process.pid for compiler in _running.values()}


class _Compiler:
    """One compiler process, its scratch directory, and the protections it runs under."""

    def __init__(self, process: subprocess.Popen[bytes], scratch: str, protections: dict[str, str]) -> None:
        self.process, self.scratch, self.protections = process, scratch, protections
        self.compiles = 0

    @classmethod
    def start(cls, language: Language, toolchain: Toolchain, config: RunnerConfig) -> _Compiler | None:
        scratch = tempfile.mkdtemp(prefix="codeexec_warm_")
        here = Path(__file__).parent
        for name in language.warm_files:  # the compiler's own files, readable where its sandbox lets it read
            shutil.copyfile(here / name, os.path.join(scratch, name))
        argv = language.warm_command(toolchain, scratch)
        given = {
            "scratch": scratch,
            "toolchains": list(toolchain.directories),
            "sandbox": config.sandbox,
            "data_bytes": config.memory_bytes,
            "argv": argv,
            "env": environment(config)
            | {name: value.replace("{dir}", scratch) for name, value in language.env.items()}
            | {"HOME": scratch, "TMPDIR": scratch},
        }
        process = subprocess.Popen(
            [sys.executable, "-s", "-m", __name__, json.dumps(given)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=scratch,
            start_new_session=True,  # its own group: a kill reaches all of it, and nothing of ours
        )
        compiler = cls(process, scratch, {})
        assert process.stdout is not None
        os.set_blocking(process.stdout.fileno(), False)
        line = compiler._read(lambda got: b"\n" in got, START_S)
        ready = None if line is None else compiler._read(lambda got: len(got) > len(line), START_S, line)
        if ready is None or ready[-1:] != b"\1":
            compiler.stop()
            return None
        compiler.protections = json.loads(line.split(b"\n", 1)[0])
        return compiler

    def compile(
        self, language: Language, argv: list[str], files: dict[str, bytes], limit_s: float, ceiling_s: float
    ) -> Compiled | None:
        directory = tempfile.mkdtemp(dir=self.scratch, prefix=f"{self.compiles}-")
        self.compiles += 1
        try:
            workfiles.put(directory, files)
            words = [directory, *language.warm_arguments(argv, directory)]
            request = [_INT.pack(len(words))]
            for word in words:
                encoded = word.encode()
                request += [_INT.pack(len(encoded)), encoded]
            assert self.process.stdin is not None
            began, used = time.monotonic(), self._cpu()
            try:
                self.process.stdin.write(b"".join(request))
                self.process.stdin.flush()
            except OSError:
                return None
            got = self._read(_answered, ceiling_s, limit_s=limit_s, used=used)
            wall_s, charged_s = time.monotonic() - began, self._cpu() - used
            if got is None:  # dead, or over the ceiling or the limit
                if self.process.poll() is not None:
                    return None
                detail = f"timed out after {limit_s:g} s"  # as a step's (worker/candidate/forked_runs.py)
                return Compiled("limit", None, "", {}, charged_s, wall_s, detail, self.protections)
            status, length = _INT.unpack_from(got)[0], _INT.unpack_from(got, 4)[0]
            said = got[8 : 8 + length].decode("utf-8", "replace").replace(f"{directory}/", "")
            fetched = workfiles.fetch(directory, sorted(set(_files_below(directory)) - set(files)))
            made = {name: base64.b64decode(content) for name, content in fetched.items()}
            return Compiled("pass", status, said, made, charged_s, wall_s, "", self.protections)
        finally:
            shutil.rmtree(directory, ignore_errors=True)

    def _cpu(self) -> float:
        """The CPU seconds the compiler has used (all its threads), or 0.0 where it is gone."""
        try:
            with open(f"/proc/{self.process.pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime

    def _read(
        self, done, ceiling_s: float, got: bytes = b"", limit_s: float | None = None, used: float = 0.0
    ) -> bytes | None:
        """What the compiler wrote until done(it) is true; None if it ended first, or the wall clock passed
        `ceiling_s`, or its CPU time since `used` passed `limit_s`."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + ceiling_s
        while not done(got):
            left = deadline - time.monotonic()
            if left <= 0 or (limit_s is not None and self._cpu() - used >= limit_s) or len(got) > MOST_SAID:
                return None
            ready, _, _ = select.select([fd], [], [], min(left, 0.05))
            if ready:
                try:
                    chunk = os.read(fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    return None
                got += chunk
        return got

    def stop(self) -> None:
        try:
            os.killpg(self.process.pid, 9)
        except OSError:
            pass
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass
        shutil.rmtree(self.scratch, ignore_errors=True)


def _files_below(directory: str) -> list[str]:
    """The paths of the files below `directory`, relative to it (scalac -d writes a package's directories)."""
    return [
        os.path.relpath(os.path.join(where, name), directory)
        for where, _, names in os.walk(directory)
        for name in names
    ]


def _answered(got: bytes) -> bool:
    return len(got) >= 8 and len(got) >= 8 + _INT.unpack_from(got, 4)[0]


def _become(given: dict) -> None:
    """In the compiler's process, before it is the compiler: the sandbox, then its command. Writes the
    protections' states as a line of JSON first (the host's to report); exits 1 where one the settings
    require is missing."""
    sandbox.libc()("prctl", _PR_SET_PDEATHSIG, 9, 0, 0, 0)
    setting = given["sandbox"]
    sys.path.insert(0, CANDIDATE_DIR)  # the namespaces' module, as a candidate's interpreter loads it
    from namespaces import new_namespaces

    states = new_namespaces(False, setting != "off")
    states["pid_namespace"] = "off"  # a process of the host's: killed whole as its own group
    if given["data_bytes"] is not None:
        import resource

        resource.setrlimit(resource.RLIMIT_DATA, (given["data_bytes"], given["data_bytes"]))
    plan = sandbox.prepare(setting, seccomp_filter(True), "programs", tuple(given["toolchains"]))
    states["syscalls"] = sandbox.restrict_calls(plan)
    rules = sandbox.ruleset(plan, given["scratch"])
    if isinstance(plan, sandbox.Plan):
        plan.close()
    states |= sandbox.confine(plan, rules)
    absent = sandbox.missing(states, "off", setting)
    if absent:
        os.write(2, f"codeexec: required, and not in place: {', '.join(absent)}\n".encode())
        os._exit(1)
    os.write(1, json.dumps(states).encode() + b"\n")
    os.execve(given["argv"][0], given["argv"], given["env"])


if __name__ == "__main__":
    _become(json.loads(sys.argv[1]))
