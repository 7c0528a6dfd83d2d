"""Go: MultiPL-E's rows are a test file (package <entry>_test, func Test...): `go test FILE_test.go`, 30 s in
all, whose stdout decides, not its status ([setup failed], [build failed]: it did not compile; FAIL: a test
failed); mxeval's are package main: `go run FILE.go`, 10 s (the build included), its status deciding.
The build cache is the working directory's (GOCACHE), as there is no other to write."""

import os
import re
from dataclasses import dataclass, replace

from codeexec.worker.languages.language import Language


@dataclass(frozen=True)
class Go(Language):
    def directories(self, tools: dict[str, str]) -> tuple[str, ...]:
        """Also where GOROOT's sources and packages really are (Debian's are links into /usr/share)."""
        root = os.path.dirname(os.path.dirname(os.path.realpath(tools["go"])))
        linked = [os.path.realpath(os.path.join(root, part)) for part in ("src", "pkg")]
        return tuple(dict.fromkeys([*super().directories(tools), *(path for path in linked if os.path.isdir(path))]))


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
    )
}
