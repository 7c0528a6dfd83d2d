"""Go: MultiPL-E's rows are a test file (package <entry>_test, func Test...): `go test FILE_test.go`, 30 s in
all, whose stdout decides, not its status ([setup failed], [build failed]: it did not compile; FAIL: a test
failed); mxeval's are package main: `go run FILE.go`, 10 s (the build included), its status deciding;
HumanEval-X's are test files of package main that import testify: `go test FILE` (CodeGeeX's, with
-timeout), its status deciding, testify from Debian's package in GOPATH (CodeGeeX vendors it into a module).
The build cache a program's go command reads is the worker's, built once for each way of running Go from
the standard packages the benchmarks import (and testify): without it every program builds ~140 packages
again (4 s of a HumanEval-X program's 4.4; 0.5 s with it). It is read-only to programs: what a program's
build makes is not kept, and a program cannot change what another's build reads."""

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, replace
from pathlib import Path

from codeexec.worker.compilers import prebuilt
from codeexec.worker.languages.language import Language, RunCode, SelfTest, Toolchain

#: Debian's golang-github-stretchr-testify-dev, which HumanEval-X's tests import (CodeGeeX vendors v1.8.0).
GOCODE = "/usr/share/gocode"
#: Go's build cache of the standard library and the tests' libraries: prebuilt.py's kind, <data_dir>/gocache/.
CACHE = "gocache"
#: The standard packages built into it besides what the tests' file imports: the benchmarks' programs' own.
STD = (
    "bufio", "bytes", "container/heap", "container/list", "crypto/md5", "encoding/json", "errors", "fmt", "math",
    "math/big", "math/rand", "os", "reflect", "regexp", "sort", "strconv", "strings", "time", "unicode",
    "unicode/utf8",
)  # fmt: skip


@dataclass(frozen=True)
class Go(Language):
    def directories(self, tools: dict[str, str]) -> tuple[str, ...]:
        """Also where GOROOT's sources and packages really are (Debian's are links into /usr/share), and the
        prebuilt build caches' directory."""
        root = os.path.dirname(os.path.dirname(os.path.realpath(tools["go"])))
        linked = [os.path.realpath(os.path.join(root, part)) for part in ("src", "pkg")]
        found = [*super().directories(tools), *(path for path in linked if os.path.isdir(path))]
        return tuple(dict.fromkeys([*found, prebuilt.directory(CACHE)]))

    def steps(self, file: str, toolchain: Toolchain, program: str = "") -> list[tuple[str, list[str], dict[str, str]]]:
        """Its steps, with the prebuilt build cache where there is one: read-only to the program, whose go
        command then builds only what is not in it (and keeps nothing: it cannot write there)."""
        found = super().steps(file, toolchain, program)
        cache = self.cache(toolchain)
        return found if cache is None else [(kind, argv, env | {"GOCACHE": cache}) for kind, argv, env in found]

    def cache(self, toolchain: Toolchain) -> str | None:
        """The build cache of this way of running Go, built here the first time (outside the sandbox: a test
        file of ours that imports STD, built by the same command and variables as a program's)."""
        go = toolchain.tools["go"]
        found = os.stat(go)
        given = [go, found.st_size, found.st_mtime_ns, self.file, self.run, sorted(self.env.items())]
        key = hashlib.sha256(json.dumps(given).encode()).hexdigest()[:24]

        def build(directory: Path) -> bool:
            work = directory / ".work"
            work.mkdir()
            test = self.file.endswith("_test.go")
            libraries = [*STD, *(["github.com/stretchr/testify/assert"] if self.env.get("GOPATH") == GOCODE else [])]
            imports = ['\t"testing"'] * test + [f'\t_ "{package}"' for package in libraries]
            body = "func TestCache(t *testing.T) {}" if test else "func main() {}"
            (work / self.file).write_text("package main\n\nimport (\n" + "\n".join(imports) + f"\n)\n\n{body}\n")
            # The step that runs the go command: the run (go test, go run), or the compile (go build).
            [(_, argv, env)] = [step for step in Language.steps(self, self.file, toolchain) if step[1][0] == go]
            env = {name: value.replace("{dir}", str(work)) for name, value in env.items()}
            base = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(work), "TMPDIR": str(work)}
            done = subprocess.run(argv, cwd=work, env=base | env | {"GOCACHE": str(directory)}, capture_output=True,
                                  timeout=600, check=False)  # fmt: skip
            prebuilt.remove(work)
            return done.returncode == 0

        built = prebuilt.entry(CACHE, key, build)
        return None if built is None else str(built)


LANGUAGE = Go(
    name="go",
    title="Go",
    aliases=("go_test.go", "go", "golang"),
    tools=("go",),
    package="golang-go",
    file="main_test.go",
    run=("go", "test", "{file}"),
    env={"GOCACHE": "{dir}/.gocache", "GOPATH": "{dir}/.gopath", "GO111MODULE": "off", "GOFLAGS": "-mod=mod"},
    failed_if=re.compile(r"^(?:--- )?FAIL\b", re.MULTILINE),
    syntax_text=re.compile(r"\[(?:setup|build) failed\]"),
    failed_assertion=re.compile(r"^--- FAIL", re.MULTILINE),
    run_limit_s=30.0,
    version=("version",),
)
DIALECTS = {
    "mxeval": replace(
        LANGUAGE, file="main.go", run=("go", "run", "{file}"), failed_if=None, syntax_text=None, run_limit_s=10.0
    ),
    "humaneval-x": replace(
        LANGUAGE,
        package="golang-go golang-github-stretchr-testify-dev",
        env={**LANGUAGE.env, "GOPATH": GOCODE},
        reads=(GOCODE, "/usr/include"),  # testify imports net/http: runtime/cgo is built with gcc
        needs=(f"{GOCODE}/src/github.com/stretchr/testify/assert",),
        failed_if=None,
    ),
    # SandboxFusion's go: `go build -o out FILE`, then ./out (its go_test is `go test FILE` with testify:
    # HumanEval-X's way).
    "sandboxfusion": replace(
        LANGUAGE,
        file="main.go",
        compile=(("go", "build", "-o", "out", "{file}"),),
        run=("./out",),
        artifacts=("out",),
        failed_if=None,
        syntax_text=None,
        failed_assertion=None,
    ),
}
SELF_TEST = SelfTest(
    passes='package p_test\nimport "testing"\nfunc TestP(t *testing.T) { if 1+1 != 2 { t.Errorf("no") } }\n',
    fails='package p_test\nimport "testing"\nfunc TestP(t *testing.T) { if 1+1 != 3 { t.Errorf("no") } }\n',
    fails_as="assertion_fail",
    broken="package p_test\nfunc (",
)
RUN_CODE = {
    "go": RunCode(
        "sandboxfusion",
        echo='package main\nimport "fmt"\nfunc main() { var n int; fmt.Scan(&n); fmt.Println(n, n+1) }\n',
        failing='package main\nfunc main() { if 1 != 2 { panic("assertion failed") } }\n',
    ),
    "go_test": RunCode(  # `go test FILE`, its status deciding, with testify
        "humaneval-x",
        echo=(
            "package main\n"
            'import ("testing"; "github.com/stretchr/testify/assert")\n'
            "func TestP(t *testing.T) { assert.Equal(t, 2, 1+1) }\n"
        ),
        failing=(
            "package main\n"
            'import ("testing"; "github.com/stretchr/testify/assert")\n'
            "func TestP(t *testing.T) { assert.Equal(t, 3, 1+1) }\n"
        ),
    ),
}
