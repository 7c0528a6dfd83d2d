"""LiveCodeBench's code-generation rows (question_id, public_test_cases, private_test_cases, metadata): stdin
tests, or call-based ones where every test is "functional" (its func_name); the private tests as JSON, or as
LiveCodeBench ships them, base64 of zlib of a pickle of that JSON (only plain data is unpickled)."""

from __future__ import annotations

import base64
import io
import pickle
import zlib
from typing import Any

from codeexec.producer.inputs.competitive import from_json, json_lines
from codeexec.producer.inputs.programs import program_language
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import CallTests, StdinTests
from codeexec.protocol.models import Problem

#: What a decoded LiveCodeBench test blob may expand to: its largest private tests are tens of MB.
_MAX_BLOB_BYTES = 1 << 30


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    tests = _tests(record.get("public_test_cases"), "public_test_cases") + _tests(
        record.get("private_test_cases"), "private_test_cases"
    )
    if not tests:
        raise ValueError("public_test_cases and private_test_cases: no test cases")
    metadata = record.get("metadata") or {}
    if isinstance(metadata, str):
        metadata = from_json(metadata, "metadata")
    if not isinstance(metadata, dict):
        raise ValueError("metadata: expected a JSON object")
    kinds = {test.get("testtype") for test in tests}
    if kinds - {"stdin", "functional"} or len(kinds) != 1:
        raise ValueError(
            f"testtype: expected every test 'stdin', or every test 'functional'; found {sorted(map(str, kinds))}"
        )
    inputs, outputs = [], []
    for number, test in enumerate(tests, start=1):
        given, wanted = test.get("input"), test.get("output")
        if not isinstance(given, str) or not isinstance(wanted, str):
            raise ValueError(f"test {number}: input and output must be text")
        inputs.append(given)
        outputs.append(wanted)
    if kinds == {"functional"}:
        if program_language(record.get("language")) != "python":
            raise ValueError("language: functional tests call a Python function; other languages take stdin tests")
        name = metadata.get("func_name")
        if not isinstance(name, str) or not name:
            raise ValueError("metadata: a functional problem needs func_name")
        cases = CallTests(
            inputs=[json_lines(text, f"test {number}: input") for number, text in enumerate(inputs, start=1)],
            outputs=[from_json(text, f"test {number}: output") for number, text in enumerate(outputs, start=1)],
            entry_point=name,
            extraction="lcb",
        )
    else:
        language = program_language(record.get("language"))
        cases = StdinTests(language=language, inputs=inputs, outputs=outputs, extraction="lcb")
    return Problem(task_id=str(record["question_id"]), tests=cases)


def _tests(value: Any, field: str) -> list[dict[str, Any]]:
    """LiveCodeBench's test cases: a JSON list, or (private ones) base64 of zlib of a pickle of that JSON."""
    if value in (None, "", []):
        return []
    if isinstance(value, list):
        tests = value
    elif not isinstance(value, str):
        raise ValueError(f"{field}: expected JSON text or a list")
    else:
        # JSON is a list; a blob is base64, which never starts with "[".
        text = value if value.lstrip().startswith("[") else _unpickle_blob(value, field)
        tests = from_json(text, field)
    if not isinstance(tests, list) or not all(isinstance(test, dict) for test in tests):
        raise ValueError(f"{field}: expected a list of {{input, output, testtype}} objects")
    return tests


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain data only: strings, numbers, lists, dicts (what LiveCodeBench's blobs hold). Any
    class or function a pickle names, whose loading could run code, is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"it names {module}.{name}, and only plain data is admitted")


def _unpickle_blob(text: str, field: str) -> str:
    try:
        packed = base64.b64decode(text.encode(), validate=True)
        inflater = zlib.decompressobj()
        data = inflater.decompress(packed, _MAX_BLOB_BYTES)
        if inflater.unconsumed_tail:
            raise ValueError(f"{field}: the test blob expands to more than {_MAX_BLOB_BYTES >> 20} MiB")
        value = _PlainUnpickler(io.BytesIO(data)).load()
    except (ValueError, zlib.error, pickle.UnpicklingError, EOFError) as exc:
        if isinstance(exc, ValueError) and str(exc).startswith(field):
            raise
        raise ValueError(f"{field}: neither JSON nor a base64, zlib, pickle blob of it: {exc}") from None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if not isinstance(value, str):
        raise ValueError(f"{field}: the blob holds {type(value).__name__}, not JSON text")
    return value


SHAPE = Shape(
    "LiveCodeBench's (question_id, public_test_cases, private_test_cases, metadata)",
    11,
    lambda record: "question_id" in record and "public_test_cases" in record,
    problem,
)
