"""TypeScript: MultiPL-E's `tsc --target esnext FILE` (any error, a type error too, fails the program),
then `node FILE.js`, 15 s each; mxeval's `tsc FILE --target es5 --lib es2016`, where a compile counts if tsc
emitted JavaScript: mxeval asks for exit status 2 (errors, output emitted), which its tests' untyped
`import ... from 'assert'` always gives where no @types/node is found; codeexec takes 0 or 2, so that a
machine with @types/node does not fail every program (docs/languages.md).

tsc kept running (warm_tsc.js, worker/languages/warm.py) compiles in place of a tsc command: tsc's own
command line, in the program's directory, with the standard library parsed once. Its statuses 0, 1 and 2
are tsc's (1: errors, nothing emitted; 2: errors, JavaScript emitted); 99 (tsc threw) and the program is
compiled by a tsc command."""

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
    warm=("node", "{scratch}/warm_tsc.js", "tsc"),
    warm_files=("warm_tsc.js",),
    warm_statuses=frozenset({0, 1, 2}),
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
