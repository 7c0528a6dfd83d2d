"""MultiPL-E's completions files, as its generation writes them: one JSON object a problem (`<name>.json` or
`<name>.json.gz`, in a directory), holding the problem's row (name, language, prompt, tests, stop_tokens)
and its `completions`, a list of strings. A directory of them (or one of them) is both a problems "file"
and a samples "file": `codeexec eval --problems DIR --samples DIR` judges every completion as MultiPL-E's
evaluation does (prompt + completion + "\\n" + tests). Files without `completions` (its .results.json)
are not read."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from codeexec.producer.inputs.files import InputError

SUFFIXES = (".json", ".json.gz")


def is_completions(path: Path) -> bool:
    """Whether `path` is a directory holding MultiPL-E's completions files, or one of them: a `.json` or
    `.json.gz` file whose whole text is one object with a list of `completions` (a problems file named
    .json, one object a line or an array, is not)."""
    if path.is_dir():
        return any(_one(file) for file in _files(path))
    return path.name.endswith(SUFFIXES) and ".results." not in path.name and _one(path)


def _one(file: Path) -> bool:
    try:
        text = _text(file)
        # Not an object (a problems file that is an array): not parsed here; JSON lines stop at the first.
        record = json.loads(text) if text.lstrip()[:1] == b"{" else None
    except (OSError, EOFError, ValueError):
        return False
    return isinstance(record, dict) and isinstance(record.get("completions"), list)


def _text(file: Path) -> bytes:
    data = file.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def _files(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.iterdir()):
        if path.name.endswith(SUFFIXES) and ".results." not in path.name:
            yield path


def records(path: Path, digest: Any = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(the file's name, its object) for each completions file of `path`; `digest` is fed each file's bytes.
    InputError names a file that is not one."""
    for file in _files(path) if path.is_dir() else [path]:
        try:
            record = json.loads(_text(file))
        except (OSError, EOFError, ValueError) as exc:  # unreadable, a corrupt gzip stream, not JSON
            raise InputError(f"{file}: not a MultiPL-E completions file: {exc}") from None
        if not isinstance(record, dict) or not isinstance(record.get("completions"), list):
            raise InputError(f"{file}: not a MultiPL-E completions file: no list of completions")
        wrong = next((n for n, text in enumerate(record["completions"]) if not isinstance(text, str)), None)
        if wrong is not None:
            raise InputError(f"{file}: completion {wrong}: a completion is a string")
        if digest is not None:
            digest.update(hashlib.sha256(json.dumps(record, sort_keys=True).encode()).digest())
        yield str(file), record
