"""HumanEval-X's rows (CodeGeeX's: task_id such as CPP/0, prompt, declaration, test), in C++, Java, JavaScript,
Go, Rust and Python, assembled as CodeGeeX's evaluate_humaneval_x.py assembles its programs."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from codeexec.producer.inputs.programs import language_named
from codeexec.producer.inputs.shapes import Reading, Shape
from codeexec.protocol.kinds import AssertionTests, ProgramTests
from codeexec.protocol.models import Problem

#: HumanEval-X's task id prefixes, and the languages they name.
HUMANEVAL_X = {"CPP": "cpp", "Java": "java", "JavaScript": "javascript", "Go": "go", "Rust": "rust", "Python": "python"}
_HUMANEVAL_X_ID = re.compile(r"^(?P<prefix>[A-Za-z]+)/\d+$")


class _HumanEvalX(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    prompt: str
    declaration: str = ""
    test: str
    imports: str = Field("", validation_alias="import")  # Go's: the prompt's import block
    test_setup: str = ""  # Go's: the test file's package and imports


def problem(record: dict[str, Any], reading: Reading) -> Problem:
    return _assembled(_HumanEvalX.model_validate(record))


def _fits(record: dict[str, Any]) -> bool:
    """Its task id's prefix, a declaration, and no language field (its Python rows too: their prompt, imports
    and test are CodeGeeX's)."""
    task_id = record.get("task_id")
    found = _HUMANEVAL_X_ID.match(task_id) if isinstance(task_id, str) else None
    language = record.get("language")
    return bool(found and found["prefix"] in HUMANEVAL_X and "declaration" in record and not isinstance(language, str))


#: What CodeGeeX's HumanEval-X evaluation puts before a C++ program (codegeex/benchmark/utils.py's
#: IMPORT_HELPER), each where the prompt lacks it, and before a Python one.
_CPP_HEADERS = tuple(
    f"#include<{name}>"
    for name in ("stdlib.h", "algorithm", "math.h", "stdio.h", "vector", "string", "climits", "cstring", "iostream")
)
_PYTHON_IMPORTS = (
    "import math\nimport re\nimport sys\nimport copy\nimport datetime\nimport itertools\nimport collections\n"
    "import heapq\nimport statistics\nimport functools\nimport hashlib\nimport string\nfrom typing import *\n"
    "from collections import *\ntry:\n    import numpy\n    import numpy as np\nexcept ImportError:\n    pass"
)
#: The packages CodeGeeX's evaluation imports into a Go program whose generation names them (IMPORT_HELPER).
_GO_IMPORTS = ["math", "strings", "fmt", "strconv", "time", "bytes", "regexp", "sort", "math/rand", "crypto/md5"]
#: What CodeGeeX's evaluation puts before a Rust program's declaration: the binary's main.
_RUST_MAIN = "\nfn main(){ \n } \n"
#: rand 0.4's `gen_range(low, high)` (CodeGeeX's lock), which a HumanEval-X Rust test calls (Rust/50): rand
#: 0.8's (Debian's: worker/languages/rust.py) is `gen_range(low..high)`, the same values.
_RAND_04_RANGE = re.compile(r"\.gen_range\(([^(),]+),\s*([^()]+)\)")


def _assembled(row: _HumanEvalX) -> Problem:
    """A HumanEval-X row, assembled as CodeGeeX's evaluate_humaneval_x.py assembles its program (the
    generation after the prompt, then "\\n" and the test): C++'s missing headers first (IMPORT_HELPER);
    Go's test_setup first, then an import block of IMPORT_HELPER's packages that the generation names, and
    the prompt without its own imports; Rust's main and declaration first, the test right after the
    generation (rand 0.4's gen_range(low, high) in a test as rand 0.8 says it); Python's imports, its test
    calling check() itself."""
    found = _HUMANEVAL_X_ID.match(row.task_id)
    assert found is not None
    language = HUMANEVAL_X[found["prefix"]]
    if language == "python":
        tests = AssertionTests(assertions=[row.test])
        return Problem(
            task_id=row.task_id, prompt=row.prompt, setup=_PYTHON_IMPORTS, tests=tests, generation="codegeex"
        )
    prompt, test, joiner, head, imports = row.prompt, row.test, "\n", "", []
    if language == "cpp":
        prompt = "".join(f"{header}\n" for header in _CPP_HEADERS if header not in prompt) + "\n" + prompt
    if language == "go":  # the test file's head, then what the generation names of IMPORT_HELPER's packages
        prompt, head, imports = prompt.replace(row.imports, ""), row.test_setup, _GO_IMPORTS
    if language == "rust":  # a binary's main, the declaration, the prompt (a comment), and no "\n" before the test
        prompt, joiner = _RUST_MAIN + row.declaration + prompt, ""
        test = _RAND_04_RANGE.sub(r".gen_range(\1..\2)", test)
    tests = ProgramTests(
        language=language_named(language, "humaneval-x"),
        tests=test,
        joiner=joiner,
        benchmark="humaneval-x",
        head=head,
        imports=imports,
    )
    return Problem(task_id=row.task_id, prompt=prompt, tests=tests, generation="codegeex")


SHAPE = Shape("HumanEval-X's (task_id such as CPP/0, prompt, declaration, test)", 21, _fits, problem)
