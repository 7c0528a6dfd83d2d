"""Racket: `racket FILE`, 15 s (MultiPL-E: rackunit exits 0 when a check fails, so anything on stderr fails
the program; "read-syntax" there is syntax_error)."""

import re

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="racket",
    title="Racket",
    aliases=("rkt", "racket"),
    tools=("racket",),
    package="racket",
    file="main.rkt",
    run=("racket", "{file}"),
    reads=("/usr/share/racket", "/etc/racket", "/usr/local/share/racket"),
    quiet="stderr",
    syntax_text=re.compile(r"read-syntax"),
    failed_assertion=re.compile(r"FAILURE"),
)
