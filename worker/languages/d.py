"""D: MultiPL-E runs `rdmd -unittest FILE` (dmd, 15 s): its tests are a unittest block and an empty main.
Debian has gdc: `gdc -funittest FILE -o BIN`, then the binary. A failed assert (core.exception.AssertError)
is assertion_fail."""

import re

from codeexec.worker.languages.language import Language, RunCode, SelfTest

LANGUAGE = Language(
    name="d",
    title="D",
    aliases=("d", "dlang", "humaneval_to_dlang.py"),
    tools=("gdc",),
    package="gdc",
    file="main.d",
    compile=(("gdc", "-funittest", "{file}", "-o", "{stem}"),),
    run=("./{stem}",),
    artifacts=("{stem}",),
    failed_assertion=re.compile(r"AssertError|unittest failure|FAILED unittests"),
    compile_limit_s=15.0,
)
SELF_TEST = SelfTest(
    passes="unittest { assert(1 + 1 == 2); }\nvoid main() {}\n",
    fails="unittest { assert(1 + 1 == 3); }\nvoid main() {}\n",
    fails_as="assertion_fail",
    broken="void main( {",
)
RUN_CODE = {
    "D_ut": RunCode(
        "",
        echo='import std.stdio;\nvoid main() { int n; readf(" %d", &n); writeln(n, " ", n + 1); }\n',
        failing="unittest { assert(1 == 2); }\nvoid main() {}\n",
    ),
}
