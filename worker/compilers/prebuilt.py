"""What a worker builds once, outside the sandbox and from the system's own files only, for its programs to
read and never write: C++'s precompiled system headers (cpp.py), Go's build cache of the standard library
and the tests' libraries (go.py). Each kind is a directory of the data directory's (`<data_dir>/<kind>/`),
one entry a key, each entry made whole in a directory of its own and renamed into place (another worker
process may build the same one at once: the first kept wins).

The sandbox's rules name a kind's directory when a language's toolchain is looked for (directory(), from
Language.directories()), so it is made then; they know it by its device and inode. A directory made again
since (the data directory removed and made anew) is not theirs: its entries are not used (ready() says so),
and programs compile as they would without them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

#: Each kind's directory as the sandbox's rules know it (device, inode).
_allowed: dict[str, set[tuple[int, int]]] = {}


def root(kind: str) -> Path:
    # The settings (pydantic's) when first asked for: the languages' table, which imports this module, is read
    # before codeexec's requirements are installed (tests/system.py, the worker image's build).
    from codeexec.protocol.settings import get_settings

    return get_settings().data_dir / kind


def directory(kind: str) -> str:
    """The kind's directory, made now and known from now on as the one the sandbox's rules name."""
    where = root(kind)
    where.mkdir(parents=True, exist_ok=True)
    _allowed.setdefault(kind, set()).add(_identity(where))
    return str(where)


def ready(kind: str) -> bool:
    """Whether the kind's directory is the one the sandbox's rules name (not one made again since)."""
    try:
        return _identity(root(kind)) in _allowed.get(kind, set())
    except OSError:
        return False


def entry(kind: str, key: str, build: Callable[[Path], bool]) -> Path | None:
    """The kind's entry `key`: built by build(a new directory), which says whether it succeeded, where it is
    not there yet; None where the directory is not ready() or the build failed."""
    if not ready(kind):
        return None
    found = root(kind) / key
    if found.exists():
        return found
    try:
        building = Path(tempfile.mkdtemp(dir=root(kind), prefix=".new-"))
    except OSError:
        return None
    if not build(building):
        remove(building)
        return None
    try:
        os.rename(building, found)
    except OSError:  # another process kept one first
        remove(building)
    return found if found.exists() else None


def _identity(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_dev, found.st_ino


def remove(path: Path) -> None:
    """Remove `path` and what it holds, whatever cannot be removed left."""
    shutil.rmtree(path, ignore_errors=True)
