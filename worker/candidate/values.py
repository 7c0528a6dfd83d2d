"""Values a candidate's process sends the host, which compares them (worker/process/split.py,
worker/judging/kinds/evalplus.py).

The candidate's process loads this module by path, beside child.py (worker/candidate/__init__.py): built-in
modules only, and extension modules (_blake2, array) only when a value needs them. The host imports it as
codeexec.worker.candidate.values, for the same canonical bytes of a constant, and to decode what was sent.

to_json() makes the record's lines (child.py). encode() makes JSON of builtin types that decode() turns
back into the same objects; canonical()
makes bytes that are equal for two values exactly when == holds between them, for outputs too large
to send (their digest goes instead).
"""

import _frozen_importlib

_gcd_import = _frozen_importlib._gcd_import  # bound before the child's import guards replace it
_set = set  # and before the candidate can replace builtins.set
PLAIN_BYTES = 1024  # values whose canonical bytes are longer go as digests
WHOLE_BYTES = 1 << 20  # the same, where the host needs the value itself to compare it (not only ==)


class Canonical:
    """canonical()'s bytes as they are made: counted and hashed, never all held (an output can be a
    gigabyte of them: MBPP+'s Mbpp/255 returns 1.7 million tuples)."""

    __slots__ = ("hash", "size")

    def __init__(self) -> None:
        self.hash = _gcd_import("_blake2").blake2b(digest_size=16)
        self.size = 0

    def append(self, part: bytes) -> None:
        self.hash.update(part)
        self.size += len(part)

    def extend(self, parts: list[bytes]) -> None:
        for part in parts:
            self.append(part)


# What a JSON string must escape. Characters UTF-8 cannot carry (lone surrogates, which the host's
# JSON parser refuses even as \uXXXX escapes) are first spelled out as the text "\udcff".
_JSON_ESCAPES = {code: f"\\u{code:04x}" for code in range(32)} | {ord('"'): '\\"', ord("\\"): "\\\\"}


def to_json(value: object) -> str:
    """The JSON of a line of the record (child.py): None, booleans, integers, text, lists and dicts (the json
    module would cost every fresh candidate ~6 ms to import)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.encode("utf-8", "backslashreplace").decode().translate(_JSON_ESCAPES) + '"'
    if isinstance(value, list):
        return "[" + ",".join(to_json(item) for item in value) + "]"
    assert isinstance(value, dict)
    return "{" + ",".join(f"{to_json(key)}:{to_json(item)}" for key, item in value.items()) + "}"


def canonical(value: object, out: list[bytes] | Canonical, depth: int = 0) -> None:
    """Bytes that are equal for two outputs exactly when == holds between them (for builtin types and
    their subclasses, taken as the builtin: a Counter as a dict, a namedtuple as a tuple): numbers by
    value (True, 1 and 1.0 alike), dicts and sets in sorted order. NaN is equal to nothing: refused."""
    if depth > 200:
        raise ValueError("nested too deeply")
    if value is None:
        out.append(b"N")
    elif isinstance(value, bool):
        out.append(b"i1;" if value else b"i0;")
    elif isinstance(value, int):
        out.append(b"i%x;" % int.__index__(value))
    elif isinstance(value, float):
        number = float.__float__(value)
        if number != number:
            raise ValueError("NaN")
        if number.is_integer():
            out.append(b"i%x;" % int(number))
        else:
            out.append(b"f" + float.__repr__(number).encode() + b";")
    elif isinstance(value, complex):
        if value.imag:
            out.append(b"c")
            canonical(value.imag, out, depth + 1)
        canonical(value.real, out, depth + 1)
    elif isinstance(value, str):
        data = str.encode(value, "utf-8", "surrogatepass")
        out.append(b"s%d:" % len(data) + data)
    elif isinstance(value, bytes):
        out.append(b"b%d:" % len(value) + bytes(value))
    elif isinstance(value, (list, tuple)):
        kind = list if isinstance(value, list) else tuple
        items = list(kind.__iter__(value))
        out.append(b"%s%d:" % (b"l" if kind is list else b"t", len(items)))
        whole = as_doubles(items)
        if whole is None:
            whole = as_strings(items)
        if whole is not None:
            out.append(whole)
            return
        for item in items:
            canonical(item, out, depth + 1)
    elif isinstance(value, (dict, set, frozenset)):
        parts = []
        kind = set if isinstance(value, set) else frozenset
        pairs = dict.items(value) if isinstance(value, dict) else ((item, None) for item in kind.__iter__(value))
        for key, item in pairs:
            part: list[bytes] = []
            canonical(key, part, depth + 1)
            if isinstance(value, dict):
                canonical(item, part, depth + 1)
            parts.append(b"".join(part))
        parts.sort()
        out.append((b"d%d:" if isinstance(value, dict) else b"e%d:") % len(parts))
        out.extend(parts)
    else:
        raise TypeError(type(value).__name__)


def as_doubles(items: list[object]) -> bytes | None:
    """A list of numbers each exactly a double (not NaN, not -0.0), as doubles: what canonical() makes
    of each, in one step (HumanEval/130 returns millions). None for any other list."""
    if len(items) < 64:
        return None
    try:
        doubles = _gcd_import("array").array("d", items)
    except (TypeError, OverflowError):
        return None
    # Every item equal to its double: no int beyond a double's precision, and no NaN.
    if doubles.tolist() != items:
        return None
    data = doubles.tobytes()
    if b"\x00\x00\x00\x00\x00\x00\x00\x80" in data:  # perhaps a -0.0, which equals 0 but is not its bytes
        return None
    return b"D" + data


def as_strings(items: list[object]) -> bytes | None:
    """A list of strings, as one part: their lengths, then their text. None for any other list.

    What canonical() makes of the items one by one would say as much, but a part per string is slow
    for millions of them; the choice depends only on the items being strings, which == keeps."""
    if len(items) < 8:
        return None
    if _set(map(type, items)) != {str}:
        if not all(isinstance(item, str) for item in items):
            return None
        items = [str.__str__(item) for item in items]  # subclasses as the builtin, as == takes them
    lengths = _gcd_import("array").array("Q", map(len, items))
    return b"S" + lengths.tobytes() + str.encode("".join(items), "utf-8", "surrogatepass")


def encode(value: object, depth: int = 0) -> object:
    """The output as JSON the host turns back into the same builtin objects (worker/judging/kinds/evalplus.py,
    decode()): null, true, false, a string, a small int, or [tag, ...] for the rest."""
    if depth > 200:
        raise ValueError("nested too deeply")
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        number = int.__index__(value)
        return number if -(1 << 53) < number < 1 << 53 else ["I", hex(number)]
    if isinstance(value, float):
        return ["F", float.__repr__(float.__float__(value))]
    if isinstance(value, str):
        text = str.__str__(value)
        try:
            text.encode()
        except UnicodeEncodeError:  # lone surrogates, which JSON cannot carry
            return ["U", text.encode("utf-16-le", "surrogatepass").hex()]
        return text
    if isinstance(value, list):
        return ["L", *(encode(item, depth + 1) for item in list.__iter__(value))]
    if isinstance(value, tuple):
        return ["T", *(encode(item, depth + 1) for item in tuple.__iter__(value))]
    if isinstance(value, dict):
        return ["D", *([encode(key, depth + 1), encode(item, depth + 1)] for key, item in dict.items(value))]
    if isinstance(value, (set, frozenset)):
        kind = set if isinstance(value, set) else frozenset
        return ["S" if kind is set else "Z", *(encode(item, depth + 1) for item in kind.__iter__(value))]
    if isinstance(value, complex):
        return ["C", float.__repr__(value.real), float.__repr__(value.imag)]
    if isinstance(value, bytes):
        return ["B", bytes.hex(value)]
    raise TypeError(type(value).__name__)


def output_entry(value: object, plain: int, view: str | None = None) -> tuple[list[object], str]:
    """[kind, payload] for what a call returned (the "check" record, child.py), and its digest.

    `view`, for EvalPlus's special oracles (worker/judging/helpers/oracles.py): "present" sends whether the
    value is not None (the truth of its not-None tasks, whose outputs are re.Match objects); "items"
    sends the set of an output's items where the output itself cannot be sent (a generator, a map),
    since the oracle compares set(output) and nothing else of it."""
    if view == "present":
        value = value is not None
    try:
        made = Canonical()
        canonical(value, made)
        digest = made.hash.hexdigest()
        if made.size > plain:
            return ["digest", digest], digest
        return ["value", encode(value)], digest
    except (TypeError, ValueError, RecursionError, MemoryError) as exc:
        if view == "items":
            return output_entry(_set(value), plain)
        return ["unencodable", str(exc)[:300] or type(value).__name__], ""


def digest(value: object) -> str:
    """The digest of the value's canonical() bytes, as a candidate's output is digested (the host's, of an
    expected value); "" where it has none (a NaN equals nothing, an object has no canonical bytes)."""
    made = Canonical()
    try:
        canonical(value, made)
    except (TypeError, ValueError, RecursionError):
        return ""
    return made.hash.hexdigest()


def decode(value):
    """The builtin object encode() made `value` of."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    tag, *rest = value
    if tag == "F":
        return float(rest[0])
    if tag == "I":
        return int(rest[0], 16)
    if tag == "L":
        return [decode(item) for item in rest]
    if tag == "T":
        return tuple(decode(item) for item in rest)
    if tag == "D":
        return {decode(key): decode(item) for key, item in rest}
    if tag in ("S", "Z"):
        return (set if tag == "S" else frozenset)(decode(item) for item in rest)
    if tag == "C":
        return complex(float(rest[0]), float(rest[1]))
    if tag == "B":
        return bytes.fromhex(rest[0])
    if tag == "U":
        return bytes.fromhex(rest[0]).decode("utf-16-le", "surrogatepass")
    raise ValueError(f"unknown tag {tag!r}")
