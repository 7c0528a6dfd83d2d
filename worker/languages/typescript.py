"""TypeScript: MultiPL-E's `tsc --target esnext FILE` (any error, a type error too, fails the program),
then `node FILE.js`, 15 s each; mxeval's `tsc FILE --target es5 --lib es2016`, where a compile counts if tsc
emitted JavaScript: mxeval asks for exit status 2 (errors, output emitted), which its tests' untyped
`import ... from 'assert'` always gives where no @types/node is found; codeexec takes 0 or 2, so that a
machine with @types/node does not fail every program (docs/languages.md)."""

import re
from dataclasses import replace

from codeexec.worker.languages.javascript import NODE_PATH, NODE_PATHS
from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="typescript",
    title="TypeScript",
    aliases=("ts", "typescript"),
    tools=("tsc", "node"),
    package="node-typescript nodejs node-lodash",
    file="main.ts",
    compile=(("tsc", "--target", "esnext", "{file}"),),
    run=("node", "{stem}.js"),
    artifacts=("{stem}.js",),
    env={"NODE_PATH": NODE_PATH},
    reads=NODE_PATHS,
    failed_assertion=re.compile(r"ERR_ASSERTION|AssertionError"),
    compile_limit_s=15.0,
)
DIALECTS = {
    "mxeval": replace(
        LANGUAGE,
        compile=(("tsc", "{file}", "--target", "es5", "--lib", "es2016"),),
        compiled=frozenset({0, 2}),
        compile_limit_s=100.0,
        run_limit_s=10.0,
    )
}
