"""Bash: `bash FILE`, 15 s (MultiPL-E's sh rows); "syntax error" in its stderr is syntax_error."""

import re

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="bash",
    title="Bash",
    aliases=("sh", "bash", "shell"),
    tools=("bash",),
    package="bash",
    file="main.sh",
    run=("bash", "{file}"),
    syntax_text=re.compile(r"syntax error"),
)
