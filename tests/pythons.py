"""The Pythons the suite runs under: every minor version pyproject.toml's requires-python admits, and the
interpreter found for each. The standard library only: `.ci/run` asks it before anything is installed, so
that the other Pythons' virtualenvs are made while the first pass runs.

Run as a script, it prints "minor path" for the oldest and the newest supported version ("-" for a path
that is missing)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The newest Python released when this was written: every supported version up to it is expected
# (and reported as skipped where missing); newer ones are tested where the machine has them.
NEWEST_RELEASED_MINOR = 13


def supported_minors() -> list[int]:
    """The Python 3 minor versions pyproject.toml's requires-python admits, up to the newest released."""
    match = re.search(r'^requires-python = ">=3\.(\d+)"$', (ROOT / "pyproject.toml").read_text(), re.MULTILINE)
    assert match, 'pyproject.toml: expected requires-python = ">=3.N"'
    return list(range(int(match[1]), NEWEST_RELEASED_MINOR + 1))


def find_interpreter(minor: int) -> str | None:
    """python3.<minor>: this one, one on PATH that runs, or one in pyenv's versions."""
    if sys.version_info[:2] == (3, minor):
        return sys.executable
    name = f"python3.{minor}"
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = [shutil.which(name), *sorted(map(str, pyenv.glob(f"3.{minor}.*/bin/{name}")), reverse=True)]
    for candidate in candidates:
        if not candidate:
            continue
        # The interpreter's own path, not the name found: a pyenv shim is a shell script that runs it
        # through `pyenv exec`, which adds PYENV_* variables to the candidate's environment.
        found = subprocess.run([candidate, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True)
        if found.returncode == 0 and found.stdout.strip():
            return found.stdout.strip()
    return None


def interpreters() -> dict[int, str | None]:
    """Every supported minor version and the interpreter found for it (None: not on this machine)."""
    found = {minor: find_interpreter(minor) for minor in supported_minors()}
    newer = NEWEST_RELEASED_MINOR + 1
    while interpreter := find_interpreter(newer):
        found[newer] = interpreter
        newer += 1
    return found


if __name__ == "__main__":
    found = interpreters()
    for minor in sorted({min(found), max(found)}):
        print(minor, found[minor] or "-")
