"""OCaml: MultiPL-E's `ocaml FILE` (the toplevel runs the program as a script), 15 s; its rows' tests are
asserts, a failed one an Assert_failure exception (MultiPL-E's AssertionError), a syntax error its
SyntaxError (evaluation/src/eval_ocaml.py)."""

import re

from codeexec.worker.languages.language import Language, SelfTest

LANGUAGE = Language(
    name="ocaml",
    title="OCaml",
    aliases=("ml", "ocaml"),
    tools=("ocaml",),
    package="ocaml-nox",
    file="main.ml",
    run=("ocaml", "{file}"),
    reads=("/usr/lib/ocaml",),
    failed_assertion=re.compile(r"Assert_failure"),
    syntax_text=re.compile(r"Syntax error"),
    version=("-version",),
)
SELF_TEST = SelfTest(
    passes='let () = assert (1 + 1 = 2); print_endline "hello"\n',
    fails="let () = assert (1 + 1 = 3)\n",
    fails_as="assertion_fail",
    broken="let x = \n",
)
