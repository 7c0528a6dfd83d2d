"""Run one candidate program in a process of its own, as its harness says: against its assertions, on
its inputs (the outputs come back in the RunResult's checks, for the judge to compare), on its stdin
tests, or with a test file (Harness below; worker/candidate/child.py runs each).

The host side of the runner. For each candidate it makes a temporary directory and starts the
candidate's process with a minimal environment and closed stdin: forked from a warm zygote
(isolation "fork", zygote.py), or a fresh interpreter on a script that loads worker/candidate/child.py
and calls its main() (isolation "fresh"). It sets the process's resource limits, lets it go, and
hands it to the watch (watch.py), which reads its stdout, its stderr and its private record socket
against a deadline (timelimit.py). Whatever happens, the candidate's whole process tree is killed
and reaped (proctree.py) before the RunResult is returned.
"""

from __future__ import annotations

import math
import os
import resource
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from codeexec.protocol.result import Outcome, RunResult
from codeexec.protocol.settings import MAX_TIMEOUT_S, MIN_TIMEOUT_S, RunnerConfig, runner_config
from codeexec.worker.process import workfiles
from codeexec.worker.process.proctree import CandidateTree
from codeexec.worker.process.seccomp import seccomp_filter
from codeexec.worker.process.split import Split, split
from codeexec.worker.process.watch import Ending, TestEnded, Watch
from codeexec.worker.process.zygote import LOST as ZYGOTE_LOST
from codeexec.worker.process.zygote import Forked, ZygoteLost, zygote

#: The candidate side's files, which its interpreter loads by path (worker/candidate/__init__.py).
CANDIDATE_DIR = str(Path(__file__).resolve().parent.parent / "candidate")


def clamp_timeout(timeout_s: float) -> float:
    if math.isnan(timeout_s):
        raise ValueError("timeout_s is NaN")
    return min(max(float(timeout_s), MIN_TIMEOUT_S), MAX_TIMEOUT_S)


@dataclass(frozen=True)
class Harness:
    """How the candidate's process runs the program (worker/candidate/child.py, HARNESSES): its name there,
    and what it is `given`. Each judge (worker/judging/) makes the one it needs.

    - assertions: run them after the program, in its namespace (of_assertions(): each split, if it can
      be, with the host's half kept here for the watch: worker/process/split.py);
    - calls: call the program's entry point on each input of each check (worker/judging/kinds/evalplus.py,
      kinds/call.py, helpers/checker.py make it);
    - stdin: the program as a script on each test's standard input, a process per test (worker/judging/
      kinds/stdin.py, kinds/script.py), whose runners start from `prelude`'s namespace;
    - steps: commands run one after another, each in a process of its own, on the program's file: a
      compiler, then the program it made (worker/judging/kinds/program.py);
    - suite: a test file's tests, after the program (worker/judging/kinds/suite.py).
    """

    name: Literal["assertions", "calls", "stdin", "steps", "suite"]
    given: object
    splits: tuple[Split | None, ...] = ()
    prelude: str = ""

    @classmethod
    def of_assertions(cls, assertions: Sequence[str]) -> Harness:
        splits = tuple(split(text) for text in assertions)
        # Each assertion as it is, or split: the constant stays here.
        given = [
            text if cut is None else [cut.prelude, cut.expression, *([cut.asks] if cut.asks else [])]
            for text, cut in zip(assertions, splits, strict=True)
        ]
        return cls("assertions", given, splits)


def run_candidate(code: str, assertions: Sequence[str], timeout_s: float = 3.0, **limits: object) -> RunResult:
    """Run `code`, then each assertion in the namespace it leaves; never raises for what the code does.

    `timeout_s` is clamped to [0.1, 30] and counts from the moment the candidate starts. `limits`
    override the RunnerConfig fields of the settings (memory_bytes=..., interpreter=..., ...); an
    unknown name is a TypeError.
    """
    return run_program(code, Harness.of_assertions(assertions), clamp_timeout(timeout_s), **limits)


def run_program(
    code: str,
    harness: Harness,
    timeout_s: float,
    on_test: Callable[[TestEnded], bool] | None = None,
    files: Mapping[str, bytes] | None = None,
    fetch: Sequence[str] = (),
    executable: Sequence[str] = (),
    **limits: object,
) -> RunResult:
    """Run `code` in a process of its own, as `harness` says; never raises for what the code does.

    `timeout_s` (at least 0.1) counts from the moment the candidate starts: each judge gives its own (a
    HumanEval+ check's budget is EvalPlus's, up to a minute; BigCodeBench gives a sample 240 s). `on_test`
    is given each stdin test as it ends, and says whether to run the next. `files`: put in the candidate's
    working directory before it starts (relative paths; those in `executable` may be executed); `fetch`:
    files read back from it once the candidate and all it started have ended (RunResult.files; one that is
    not there, or is not a regular file of the directory's, is left out). `limits` as for run_candidate().
    """
    config = runner_config(**limits)
    timeout = max(timeout_s, MIN_TIMEOUT_S)
    began = time.monotonic()
    try:
        # No "-" in the path: tests that split a path of theirs on "-" (BigCodeBench/1127) must not find one.
        workdir = tempfile.mkdtemp(prefix="codeexec_")
    except OSError as exc:  # no temporary directory: the machine, not the candidate
        ending = Ending(Outcome.INFRA_ERROR, f"could not prepare the run: {exc}")
    else:
        fetched: dict[str, str] = {}
        try:
            workfiles.put(workdir, files or {}, executable)
            ending = _run_in(workdir, code, harness, timeout, config, on_test)
            fetched = workfiles.fetch(workdir, fetch)
        except OSError as exc:  # no pipes, no room for the script or the files
            ending = Ending(Outcome.INFRA_ERROR, f"could not prepare the run: {exc}")
        finally:
            _remove(workdir)
    result = ending.result(len(harness.splits), time.monotonic() - began)
    result.files = fetched
    return result


def _remove(workdir: str) -> None:
    """Remove the candidate's directory. It is usually empty (the child deletes its script), and a
    bare rmdir costs a tenth of what shutil.rmtree does."""
    try:
        os.rmdir(workdir)
    except OSError:
        shutil.rmtree(workdir, ignore_errors=True)


@lru_cache(maxsize=2)
def _script_head(module: str, entry: str) -> str:
    """The start of every runner script and of the zygote: load `module` of worker/candidate/ (child
    for a candidate, serve for the zygote) by itself, as a top-level module, and take `entry` from it.

    Importing rather than pasting its text lets the interpreter reuse its cached bytecode (written
    by the first child, or by pip at install time): compiling the source anew would cost every
    candidate about a millisecond.
    """
    # sys.path[0] is the script's directory, the candidate's: it never stays on sys.path (as under -I).
    return f"import sys\nsys.path[0] = {CANDIDATE_DIR!r}\nfrom {module} import {entry}\ndel sys.path[0]\n"


def environment(config: RunnerConfig) -> dict[str, str]:
    """What every candidate's environment holds, whatever its directory (what -I gives, but for
    PYTHONHASHSEED: no PYTHON* variable of the worker's, nothing else of its environment), and the
    configured variables (an environment's). With the relaxed posture, which lets candidates run programs,
    `python` is theirs."""
    own_bin = f"{os.path.dirname(config.interpreter)}:" if config.posture == "relaxed" else ""
    return {
        **config.variables,
        "PYTHONHASHSEED": str(config.hash_seed),
        "PATH": f"{own_bin}/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
    }


def _run_in(
    workdir: str,
    code: str,
    harness: Harness,
    timeout: float,
    config: RunnerConfig,
    on_test: Callable[[TestEnded], bool] | None,
) -> Ending:
    nonce = secrets.token_hex(16)
    tree = CandidateTree()
    own = {"HOME": workdir, "TMPDIR": workdir, **tree.environment}  # this candidate's part of its environment
    # -s: no user site-packages; the script head keeps its directory off sys.path.
    command = [config.interpreter, "-s", *config.interpreter_flags]
    denied = sorted(config.denied_modules)
    # child.main()'s arguments but the descriptors, whichever way its process starts.
    arguments = {
        "candidate": code,
        "harness": harness.name,
        "given": harness.given,
        "denied": denied,
        "nonce": nonce,
        "pid_namespace": config.pid_namespace,
        "sandbox": config.sandbox,
        "posture": config.posture,
        "toolchains": tuple(config.toolchains),
    }
    opened: list[int] = []
    try:
        for make in (os.pipe, os.pipe, _socketpair, os.pipe):  # the record goes both ways ("value" lines)
            opened.extend(make())
        stdout_r, stdout_w, stderr_r, stderr_w, record_r, record_w, lifeline_r, lifeline_w = opened
        theirs = [stdout_w, stderr_w, record_w, lifeline_r]
        with ExitStack() as held:
            root: subprocess.Popen[bytes] | Forked
            try:
                if config.isolation == "fork":
                    nest = config.pid_namespace != "off"
                    warm = held.enter_context(
                        zygote(
                            command,
                            _script_head("warm", "serve"),
                            environment(config),
                            nest,
                            denied,
                            config.sandbox,
                            tuple(config.preload),
                            harness.prelude,
                            config.posture,
                            tuple(config.toolchains),
                        )
                    )
                    root = Forked(warm, warm.fork(workdir, own, arguments, theirs))
                    tree.started(root, inherited=warm.token)
                else:
                    root = _start_fresh(command, workdir, own, arguments, theirs, config)
                    tree.started(root)
            except ZygoteLost as exc:
                return Ending(Outcome.INFRA_ERROR, f"the runner script did not start: {exc}")
            except OSError as exc:  # interpreter missing, cannot fork, out of descriptors
                return Ending(Outcome.INFRA_ERROR, f"could not start {config.interpreter}: {exc}")
            for fd in theirs:
                os.close(fd)
                opened.remove(fd)
            watch = None
            try:
                _limit(root.pid, config, forked=isinstance(root, Forked))
                try:
                    os.write(lifeline_w, b"g")  # the child waits for this before it runs anything of the candidate
                except BrokenPipeError:  # it has ended already: the watch reads how
                    pass
                watch = Watch(root, stdout_r, stderr_r, record_r, nonce, timeout, config, list(harness.splits), on_test)
                ending = watch.run()
                ending.protections, ending.checks, ending.units = watch.protections, watch.checks, watch.units
            finally:
                tree.kill(contained=watch is not None and watch.contained)
            if isinstance(root, Forked) and root.lost:
                return Ending(Outcome.INFRA_ERROR, f"{ZYGOTE_LOST}: {root.lost}")
            return ending
    finally:
        for fd in opened:
            os.close(fd)


def _socketpair() -> tuple[int, int]:
    """The record socket: ours asks the kernel for the sender's credentials with every message."""
    ours, theirs = socket.socketpair()
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    return ours.detach(), theirs.detach()


def _start_fresh(
    command: list[str],
    workdir: str,
    own: dict[str, str],
    arguments: dict[str, object],
    fds: list[int],
    config: RunnerConfig,
) -> subprocess.Popen[bytes]:
    """Isolation "fresh": a new interpreter for this candidate, on a script that calls child.main()."""
    stdout_w, stderr_w, record_w, lifeline_r = fds
    # The system call filter goes to the fresh interpreter only: a zygote attaches it once (worker/process/zygote.py).
    program = seccomp_filter(config.posture != "strict")
    # The stack limit is the interpreter's own to set: exec() puts back the one it began with once the
    # new program is in place, after Popen has returned (fs/exec.c, setup_new_exec), so a prlimit() from
    # here can come too early.
    stack = _within_hard(resource.RLIMIT_STACK, config.stack_bytes) if config.stack_bytes is not None else None
    call = (
        f"main(**{arguments!r}, record_fd={record_w}, lifeline_fd={lifeline_r}, seccomp={program!r}, "
        f"script=sys.argv[0], stack={stack!r})\n"
    )
    script = os.path.join(workdir, ".codeexec_runner.py")
    with open(script, "w", encoding="utf-8") as out:
        out.write(_script_head("child", "main") + call)
    return subprocess.Popen(
        [*command, script],
        cwd=workdir,
        env=environment(config) | own,
        stdin=subprocess.DEVNULL,
        stdout=stdout_w,
        stderr=stderr_w,
        pass_fds=(record_w, lifeline_r),
        start_new_session=True,
    )


def _limit(pid: int, config: RunnerConfig, forked: bool) -> None:
    """Set the child's resource limits from here (the child need not load the resource module).

    A fork of a zygote starts with what the zygote holds (its preloaded modules: pandas, matplotlib and
    the rest are a few GB of address space), so its memory limits count from there: an absolute limit
    that the warm interpreter alone exceeds would fail every candidate (LiveBench PR #536). A fresh
    interpreter starts from nothing, and its own start counts."""
    held = _memory_held(pid) if forked else {}
    limits = {
        resource.RLIMIT_AS: _beyond(config.memory_bytes, held.get("VmSize")),
        resource.RLIMIT_DATA: _beyond(config.data_bytes, held.get("VmData")),
        resource.RLIMIT_STACK: config.stack_bytes if forked else None,  # a fresh one sets its own (_start_fresh)
        resource.RLIMIT_FSIZE: config.file_size_bytes,
        resource.RLIMIT_NOFILE: config.open_files,
        resource.RLIMIT_CORE: config.core_bytes,
    }
    for which, value in limits.items():
        if value is None:
            continue
        value = _within_hard(which, value)
        try:
            resource.prlimit(pid, which, (value, value))
        except ProcessLookupError:  # it died already: the watch will say how
            return


def _within_hard(which: int, value: int) -> int:
    """`value`, or the hard limit the child inherits from us where that is lower."""
    _, hard = resource.getrlimit(which)
    return value if hard == resource.RLIM_INFINITY else min(value, hard)


def _beyond(limit: int | None, held: int | None) -> int | None:
    return None if limit is None else limit + (held or 0)


def _memory_held(pid: int) -> dict[str, int]:
    """VmSize and VmData of a process, in bytes (what /proc/<pid>/status says in kB); {} if it has gone."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            lines = [line.split() for line in status if line.startswith(("VmSize:", "VmData:"))]
    except OSError:
        return {}
    return {fields[0].rstrip(":"): int(fields[1]) << 10 for fields in lines if len(fields) >= 2}
