"""Files of a candidate's working directory: put there before it starts, read back after it has ended
(a script's `files` and `fetch_files`: worker/judging/kinds/script.py), and files of its private SCRATCH, which
its runner copies into the working directory for the host to read.

The host writes and reads them, outside the sandbox, so neither may leave the directory: a path is
relative, without "..", and each of its components is opened below the one before with O_NOFOLLOW, so
a symbolic link the candidate left (to /etc/shadow, to another candidate's directory) is never followed,
and only a regular file is read. Nothing of the candidate runs while they are read (its PID namespace,
or process group, is gone), so what was checked is what is read.
"""

from __future__ import annotations

import base64
import os
import stat
from collections.abc import Collection, Mapping, Sequence

from codeexec.worker.candidate.sandbox import SCRATCH, SCRATCH_COPY, open_below, path_parts

#: What all of a run's fetched files may come to (a file a candidate writes may be up to its file size
#: limit): files beyond it are left out, as missing ones are.
FETCH_BYTES = 32 << 20


def put(workdir: str, files: Mapping[str, bytes], executable: Collection[str] = ()) -> None:
    """Write each file into the fresh working directory, making its directories; those named in `executable`
    may be executed (a compiled program kept from before). Raises ValueError for a path outside it (the
    producer refuses those first)."""
    for path, content in files.items():
        found = path_parts(path)
        if found is None:
            raise ValueError(f"{path!r} is not a path inside the working directory")
        directory = os.path.join(workdir, *found[:-1])
        os.makedirs(directory, exist_ok=True)
        mode = 0o755 if path in executable else 0o644
        fd = os.open(os.path.join(directory, found[-1]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)


def fetch(workdir: str, paths: Sequence[str]) -> dict[str, str]:
    """The files of the working directory named by `paths`, base64, as the candidate left them; a path
    that is not a regular file there (or is reached through a symbolic link) is left out, as are files
    once FETCH_BYTES are taken."""
    fetched: dict[str, str] = {}
    room = FETCH_BYTES
    for path in dict.fromkeys(paths):
        content = _read_below(workdir, _where(path), room)
        if content is not None:
            fetched[path] = base64.b64encode(content).decode("ascii")
            room -= len(content)
    return fetched


def scratch_paths(paths: Sequence[str]) -> list[str]:
    """The paths of SCRATCH among `paths`: its runner is to copy those files where fetch() finds them."""
    return [path for path in paths if path.startswith(f"{SCRATCH}/")]


def _where(path: str) -> list[str] | None:
    """The components below the working directory of the file a fetched path names: its own, or for a file
    of SCRATCH, its runner's copy in SCRATCH_COPY."""
    if path.startswith(f"{SCRATCH}/"):
        found = path_parts(path[len(SCRATCH) + 1 :])
        return None if found is None else [SCRATCH_COPY, SCRATCH.strip("/"), *found]
    return path_parts(path)


def _read_below(workdir: str, found: list[str] | None, room: int) -> bytes | None:
    if found is None:
        return None
    try:
        fd = open_below(workdir, found)
    except OSError:  # not there, not a directory on the way, a symbolic link
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > room:
            return None
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
