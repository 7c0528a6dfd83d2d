"""C: gcc, as C++ is compiled (no MultiPL-E or mxeval evaluator has C; HumanEval-X has none either)."""

import re

from codeexec.worker.languages.language import Language, SelfTest

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
SELF_TEST = SelfTest(
    passes="#include <assert.h>\nint main(void) { assert(1 + 1 == 2); return 0; }\n",
    fails="#include <assert.h>\nint main(void) { assert(1 + 1 == 3); return 0; }\n",
    fails_as="assertion_fail",
    broken="int main( {",
)
