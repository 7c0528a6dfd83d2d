"""Problems in other languages than Python, in the shapes their benchmarks publish (SHAPES): each is a
ProgramTests problem (protocol/models.py), judged as its benchmark's harness judges it
(worker/judging/kinds/program.py, worker/languages/).

- MultiPL-E's rows (name, language, prompt, tests, stop_tokens; the Hugging Face nuprl/MultiPL-E rows, and
  the same in its completions files): a completion's program is prompt + completion + "\\n" + tests, the
  completion cut at the first stop token;
- MBXP's (mxeval's: task_id MBCPP/1, language, prompt, test): prompt + completion + test;
- HumanEval-X's (CodeGeeX's: task_id CPP/0, prompt, declaration, test): as CodeGeeX's evaluate_humaneval_x.py
  assembles them.

A row's language must be one codeexec runs, and its toolchain must be on this machine where the workers
are this machine's (worker/languages/: `codeexec doctor` lists them); else the file's line is named with
the package to install, and nothing is enqueued.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from codeexec.protocol.kinds import AssertionTests, ProgramTests
from codeexec.protocol.models import Problem
from codeexec.protocol.settings import get_settings
from codeexec.worker.languages import LANGUAGES, language_of, name_of

SHAPES = (
    "MultiPL-E's (name, language, prompt, tests, stop_tokens), MBXP's (task_id, language, prompt, test) or "
    "HumanEval-X's (task_id such as CPP/0, prompt, declaration, test)"
)
#: What a language field may say of Python: those rows are read as Python's shapes are.
PYTHON = {"python", "python3", "py"}
#: HumanEval-X's task id prefixes, and the languages they name.
HUMANEVAL_X = {"CPP": "cpp", "Java": "java", "JavaScript": "javascript", "Go": "go", "Rust": "rust", "Python": "python"}
_HUMANEVAL_X_ID = re.compile(r"^(?P<prefix>[A-Za-z]+)/\d+$")


class _MultiPLE(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str
    language: str
    prompt: str
    tests: str = Field(validation_alias=AliasChoices("tests", "test"))  # test: the copies DeepSeek's, Reflexion's
    stop_tokens: list[str] = []


class _MBXP(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    language: str
    prompt: str
    test: str


class _HumanEvalX(BaseModel):
    model_config = ConfigDict(extra="ignore")

    task_id: str
    prompt: str
    declaration: str = ""
    test: str
    imports: str = Field("", validation_alias="import")  # Go's: the prompt's import block
    test_setup: str = ""  # Go's: the test file's package and imports


def shape_of(record: dict[str, Any]) -> str | None:
    """Which benchmark's row this is, if it is one of another language than Python's."""
    language = record.get("language")
    if isinstance(language, str) and language.strip().lower() in PYTHON:
        return None
    if ("tests" in record or "test" in record) and "name" in record and isinstance(language, str):
        return "multipl-e"
    task_id = record.get("task_id")
    found = _HUMANEVAL_X_ID.match(task_id) if isinstance(task_id, str) else None
    if found and found["prefix"] in HUMANEVAL_X and "declaration" in record and not isinstance(language, str):
        return "humaneval-x"  # its Python rows too: their prompt, imports and test are CodeGeeX's
    if isinstance(language, str):
        return "mbxp"
    return None


def problem(record: dict[str, Any], shape: str) -> Problem:
    """The problem of a row of `shape`; ValueError says what is wrong (a language codeexec does not run,
    a toolchain this machine lacks)."""
    if shape == "multipl-e":
        row = _MultiPLE.model_validate(record)
        tests = ProgramTests(
            language=language_named(row.language, shape),
            tests=row.tests,
            stop_tokens=row.stop_tokens,
            benchmark=shape,
        )
        return Problem(task_id=row.name, prompt=row.prompt, tests=tests)
    if shape == "mbxp":
        mbxp = _MBXP.model_validate(record)
        language = language_named(mbxp.language, "mxeval")
        tests = ProgramTests(language=language, tests=mbxp.test, joiner="", benchmark="mxeval")
        return Problem(task_id=mbxp.task_id, prompt=mbxp.prompt, tests=tests)
    return _humaneval_x(_HumanEvalX.model_validate(record))


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


def _humaneval_x(row: _HumanEvalX) -> Problem:
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


#: CodeContests' Language enum (its solutions' `language`): 1 is Python 2, which codeexec does not run.
CODECONTESTS = {2: "cpp", 3: "python", 4: "java"}


def program_language(given: Any) -> str:
    """The language a competitive program is in, where its row or its sample says (a name, or CodeContests'
    number): Python where it says none, else codeexec's name of it, run as competitive programming's judges
    run it; ValueError for one codeexec does not run."""
    if isinstance(given, int) and not isinstance(given, bool):
        if given not in CODECONTESTS:
            raise ValueError(
                f"language {given}: CodeContests' {given} is not one codeexec runs (2 C++, 3 Python 3, 4 Java)"
            )
        given = CODECONTESTS[given]
    if given is None or (isinstance(given, str) and given.lower() in PYTHON):
        return "python"
    if not isinstance(given, str):
        raise ValueError(f"language: expected a language's name, got {given!r}")
    return language_named(given, "competitive")


def language_named(given: str, benchmark: str) -> str:
    """codeexec's name of the language a row names; ValueError where codeexec does not run it, or where
    the workers are this machine's (no CODEEXEC_REDIS_URL) and it lacks the toolchain. Workers elsewhere
    say so of theirs (an infra_error naming the package)."""
    name = name_of(given)
    if name is None:
        known = ", ".join(sorted(LANGUAGES))
        raise ValueError(f"language {given!r}: codeexec does not run it (it runs Python and {known})")
    language = language_of(name, benchmark)
    if language.refused:
        raise ValueError(f"language {given!r} of {benchmark}: {language.refused}")
    if get_settings().redis_url is None:
        found = language.toolchain()
        if isinstance(found, str):
            raise ValueError(f"language {given!r}: {found}")
    return name
