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


def read_jsonl(
    path: Path, digest: hashlib._Hash | None = None, bad: list[str] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; InputError on an empty file, and on the first bad line,
    or, where `bad` is given, each bad line's error appended to it and the line passed over (to tell them all).

    `digest`, if given, is fed every line as read (decompressed), to fingerprint the content.
    """
    seen = False
    for line_no, raw in open_text_lines(path):
        if digest is not None:
            digest.update(raw)
        if not raw.strip():
            continue
        seen = True
        try:
            record = _object(raw, line_no)
        except ValueError as exc:
            if bad is None:
                raise InputError(f"{path}:{line_no}: {exc}") from None
            bad.append(f"{path}:{line_no}: {exc}")
            continue
        yield line_no, record
    if not seen:
        raise InputError(f"{path}: empty file: expected one JSON object per line")


def _object(raw: bytes, line_no: int) -> dict[str, Any]:
    """A JSONL line's object; ValueError saying what is wrong with it."""
    try:
        text = raw.decode("utf-8-sig" if line_no == 1 else "utf-8")  # a byte-order mark some editors write
    except UnicodeDecodeError as exc:
        raise ValueError(f"not UTF-8 (byte {exc.start + 1} of the line)") from None
    try:
        value = json.loads(text.rstrip("\r\n"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON: {exc.msg} ({json_error(exc)[1]})") from None
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


def json_error(exc: json.JSONDecodeError) -> tuple[int, str]:
    """The line of a JSON error, and its column on that line, as words. A missing delimiter is where the last
    value ended, not at the next one's start on a line further down (json's own place for it)."""
    position = exc.pos
    ended = len(exc.doc[:position].rstrip())
    if "delimiter" in exc.msg and "\n" in exc.doc[ended:position]:
        position = ended
    line = exc.doc.count("\n", 0, position) + 1
    start = exc.doc.rfind("\n", 0, position) + 1
    end = exc.doc.find("\n", position)
    column = position - start + 1
    at_end = position >= (len(exc.doc) if end < 0 else end)
    return line, f"column {column}, the line's end" if at_end else f"column {column}"


def write_whole(path: Path, text: str) -> Path:
    """Write `text` to `path` (and the directories it needs): all of it, or nothing, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    partial.replace(path)
    return path
