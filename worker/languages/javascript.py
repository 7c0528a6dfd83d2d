"""JavaScript: `node FILE`, MultiPL-E's 5 s and mxeval's 10 s. mxeval's tests require lodash: Node finds
Debian's node-lodash on NODE_PATH. A failed assert (node:assert's ERR_ASSERTION) is assertion_fail."""

import re
from dataclasses import replace

from codeexec.worker.languages.language import Language, Library, RunCode, SelfTest

#: Where Debian's Node packages are (node-lodash, node-typescript), and where `npm install -g` puts others (its
#: prefix's lib/node_modules: /usr/local's, or /usr's where Node is the system's): HumanEval-X's
#: JavaScript/162 requires npm's js-md5, which Debian lacks; SandboxFusion's TypeScript runs npm's tsx.
NODE_PATHS = ("/usr/share/nodejs", "/usr/local/lib/node_modules", "/usr/lib/node_modules")
NODE_PATH = ":".join(NODE_PATHS)

LANGUAGE = Language(
    name="javascript",
    title="JavaScript",
    aliases=("js", "javascript", "node", "nodejs"),
    tools=("node",),
    package="nodejs node-lodash",
    file="main.js",
    run=("node", "{file}"),
    env={"NODE_PATH": NODE_PATH},
    reads=NODE_PATHS,
    failed_assertion=re.compile(r"ERR_ASSERTION|AssertionError"),
    syntax_text=re.compile(r"SyntaxError"),
    run_limit_s=5.0,
)
DIALECTS = {
    "mxeval": replace(LANGUAGE, run_limit_s=10.0),
    # CodeGeeX's: console.assert prints "Assertion failed" and goes on; the run passes only if it printed nothing.
    "humaneval-x": replace(
        LANGUAGE,
        quiet="both",
        status_ignored=True,
        failed_assertion=re.compile(r"Assertion failed"),
        libraries=(
            Library(tuple(f"{path}/js-md5" for path in NODE_PATHS), "HumanEval-X's JavaScript/162", npm="js-md5"),
        ),
    ),
}
SELF_TEST = SelfTest(
    passes="const assert = require('node:assert');\nassert.deepEqual(1 + 1, 2);\n",
    fails="const assert = require('node:assert');\nassert.deepEqual(1 + 1, 3);\n",
    fails_as="assertion_fail",
    broken="function (",
)
RUN_CODE = {
    "nodejs": RunCode(
        "sandboxfusion",
        echo="const n = Number(require('fs').readFileSync(0, 'utf8'));\nconsole.log(`${n} ${n + 1}`);\n",
        failing="require('assert').strictEqual(1, 2);\n",
    ),
}
