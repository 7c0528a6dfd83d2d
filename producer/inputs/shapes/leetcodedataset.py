"""LeetCodeDataset's rows (task_id, input_output: [{input, output}], entry_point Solution().f): call-based
tests of Solution's method, each pair's input its arguments (LeetCode's "n = 7, queries = [[0,5]]"); a
problem on ListNode or TreeNode judged by its check(), split into asserts."""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from codeexec.producer.inputs.asserts import split_check
from codeexec.producer.inputs.competitive import python_value, task_id_of
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import AssertionTests, CallTests
from codeexec.protocol.models import Problem


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    task_id = task_id_of(record, ("task_id",), reading.position)
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
        pairs = python_value(pairs, "input_output")
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
            pair["output"] if returns_text else python_value(pair["output"], f"input_output: pair {number}: output")
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
        return python_value(ast.get_source_segment(source, node) or "", where)


_RETURNS_STR = re.compile(r"->\s*str\s*:")


SHAPE = Shape(
    "LeetCodeDataset's (task_id, input_output, entry_point)",
    13,
    lambda record: "input_output" in record and "entry_point" in record,
    problem,
)
