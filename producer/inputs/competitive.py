"""Competitive-programming problem files: LiveCodeBench's code-generation rows, APPS and TACO,
CodeContests, DeepCoder's (rllm) files, LeetCodeDataset, MapCoder's APPS selection, and codeexec's own
``cases`` shape; each made a Problem with StdinTests or CallTests (protocol/kinds.py), validated whole.

shape_of() tells them apart by their fields; problem() builds one. A record that is malformed raises
ValueError (or pydantic's ValidationError) saying what is wrong; producer/inputs/problems.py adds the file and
line. docs/formats.md documents each shape.
"""

from __future__ import annotations

import ast
import base64
import io
import json
import math
import pickle
import re
import zlib
from typing import Any

from codeexec.producer.inputs.humaneval import split_check
from codeexec.producer.inputs.leetcode import RLLM_PRELOAD, RLLM_SETUP
from codeexec.producer.inputs.programs import program_language
from codeexec.protocol.kinds import AssertionTests, CallTests, StdinTests
from codeexec.protocol.models import Problem

#: What a decoded LiveCodeBench test blob may expand to: its largest private tests are tens of MB.
_MAX_BLOB_BYTES = 1 << 30
#: LiveCodeBench's own limit where a problem has none: its --timeout default.
LCB_TIME_LIMIT_S = 6.0

SHAPES = (
    "LiveCodeBench's (question_id, public_test_cases, private_test_cases, metadata), APPS's or TACO's "
    "(input_output), CodeContests' (public_tests, private_tests, generated_tests), DeepCoder's (problem, tests), "
    "LeetCodeDataset's (task_id, input_output, entry_point), MapCoder's APPS (id, test_list, starter_code), "
    "codeexec's (task_id, cases)"
)


def shape_of(record: dict[str, Any]) -> str | None:
    """The competitive-programming shape of a problem record, or None (another kind of problem)."""
    if "cases" in record:
        return "codeexec"
    if "question_id" in record and "public_test_cases" in record:
        return "lcb"
    if "public_tests" in record or "private_tests" in record or "generated_tests" in record:
        return "codecontests"
    if "input_output" in record and "entry_point" in record:
        return "leetcodedataset"
    if "input_output" in record:
        return "apps"
    if "problem" in record and "tests" in record:
        return "deepcoder"
    tests = record.get("test_list")
    if isinstance(tests, list) and tests and isinstance(tests[0], dict):  # MBPP's test_list holds strings
        return "mapcoder"
    return None


def problem(record: dict[str, Any], shape: str, position: int) -> Problem:
    """The Problem of a record of `shape` (shape_of()); `position`: its 0-based place in the file, the
    task_id of a shape that has none (DeepCoder's)."""
    return _BUILDERS[shape](record, position)


# ---- LiveCodeBench ----------------------------------------------------------------------------------


def _lcb(record: dict[str, Any], _: int) -> Problem:
    tests = _lcb_tests(record.get("public_test_cases"), "public_test_cases") + _lcb_tests(
        record.get("private_test_cases"), "private_test_cases"
    )
    if not tests:
        raise ValueError("public_test_cases and private_test_cases: no test cases")
    metadata = record.get("metadata") or {}
    if isinstance(metadata, str):
        metadata = _json(metadata, "metadata")
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
            inputs=[_json_lines(text, f"test {number}: input") for number, text in enumerate(inputs, start=1)],
            outputs=[_json(text, f"test {number}: output") for number, text in enumerate(outputs, start=1)],
            entry_point=name,
            extraction="lcb",
        )
    else:
        language = program_language(record.get("language"))
        cases = StdinTests(language=language, inputs=inputs, outputs=outputs, extraction="lcb")
    return Problem(task_id=str(record["question_id"]), tests=cases)


def _lcb_tests(value: Any, field: str) -> list[dict[str, Any]]:
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
        tests = _json(text, field)
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


# ---- APPS, TACO -------------------------------------------------------------------------------------


def _apps(record: dict[str, Any], position: int) -> Problem:
    spec = record["input_output"]
    if isinstance(spec, str):
        spec = _json(spec, "input_output")
    if (
        not isinstance(spec, dict)
        or not isinstance(spec.get("inputs"), list)
        or not isinstance(spec.get("outputs"), list)
    ):
        raise ValueError("input_output: expected {inputs: [...], outputs: [...], fn_name?}")
    task_id = _task_id(record, ("problem_id", "task_id", "id", "name"), position)
    name = spec.get("fn_name")
    if name:
        # As rllm's taco_to_lcb_format takes them: APPS wraps a call's expected value in a list.
        outputs = [output[0] if isinstance(output, list) and len(output) == 1 else output for output in spec["outputs"]]
        inputs = spec["inputs"]
        wrong = next((n for n, given in enumerate(inputs, start=1) if not isinstance(given, list)), None)
        if wrong is not None:
            raise ValueError(f"input_output: input {wrong}: a call's arguments must be a list")
        cases = CallTests(inputs=inputs, outputs=outputs, entry_point=str(name), extraction="last_python")
    else:
        cases = StdinTests(
            inputs=_texts(spec["inputs"], "input"),
            outputs=_texts(spec["outputs"], "output"),
            extraction="last_python",
        )
    return Problem(task_id=task_id, tests=cases)


# ---- CodeContests -----------------------------------------------------------------------------------


def _codecontests(record: dict[str, Any], position: int) -> Problem:
    inputs: list[str] = []
    outputs: list[str] = []
    for field in ("public_tests", "private_tests", "generated_tests"):
        tests = record.get(field) or {"input": [], "output": []}
        if (
            not isinstance(tests, dict)
            or not isinstance(tests.get("input"), list)
            or not isinstance(tests.get("output"), list)
        ):
            raise ValueError(f"{field}: expected {{input: [...], output: [...]}}")
        if len(tests["input"]) != len(tests["output"]):
            raise ValueError(f"{field}: {len(tests['input'])} inputs but {len(tests['output'])} outputs")
        inputs += _texts(tests["input"], f"{field} input")
        outputs += _texts(tests["output"], f"{field} output")
    memory = record.get("memory_limit_bytes")
    cases = StdinTests(
        inputs=inputs,
        outputs=outputs,
        time_limit_s=_seconds(record.get("time_limit")),
        memory_bytes=int(memory) if memory else None,
        extraction="last_python",
    )
    return Problem(task_id=_task_id(record, ("name", "task_id"), position), tests=cases)


def _seconds(limit: Any) -> float | None:
    """CodeContests' time_limit: {seconds, nanos} (the dataset's), or a number of seconds; None or 0: none."""
    if limit in (None, 0, {}):
        return None
    if isinstance(limit, dict):
        return float(limit.get("seconds") or 0) + float(limit.get("nanos") or 0) / 1e9 or None
    if isinstance(limit, (int, float)) and not isinstance(limit, bool) and limit > 0:
        return float(limit)
    raise ValueError("time_limit: expected {seconds, nanos} or a positive number of seconds")


# ---- DeepCoder (rllm) -------------------------------------------------------------------------------


def _deepcoder(record: dict[str, Any], position: int) -> Problem:
    tests = record["tests"]
    if isinstance(tests, str):
        tests = _value(tests, "tests")
    task_id = _task_id(record, ("task_id", "id"), position)
    if isinstance(tests, dict) and "functional" in tests:  # LeetCode: a check(candidate) block of asserts
        test, entry_point = _check_call(str(tests["functional"]))
        return Problem(
            task_id=task_id,
            tests=AssertionTests(assertions=split_check(test, entry_point)),
            setup=RLLM_SETUP,
            preload=RLLM_PRELOAD,
        )
    if isinstance(tests, dict):  # CodeContests: {inputs: [...], outputs: [...]}
        given, wanted = tests.get("inputs"), tests.get("outputs")
    elif isinstance(tests, list):  # Codeforces: [{input, output}, ...]
        given = [test.get("input") if isinstance(test, dict) else None for test in tests]
        wanted = [test.get("output") if isinstance(test, dict) else None for test in tests]
    else:
        raise ValueError("tests: expected {inputs, outputs}, [{input, output}, ...] or {functional}")
    if not isinstance(given, list) or not isinstance(wanted, list):
        raise ValueError("tests: expected lists of inputs and outputs")
    cases = StdinTests(
        inputs=_texts(given, "tests: input"),
        outputs=_texts(wanted, "tests: output"),
        extraction="last_python",
    )
    return Problem(task_id=task_id, tests=cases)


_CHECK_CALL = re.compile(r"^check\((?P<entry>[^\n]+)\)\s*\Z", re.MULTILINE)


def _check_call(test: str) -> tuple[str, str]:
    """DeepCoder's LeetCode test: (its check() without the call at its end, what the call passes)."""
    lines = test.rstrip().split("\n")
    found = _CHECK_CALL.match(lines[-1]) if lines else None
    if found is None:
        raise ValueError("tests: functional: expected it to end with check(<entry point>)")
    return "\n".join(lines[:-1]), found["entry"]


# ---- LeetCodeDataset --------------------------------------------------------------------------------


def _leetcodedataset(record: dict[str, Any], position: int) -> Problem:
    task_id = _task_id(record, ("task_id",), position)
    entry_point = str(record["entry_point"])
    name = entry_point.removeprefix("Solution().")
    setup = str(record.get("prompt") or "")
    starter = str(record.get("starter_code") or "")
    if "ListNode" in starter or "TreeNode" in starter:
        # Its arguments are lists that its check() turns into nodes: the check itself tells.
        test = record.get("test")
        if not isinstance(test, str):
            raise ValueError("test: a problem on ListNode or TreeNode is judged by its check(), which is missing")
        tests = AssertionTests(assertions=split_check(test, entry_point))
        return Problem(task_id=task_id, tests=tests, setup=setup, entry_point=entry_point)
    pairs = record["input_output"]
    if isinstance(pairs, str):
        pairs = _value(pairs, "input_output")
    if not isinstance(pairs, list) or not pairs:
        raise ValueError("input_output: expected a list of {input, output}")
    inputs, outputs = [], []
    returns_text = _RETURNS_STR.search(starter) is not None
    for number, pair in enumerate(pairs, start=1):
        if (
            not isinstance(pair, dict)
            or not isinstance(pair.get("input"), str)
            or not isinstance(pair.get("output"), str)
        ):
            raise ValueError(f"input_output: pair {number}: expected {{input: text, output: text}}")
        if _NO_OUTPUT.match(pair["output"]):
            continue
        inputs.append(_arguments(pair["input"], f"input_output: pair {number}: input"))
        # Each output is str() of the value: a string's is itself.
        outputs.append(
            pair["output"] if returns_text else _value(pair["output"], f"input_output: pair {number}: output")
        )
    if not inputs:
        raise ValueError("input_output: no pair has an output (each is an error or a timeout)")
    cases = CallTests(inputs=inputs, outputs=outputs, entry_point=name, extraction="last_python")
    return Problem(task_id=task_id, tests=cases, setup=setup)


# LeetCodeDataset's pairs were made by running its reference solution; where that failed, the "output" is
# the failure ("Error: ...", "Execution timed out") or empty, and its check() leaves the pair out too.
_NO_OUTPUT = re.compile(r"\A(?:Error: .*|Execution timed out|\s*)\Z", re.DOTALL)


def _arguments(text: str, where: str) -> dict[str, Any] | list[Any]:
    """LeetCode's "n = 7, queries = [[0,5]]" as keyword arguments, or "[1,8,6], 2" as positional ones
    (values in JSON or Python notation)."""
    fast = _json_arguments(text)
    if fast is not None:
        return fast
    source = f"f({text})"
    try:
        call = ast.parse(source, mode="eval").body
    except SyntaxError:
        call = None
    if not isinstance(call, ast.Call) or (call.args and call.keywords) or any(k.arg is None for k in call.keywords):
        raise ValueError(f"{where}: expected name = value, ... or value, ... (got {text[:80]!r})")
    if call.args:
        return [_node_value(source, node, where) for node in call.args]
    return {k.arg: _node_value(source, k.value, where) for k in call.keywords if k.arg}


_NAME = re.compile(r"(?:\A|,)\s*([A-Za-z_]\w*)\s*=\s*")


def _json_arguments(text: str) -> dict[str, Any] | list[Any] | None:
    """The same, read as JSON (100 times faster than the parser): None where it is not JSON, or where a
    name may have been found inside a value."""
    names = _NAME.findall(text)
    try:
        value = json.loads("{" + _NAME.sub(r',"\1":', text)[1:] + "}" if names else "[" + text + "]")
    except (json.JSONDecodeError, IndexError):
        return None
    return value if not names or list(value) == names else None


def _node_value(source: str, node: ast.expr, where: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, MemoryError, RecursionError):  # JSON's null, true, false
        return _value(ast.get_source_segment(source, node) or "", where)


_RETURNS_STR = re.compile(r"->\s*str\s*:")
_NUMBER_NAMES = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def _value(text: str, where: str) -> Any:
    """A value written in Python or JSON notation (LeetCode writes null, true, false, and inf; DeepCoder's
    files hold str() of their tests)."""
    if text.strip() in _NUMBER_NAMES:
        return _NUMBER_NAMES[text.strip()]
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"{where}: not a value in Python or JSON notation: {text[:80]!r}") from None


# ---- MapCoder's APPS selection ----------------------------------------------------------------------


def _mapcoder(record: dict[str, Any], position: int) -> Problem:
    """MapCoder's APPS-150: every test a stdin one (its call-based problems read their arguments from
    stdin, as MapCoder asks), each with a list of right outputs, of which codeexec takes the first."""
    inputs, outputs = [], []
    for number, test in enumerate(record["test_list"], start=1):
        given, wanted = test.get("input"), test.get("output")
        if not isinstance(given, str) or not isinstance(wanted, list) or not wanted:
            raise ValueError(f"test_list: test {number}: expected {{input: text, output: [value, ...]}}")
        inputs.append(given)
        outputs.append(wanted[0] if isinstance(wanted[0], str) else str(wanted[0]))
    cases = StdinTests(inputs=inputs, outputs=outputs, extraction="last_python")
    return Problem(task_id=_task_id(record, ("id", "task_id", "name"), position), tests=cases)


# ---- codeexec's own ---------------------------------------------------------------------------------


def _codeexec(record: dict[str, Any], _: int) -> Problem:
    return Problem.model_validate(record)


# ---- helpers ----------------------------------------------------------------------------------------


def _task_id(record: dict[str, Any], fields: tuple[str, ...], position: int) -> str:
    for field in fields:
        value = record.get(field)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            return str(value)
    return str(position)


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = f"line {exc.lineno} of the text, column {exc.colno}" if "\n" in text else f"column {exc.colno}"
        raise ValueError(f"{where}: malformed JSON: {exc.msg} ({at})") from None


def _json_lines(text: str, where: str) -> list[Any]:
    """LiveCodeBench's call input: one JSON value (argument) a line."""
    return [_json(line, f"{where}, line {number}") for number, line in enumerate(text.split("\n"), start=1)]


def _texts(items: list[Any], what: str) -> list[str]:
    """Each of a list of stdin inputs or outputs as text (_text()), named "<what> <number>" in an error."""
    return [_text(item, f"{what} {number}") for number, item in enumerate(items, start=1)]


def _text(value: Any, where: str) -> str:
    """A stdin test's input or output: text, or a list of lines (APPS writes some so)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return "\n".join(value)
    raise ValueError(f"{where}: expected text, got {type(value).__name__}")


_BUILDERS = {
    "lcb": _lcb,
    "apps": _apps,
    "codecontests": _codecontests,
    "deepcoder": _deepcoder,
    "leetcodedataset": _leetcodedataset,
    "mapcoder": _mapcoder,
    "codeexec": _codeexec,
}
