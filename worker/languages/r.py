"""R: `Rscript FILE`, 5 s (MultiPL-E: "unexpected" in what it says is syntax_error, a failure that says
nothing on stderr is an assertion's)."""

import re

from codeexec.worker.languages.language import Language, RunCode, SelfTest

LANGUAGE = Language(
    name="r",
    title="R",
    aliases=("r",),
    tools=("Rscript",),
    package="r-base-core",
    file="main.r",
    run=("Rscript", "{file}"),
    reads=("/usr/share/R", "/etc/R", "/usr/local/lib/R"),
    syntax_text=re.compile(r"unexpected"),
    failed_assertion=re.compile(r"is not TRUE|are not all TRUE"),
    run_limit_s=5.0,
)
SELF_TEST = SelfTest(
    passes="stopifnot(isTRUE(all.equal(1 + 1, 2)))\n",
    fails="stopifnot(isTRUE(all.equal(1 + 1, 3)))\n",
    fails_as="assertion_fail",
    broken="f <- function( {\n",
)
RUN_CODE = {
    "R": RunCode(
        "",
        echo='n <- as.integer(readLines(file("stdin"), n = 1))\ncat(n, n + 1, "\\n")\n',
        failing="stopifnot(1 == 2)\n",
    ),
}
