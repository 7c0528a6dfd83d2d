"""R: `Rscript FILE`, 5 s (MultiPL-E: "unexpected" in what it says is syntax_error, a failure that says
nothing on stderr is an assertion's)."""

import re

from codeexec.worker.languages.language import Language

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
