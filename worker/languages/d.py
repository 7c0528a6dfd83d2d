"""D: MultiPL-E runs `rdmd -unittest FILE` (dmd, 15 s): its tests are a unittest block and an empty main.
Debian has gdc: `gdc -funittest FILE -o BIN`, then the binary. A failed assert (core.exception.AssertError)
is assertion_fail."""

import re

from codeexec.worker.languages.language import Language

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
