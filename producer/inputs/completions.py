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
    """Whether `path` is a directory of MultiPL-E's completions files, or one of them."""
    if path.is_dir():
        return any(_files(path))
    return path.name.endswith(SUFFIXES) and not path.name.endswith((".results.json", ".results.json.gz"))


def _files(directory: Path) -> Iterator[Path]:
    for path in sorted(directory.iterdir()):
        if path.name.endswith(SUFFIXES) and ".results." not in path.name:
            yield path


def records(path: Path, digest: Any = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(the file's name, its object) for each completions file of `path`; `digest` is fed each file's bytes.
    InputError names a file that is not one."""
    for file in _files(path) if path.is_dir() else [path]:
        try:
            data = file.read_bytes()
            text = gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data
            record = json.loads(text)
        except (OSError, EOFError, ValueError) as exc:  # unreadable, a corrupt gzip stream, not JSON
            raise InputError(f"{file}: not a MultiPL-E completions file: {exc}") from None
        if not isinstance(record, dict) or not isinstance(record.get("completions"), list):
            raise InputError(f"{file}: not a MultiPL-E completions file: no list of completions")
        wrong = next((n for n, text in enumerate(record["completions"]) if not isinstance(text, str)), None)
        if wrong is not None:
            raise InputError(f"{file}: completion {wrong}: a completion is a string")
        if digest is not None:
            digest.update(hashlib.sha256(text).digest())
        yield str(file), record
