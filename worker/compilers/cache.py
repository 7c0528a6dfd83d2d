"""What a compile made, kept for the next program with the same source: the same completion sampled again,
the same program under another test. Keyed by the toolchain (each tool's path, size and change time), the
compile's commands and variables, and the program's file and text: whatever differs compiles anew.

The files kept are the compiler's (worker/judging/kinds/program.py reads them back before the program has run,
so nothing the program does can change what is kept), in `<data_dir>/compiled/`, shared by the worker's
processes; each entry is written whole (a directory renamed into place) or not at all. Beyond MOST entries
the oldest go. A process about to compile a program another of the host's is compiling waits for it
(compiling()), then finds what it made: verl sends a program's tests at once, each a request of its own.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from codeexec.protocol.settings import get_settings

if TYPE_CHECKING:
    from codeexec.worker.languages.language import Toolchain

#: Entries kept beyond which the oldest tenth go (checked every CHECK_EVERY entries written by a process).
MOST, CHECK_EVERY = 4000, 200
_written = [0]


def directory() -> Path:
    return get_settings().data_dir / "compiled"


def key(
    toolchain: Toolchain,
    compile_steps: list[tuple[list[str], dict[str, str]]],
    file: str,
    program: str,
    beside: dict[str, bytes] | None = None,
) -> str:
    """The key of a compile: its toolchain as it is on disk now, its commands, its file and its text, and the
    files `beside` it (a /run_code request's: a header it includes)."""
    tools = []
    for path in sorted(toolchain.tools.values()):
        found = os.stat(path)
        tools.append([path, found.st_size, found.st_mtime_ns])
    others = sorted((name, hashlib.sha256(content).hexdigest()) for name, content in (beside or {}).items())
    text = json.dumps([tools, compile_steps, file, program, *([others] if others else [])])
    return hashlib.sha256(text.encode()).hexdigest()


@contextmanager
def compiling(entry: str) -> Iterator[None]:
    """Held while `entry`'s program is looked for and compiled: one process of the host's at a time. The locks
    are striped by the key's first two digits (256 files at most, beside the entries' directory); the kernel
    lets go of one whose holder died."""
    path = directory().with_name("compiled.locks") / entry[:2]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(path, "a")  # noqa: SIM115 (closed below, which lets go of the lock)
    except OSError:  # no room: compile without waiting for anyone
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def get(entry: str, names: list[str]) -> dict[str, bytes] | None:
    """The files kept under `entry`, or None where any of `names` is not there."""
    where = directory() / entry[:2] / entry
    try:
        found = {name: (where / name).read_bytes() for name in names}
        os.utime(where)  # used: the last to go
    except OSError:
        return None
    return found


def put(entry: str, files: dict[str, bytes]) -> None:
    """Keep `files` under `entry` (a path of their own each: names without directories)."""
    root = directory() / entry[:2]
    try:
        root.mkdir(parents=True, exist_ok=True)
        made = Path(tempfile.mkdtemp(dir=root, prefix=".new-"))
        for name, content in files.items():
            (made / name).write_bytes(content)
        try:
            made.rename(root / entry)
        except OSError:  # another process kept it first
            shutil.rmtree(made, ignore_errors=True)
    except OSError:  # no room: the next one compiles anew
        return
    _written[0] += 1
    if _written[0] % CHECK_EVERY == 0:
        _trim()


def _trim() -> None:
    """Remove the oldest tenth of the entries where there are more than MOST."""
    entries = [path for root in directory().iterdir() if root.is_dir() for path in root.iterdir()]
    if len(entries) <= MOST:
        return
    entries.sort(key=lambda path: path.stat().st_mtime)
    for path in entries[: len(entries) // 10]:
        shutil.rmtree(path, ignore_errors=True)
