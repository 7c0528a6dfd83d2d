"""C++: MultiPL-E's `g++ FILE -o BIN -std=c++17` (15 s), then the binary (15 s); mxeval's plain `g++` (the
compiler's default standard: gnu++17 for g++ 12) with 100 s to compile and 10 s to run; HumanEval-X's
`-std=c++11`. A failed assert() is assertion_fail."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="cpp",
    title="C++",
    aliases=("cpp", "c++", "cxx"),
    tools=("g++",),
    package="g++",
    file="main.cpp",
    compile=(("g++", "{file}", "-o", "{stem}", "-std=c++17"),),
    run=("./{stem}",),
    reads=("/usr/include",),
    failed_assertion=re.compile(r"Assertion `.*' failed"),
    compile_limit_s=15.0,
)
DIALECTS = {
    "mxeval": replace(LANGUAGE, compile=(("g++", "{file}", "-o", "{stem}"),), compile_limit_s=100.0, run_limit_s=10.0),
    "humaneval-x": replace(LANGUAGE, compile=(("g++", "-std=c++11", "{file}", "-o", "{stem}"),)),
}
