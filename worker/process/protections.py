"""Which protections candidates run under here: probed when a worker starts, logged, counted with each
run's results (worker/queue/store.py), and printed by `codeexec doctor`.

The probe runs a real candidate through the runner in each isolation mode and reads what its "started"
record says (worker/candidate/child.py): what the kernel granted, not what it advertises.
"""

from __future__ import annotations

import json
import logging
import os

from codeexec.protocol.settings import RunnerConfig, get_settings
from codeexec.worker.candidate.sandbox import EXEC_PATHS, PROTECTIONS, RELAXED_READ_PATHS, missing
from codeexec.worker.process.runner import run_candidate
from codeexec.worker.process.zygote import close_idle

#: Every protection a candidate's "started" record reports, in the order they are made.
NAMES = ("pid_namespace", *PROTECTIONS)
log = logging.getLogger(__name__)


def relaxations() -> list[str]:
    """What the sandbox's relaxed posture allows that the strict one does not (worker/candidate/sandbox.py),
    for the problem sets that need it (BigCodeBench's, ClassEval's): said by `codeexec doctor`."""
    return [
        "no import denylist: subprocess, socket, shutil, requests, ctypes may be imported; os.system runs",
        f"execve: the system's programs ({', '.join(EXEC_PATHS)}), Python's prefixes and the candidate's working "
        "directory may be executed; /dev/shm may not",
        "the network namespace's loopback is up and TCP is not filtered inside it: servers on 127.0.0.1 are "
        "reachable by the candidate's own processes, and nothing outside the namespace is",
        f"these may be read besides: {', '.join(RELAXED_READ_PATHS)}",
    ]


def programs_relaxations() -> list[str]:
    """What the sandbox's programs posture allows that the strict one does not (worker/candidate/sandbox.py),
    for programs in other languages than Python (worker/languages/): said by `codeexec doctor`."""
    return [
        f"execve: the system's programs ({', '.join(EXEC_PATHS)}), the languages' toolchain directories (headers, "
        "class libraries, a rustup toolchain: `codeexec doctor` lists them), and the working directory, where the "
        "compiler writes the program, may be read and executed",
        f"these may be read besides: {', '.join(RELAXED_READ_PATHS)}",
        "the network stays as the strict posture's: a namespace of its own with its loopback down, TCP filtered",
    ]


def probe(**limits: object) -> dict[str, dict[str, str]]:
    """isolation -> protection -> "on", "off" or "refused: <why>", for each isolation mode, with the
    settings (and `limits`: the relaxed posture, say); "require" is probed as "auto" (what is there), for the
    caller to compare."""
    settings = get_settings()
    wanted = {name: "off" if getattr(settings, name) == "off" else "auto" for name in ("pid_namespace", "sandbox")}
    found = {}
    for isolation in RunnerConfig.model_fields["isolation"].annotation.__args__:
        result = run_candidate("", [], isolation=isolation, **wanted, **limits)
        found[isolation] = result.protections or dict.fromkeys(
            NAMES, f"refused: the probe did not start: {result.detail}"
        )
    close_idle()  # the probe's zygote: a pool process forked from here starts its own
    return found


def summary(protections: dict[str, str]) -> str:
    """One word per protection: "pid_namespace=on network=refused ..." (the why is in the worker's log)."""
    return " ".join(f"{name}={protections.get(name, 'off').partition(':')[0]}" for name in NAMES)


def check_at_start() -> None:
    """Probe, log what candidates will run under, and exit if a required protection is not in place.

    The probe runs in a fork of its own: running a candidate makes its host a child subreaper and leaves
    it a zygote, and the worker's main process should be neither (its pool processes' orphans would
    come to it). Called before the pool starts, whose processes Celery forks from here the same way;
    a fork costs the worker's start ~0.1 s where a new interpreter would cost ~0.5 s."""
    settings = get_settings()
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the probe's own process: its result goes down the pipe
        status = 1
        try:
            os.close(reading)
            os.write(writing, json.dumps(probe()).encode())
            status = 0
        finally:
            os._exit(status)
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        text = answer.read()
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    if status != 0 or not text:
        log.error("the protections could not be probed (the probe ended with status %d)", status)
        raise SystemExit(1)
    for isolation, protections in json.loads(text).items():
        refused = [f"{name} ({state})" for name, state in protections.items() if state != "on"]
        log.warning(
            "candidates (isolation %s) run under: %s%s",
            isolation,
            ", ".join(name for name in NAMES if protections.get(name) == "on") or "none of the protections",
            f"; not under: {', '.join(refused)}" if refused else "",
        )
        absent = missing(protections, settings.pid_namespace, settings.sandbox)
        if absent:
            log.error("required, and not in place here: %s; the worker does not start", ", ".join(absent))
            raise SystemExit(1)
