"""TypeScript: MultiPL-E's `tsc --target esnext FILE` (any error, a type error too, fails the program),
then `node FILE.js`, 15 s each; mxeval's `tsc FILE --target es5 --lib es2016`, where a compile counts if tsc
emitted JavaScript: mxeval asks for exit status 2 (errors, output emitted), which its tests' untyped
`import ... from 'assert'` always gives where no @types/node is found; codeexec takes 0 or 2, so that a
machine with @types/node does not fail every program (docs/languages.md).

tsc kept running (warm_tsc.js, worker/compilers/persistent.py) compiles in place of a tsc command: tsc's own
command line, in the program's directory, with the standard library parsed once. Its statuses 0, 1 and 2
are tsc's (1: errors, nothing emitted; 2: errors, JavaScript emitted); 99 (tsc threw) and the program is
compiled by a tsc command.

SandboxFusion's `typescript` runs `tsx FILE` (npm's tsx: esbuild's transform, no type check: a type error
runs, a syntax error fails the run), here tsx's loader in node (`node --import`; tsx's command would serve
its child over a Unix socket, which the sandbox refuses); its `jest` runs a `.test.ts` file under Jest 29 with
Babel's env and TypeScript presets in a project of its runtime's (a package.json, a Babel configuration),
its results written to jest-report.json by jest-json-reporter (SandboxFusion's autoeval fetches them).
Both from npm, found where `npm install -g` put them."""

import json
import os
import re
from dataclasses import dataclass, replace
from pathlib import Path

from codeexec.worker.languages.javascript import NODE_PATH, NODE_PATHS
from codeexec.worker.languages.language import Language, RunCode, SelfTest, Toolchain

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


@dataclass(frozen=True)
class FromNpm(Language):
    """A run of an npm package's own file ("{package}": its directory, found from its command's real path)."""

    def steps(self, file: str, toolchain: Toolchain, program: str = "") -> list[tuple[str, list[str], dict[str, str]]]:
        real = Path(os.path.realpath(toolchain.tools[self.tools[-1]]))  # <npm's root>/<package>/.../<its command>
        package = str(next(path for path in real.parents if path.parent.name == "node_modules"))
        ways = super().steps(file, toolchain, program)
        return [(kind, [word.replace("{package}", package) for word in argv], env) for kind, argv, env in ways]


DIALECTS["sandboxfusion"] = FromNpm(
    **{
        **vars(LANGUAGE),
        "tools": ("node", "tsx"),
        "npm": "tsx@4",
        "compile": (),
        "run": ("node", "--import", "{package}/dist/loader.mjs", "{file}"),
        "artifacts": (),
        "env": {"NODE_PATH": NODE_PATH, "TSX_DISABLE_CACHE": "1"},  # its cache would be the host's /tmp
        "warm": (),
        "warm_files": (),
        "warm_statuses": frozenset(),
    }
)
_JEST = {"maxWorkers": 2, "testResultsProcessor": "jest-json-reporter"}
_BABEL = {"presets": [["@babel/preset-env", {"targets": {"node": "current"}}], "@babel/preset-typescript"]}
DIALECTS["jest"] = replace(
    DIALECTS["sandboxfusion"],
    tools=("node", "jest"),
    npm="jest@29 @jest/globals@29 jest-json-reporter@1 @babel/core@7 @babel/preset-env@7 @babel/preset-typescript@7",
    file="main.test.ts",
    # No cache (it would be the host's /tmp), no watchman: one file, in a directory of its own.
    run=("node", "{package}/bin/jest.js", "--ci", "--no-cache", "--watchman=false"),
    env={"NODE_PATH": NODE_PATH, "FORCE_COLOR": "0"},
    companions={
        "package.json": json.dumps({"jest": _JEST, "jestJsonReporter": {"outputFile": "jest-report.json"}}),
        "babel.config.json": json.dumps(_BABEL),
    },
)
SELF_TEST = SelfTest(
    passes="declare var require: any;\nconst assert = require('node:assert');\nassert.deepEqual(1 + 1, 2);\n",
    fails="declare var require: any;\nconst assert = require('node:assert');\nassert.deepEqual(1 + 1, 3);\n",
    fails_as="assertion_fail",
    broken="let x: number = 'text';\n",
)
RUN_CODE = {
    "typescript": RunCode(
        "sandboxfusion",
        echo="const n: number = Number(require('fs').readFileSync(0, 'utf8'));\nconsole.log(`${n} ${n + 1}`);\n",
        failing="import assert from 'assert';\nassert.strictEqual(1, 2);\n",
    ),
    "jest": RunCode(
        "jest",
        echo="import { expect, test } from '@jest/globals';\ntest('adds', () => { expect(1 + 1).toBe(2); });\n",
        failing="import { expect, test } from '@jest/globals';\ntest('adds', () => { expect(1 + 1).toBe(3); });\n",
    ),
}
