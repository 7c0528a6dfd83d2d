"""What the test-file shapes (producer/inputs/shapes/: BigCodeBench's, ClassEval's, codeexec's own test_file)
share: the tests a test file holds, found by reading it (never by running it)."""

from __future__ import annotations

import ast
import warnings


def test_names(text: str, framework: str, classes: list[str] | None) -> list[str]:
    """The tests a file holds, as the candidate side names them: 'Class.test_x' for each test method of
    the TestCase classes run (`classes`, or every one), and for pytest also each top-level test_ function
    and each method of a Test class. ValueError if it holds none."""
    tree = parse(text)
    defined = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if classes is not None:
        absent = [name for name in classes if name not in defined]
        if absent:
            raise ValueError(f"the test file defines no class {', '.join(absent)}")
        chosen = [defined[name] for name in classes]
    else:
        chosen = test_cases(tree)
    if framework == "pytest":
        chosen += [node for node in defined.values() if node.name.startswith("Test") and node not in chosen]
    names = [f"{node.name}.{method}" for node in chosen for method in _test_methods(node, defined)]
    if framework == "pytest":
        names += [
            node.name
            for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")
        ]
    if not names:
        raise ValueError(f"the test file holds no {framework} tests")
    return names


def parse(text: str) -> ast.Module:
    try:
        with warnings.catch_warnings():  # a test file's invalid escapes are its own business
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"the test file does not compile: {exc.msg} (its line {exc.lineno})") from None


def test_cases(tree: ast.Module) -> list[ast.ClassDef]:
    """The module's classes that derive from a TestCase (by the name of a base), in file order."""
    found: list[ast.ClassDef] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            bases = {ast.unparse(base).rpartition(".")[2] for base in node.bases}
            if "TestCase" in bases or bases & {case.name for case in found}:
                found.append(node)
    return found


def _test_methods(node: ast.ClassDef, defined: dict[str, ast.ClassDef]) -> list[str]:
    """unittest's: the class's test* methods and those it inherits from classes of the same file, sorted."""
    methods: set[str] = set()
    stack, seen = [node], set()
    while stack:
        current = stack.pop()
        if current.name in seen:
            continue
        seen.add(current.name)
        methods.update(
            item.name
            for item in current.body
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")
        )
        stack.extend(defined[name] for base in current.bases if (name := ast.unparse(base)) in defined)
    return sorted(methods)
