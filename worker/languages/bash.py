"""Bash: `bash FILE`, 15 s (MultiPL-E's sh rows); "syntax error" in its stderr is syntax_error."""

import re

from codeexec.worker.languages.language import Language, RunCode, SelfTest

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
SELF_TEST = SelfTest(
    passes="[[ $((1 + 1)) = 2 ]]\n",
    fails="set -e\n[[ $((1 + 1)) = 3 ]]\n",
    fails_as="error",
    broken="if then fi (\n",
)
RUN_CODE = {
    "bash": RunCode(
        "",
        echo='read n\necho "$n $((n + 1))"\n',
        failing="[ 1 -eq 2 ] || exit 1\n",
    ),
}
