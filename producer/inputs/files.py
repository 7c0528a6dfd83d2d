"""Reading input files line by line, with errors that name the file and the line; writing the files a run
keeps, whole or not at all."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class InputError(Exception):
    """Bad input: the message says where (file:line) and what was expected. Nothing was enqueued."""


def open_text_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) for every line of a plain or gzipped file."""
    try:
        with path.open("rb") as probe:
            gzipped = probe.read(2) == b"\x1f\x8b"
        opener = gzip.open if gzipped else open
        with opener(path, "rb") as handle:
            yield from enumerate(handle, start=1)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file") from None
    except (OSError, EOFError) as exc:  # unreadable, or a corrupt gzip stream
        raise InputError(f"{path}: cannot read: {exc}") from None


def read_jsonl(path: Path, digest: hashlib._Hash | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; InputError on the first bad one, or an empty file.

    `digest`, if given, is fed every line as read (decompressed), to fingerprint the content.
    """
    seen = False
    for line_no, raw in open_text_lines(path):
        if digest is not None:
            digest.update(raw)
        try:
            text = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")  # a byte-order mark some editors write
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}:{line_no}: not UTF-8 (byte {exc.start + 1} of the line)") from None
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{line_no}: malformed JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(value, dict):
            raise InputError(f"{path}:{line_no}: expected a JSON object, got {type(value).__name__}")
        seen = True
        yield line_no, value
    if not seen:
        raise InputError(f"{path}: empty file: expected one JSON object per line")


def write_whole(path: Path, text: str) -> Path:
    """Write `text` to `path` (and the directories it needs): all of it, or nothing, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return path
