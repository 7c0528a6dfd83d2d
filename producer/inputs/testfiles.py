"""Problems whose tests are a test file: BigCodeBench's rows, ClassEval's, and codeexec's own ``test_file``
shape; each made a Problem with SuiteTests (protocol/models.py), the tests it holds found by reading the
file (never by running it).

BigCodeBench (bigcodebench 0.2.5's defaults): its `test` module's TestCases class only, the sample's
program calibrated (code_prompt + "\\n    pass\\n" before it, so that imports and constants a model left
out are there), BigCodeBench's harness, 240 s a sample, address space and data 30 GiB and stack 10 MiB,
and the relaxed sandbox posture its tasks need (subprocess, sockets, shutil: docs/security.md).
ClassEval: its test module's `test_classes`, with the relaxed posture (two tasks use socket and urllib).
docs/formats.md documents each shape.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from codeexec.protocol.kinds import SuiteTests
from codeexec.protocol.models import Problem

SHAPES = (
    "BigCodeBench's (task_id, complete_prompt, code_prompt, test, entry_point), ClassEval's (task_id, test, "
    "test_classes), codeexec's (task_id, test_file, optional framework, test_classes, prompt, setup, timeout_s)"
)

#: BigCodeBench 0.2.5's memory limits (bigcodebench/evaluate.py, eval/utils.py), in bytes; its time limit,
#: 240 s, is its harness's (worker/judging/kinds/suite.py).
BIGCODEBENCH_LIMITS = {"memory_bytes": 30 << 30, "data_bytes": 30 << 30, "stack_bytes": 10 << 20}


def shape_of(record: dict[str, Any]) -> str | None:
    """The test-file shape of a problem record, or None (another kind of problem)."""
    if "test_file" in record:
        return "codeexec"
    if "code_prompt" in record and "complete_prompt" in record and "test" in record:
        return "bigcodebench"
    if "test_classes" in record and "test" in record:
        return "classeval"
    return None


def problem(record: dict[str, Any], shape: str) -> Problem:
    """The Problem of a record of `shape` (shape_of()); ValueError (or pydantic's ValidationError) says
    what is wrong."""
    if shape == "bigcodebench":
        bcb = _BigCodeBenchRecord.model_validate(record)
        return Problem(
            task_id=bcb.task_id,
            prompt=bcb.complete_prompt,
            entry_point=bcb.entry_point,
            tests=SuiteTests(
                code=bcb.test,
                classes=["TestCases"],
                names=test_names(bcb.test, "unittest", ["TestCases"]),
                harness="bigcodebench",
                calibration=bcb.code_prompt + "\n    pass\n",
                relaxed=True,
                environment="bigcodebench",
                **BIGCODEBENCH_LIMITS,
            ),
        )
    if shape == "classeval":
        classeval = _ClassEvalRecord.model_validate(record)
        # ClassEval_97 lists " Words2NumbersTestMain": ClassEval's own getattr() fails on it and counts that
        # class an error for every sample; the class it means is run here.
        classes = [name.strip() for name in classeval.test_classes]
        return Problem(
            task_id=classeval.task_id,
            prompt=classeval.skeleton,
            tests=SuiteTests(
                code=classeval.test,
                classes=classes,
                names=test_names(classeval.test, "unittest", classes),
                relaxed=True,
            ),
        )
    own = _TestFileRecord.model_validate(record)
    framework = own.framework or ("unittest" if _test_cases(_parse(own.test_file)) else "pytest")
    return Problem(
        task_id=own.task_id,
        prompt=own.prompt,
        setup=own.setup,
        tests=SuiteTests(
            framework=framework,
            code=own.test_file,
            classes=own.test_classes,
            names=test_names(own.test_file, framework, own.test_classes),
            time_limit_s=own.timeout_s,
        ),
    )


def test_names(text: str, framework: str, classes: list[str] | None) -> list[str]:
    """The tests a file holds, as the candidate side names them: 'Class.test_x' for each test method of
    the TestCase classes run (`classes`, or every one), and for pytest also each top-level test_ function
    and each method of a Test class. ValueError if it holds none."""
    tree = _parse(text)
    defined = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    if classes is not None:
        absent = [name for name in classes if name not in defined]
        if absent:
            raise ValueError(f"the test file defines no class {', '.join(absent)}")
        chosen = [defined[name] for name in classes]
    else:
        chosen = _test_cases(tree)
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


def _parse(text: str) -> ast.Module:
    try:
        with warnings.catch_warnings():  # a test file's invalid escapes are its own business
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except SyntaxError as exc:
        raise ValueError(f"the test file does not compile: {exc.msg} (its line {exc.lineno})") from None


def _test_cases(tree: ast.Module) -> list[ast.ClassDef]:
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


class _BigCodeBenchRecord(BaseModel):
    task_id: str = Field(min_length=1)
    complete_prompt: str
    code_prompt: str
    test: str
    entry_point: str = "task_func"


class _ClassEvalRecord(BaseModel):
    task_id: str = Field(min_length=1)
    skeleton: str = ""
    test: str
    test_classes: list[str] = Field(min_length=1)


class _TestFileRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    task_id: str = Field(min_length=1)
    test_file: str = Field(min_length=1)
    framework: Literal["unittest", "pytest"] | None = None
    test_classes: list[str] | None = Field(None, min_length=1)
    prompt: str = ""
    setup: str = ""
    timeout_s: float | None = Field(None, gt=0, allow_inf_nan=False)
