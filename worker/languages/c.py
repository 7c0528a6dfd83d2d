"""C: gcc, as C++ is compiled (no MultiPL-E or mxeval evaluator has C; HumanEval-X has none either)."""

import re

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="c",
    title="C",
    aliases=("c",),
    tools=("gcc",),
    package="gcc",
    file="main.c",
    compile=(("gcc", "-std=c17", "{file}", "-o", "{stem}", "-lm"),),
    run=("./{stem}",),
    artifacts=("{stem}",),
    reads=("/usr/include",),
    failed_assertion=re.compile(r"Assertion `.*' failed"),
)
