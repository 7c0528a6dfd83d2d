"""What the test suite needs from outside Python, in one table: Debian's packages, each with the file it
provides that a test looks for, and who needs it. `.ci/run` installs them all (`python3 tests/system.py`
prints their names); a test that needs one, where it is missing, installs it itself if it can (root and
apt-get: tests/test_compose.py) or is skipped, saying what is missing and how to get it (missing()).
Everything else the suite needs comes from PyPI (pip install '.[test]', and the virtualenvs tests make)
or is the machine's: the supported Pythons (found on PATH or in pyenv's versions; each one missing is a
skip that names it) and the kernel's features (the sandbox's tests say which one it refuses).

npm's packages, for what Debian lacks (SandboxFusion's tsx and Jest: Debian's jest needs Debian's Node.js,
which these machines' Node.js 20 replaces), are a table of their own: `.ci/run` installs them with
`npm install -g` (`python3 tests/system.py npm` prints them).

Run as a script, it prints the packages' names, for apt-get install (with `npm`: npm's, for npm install -g).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import NamedTuple


class Need(NamedTuple):
    package: str
    provides: str  # a command on PATH, or an absolute path
    test: str  # the test that needs it
    why: str


REPORTS, MULTIHOST, COMPOSE = "tests/test_reports.py", "tests/test_multihost.py", "tests/test_compose.py"
LANGUAGES = "tests/test_languages.py"
NEEDS = [
    Need("chromium", "chromium", REPORTS, "the HTML report rendered in a headless browser"),
    Need("iproute2", "ip", MULTIHOST, "test hosts made of network namespaces (tests/netns.py)"),
    Need("podman", "podman", COMPOSE, "the compose file brought up under Podman"),
    Need("runc", "runc", COMPOSE, "Podman's runtime there: crun fails on a cgroup v1 hierarchy"),
    Need("catatonit", "/usr/libexec/podman/catatonit", COMPOSE, "the worker container's init (init: true)"),
    Need("netavark", "/usr/lib/podman/netavark", COMPOSE, "the compose project's network"),
    Need("aardvark-dns", "/usr/lib/podman/aardvark-dns", COMPOSE, "names on that network (workers reach `redis`)"),
    Need("iptables", "iptables", COMPOSE, "netavark's rules for that network and its published port"),
    Need("debootstrap", "debootstrap", COMPOSE, "the stand-in base images, built offline (tests/standins/build.sh)"),
    # Each language's toolchain (worker/languages/: its `package`; tests/test_languages.py checks they agree).
    Need("gcc", "gcc", LANGUAGES, "C"),
    Need("g++", "g++", LANGUAGES, "C++"),
    Need("openjdk-17-jdk-headless", "javac", LANGUAGES, "Java"),
    Need("libjavatuples-java", "/usr/share/java/javatuples.jar", LANGUAGES, "MultiPL-E's Java imports javatuples"),
    Need("nodejs", "node", LANGUAGES, "JavaScript"),
    Need("node-lodash", "/usr/share/nodejs/lodash", LANGUAGES, "MBXP's JavaScript and TypeScript tests require lodash"),
    Need("node-typescript", "tsc", LANGUAGES, "TypeScript"),
    Need("golang-go", "go", LANGUAGES, "Go"),
    Need(
        "golang-github-stretchr-testify-dev",
        "/usr/share/gocode/src/github.com/stretchr/testify",
        LANGUAGES,
        "HumanEval-X's Go tests import testify",
    ),
    Need("rustc", "rustc", LANGUAGES, "Rust (or rustup's, in ~/.cargo/bin)"),
    Need("cargo", "cargo", LANGUAGES, "HumanEval-X's Rust crates, built once (or rustup's, in ~/.cargo/bin)"),
    *(
        Need(package, f"/usr/share/doc/{package}", LANGUAGES, "HumanEval-X's Rust programs use rand, regex and md5")
        for package in ("librust-rand-dev", "librust-regex+default-dev", "librust-md5-dev")
    ),
    Need("bash", "bash", LANGUAGES, "Bash"),
    Need("iverilog", "iverilog", LANGUAGES, "Verilog"),
    Need("junit5", "/usr/share/java/junit-platform-console-standalone.jar", LANGUAGES, "SandboxFusion's junit"),
    Need("php-cli", "php", LANGUAGES, "PHP"),
    Need("ruby", "ruby", LANGUAGES, "Ruby"),
    Need("ruby-test-unit", "/usr/share/rubygems-integration/all/specifications", LANGUAGES, "MultiPL-E's Ruby tests"),
    Need("lua5.4", "lua5.4", LANGUAGES, "Lua"),
    Need("lua-unit", "/usr/share/lua/5.4/luaunit.lua", LANGUAGES, "MultiPL-E's Lua tests"),
    Need("perl", "perl", LANGUAGES, "Perl"),
    Need("libtest-deep-perl", "/usr/share/perl5/Test/Deep.pm", LANGUAGES, "MultiPL-E's Perl tests"),
    Need("libdata-compare-perl", "/usr/share/perl5/Data/Compare.pm", LANGUAGES, "mxeval's Perl tests"),
    Need("r-base-core", "Rscript", LANGUAGES, "R"),
    Need("racket", "racket", LANGUAGES, "Racket"),
    Need("scala", "scalac", LANGUAGES, "Scala"),
    Need("mono-mcs", "mcs", LANGUAGES, "C#"),
    Need("mono-runtime", "mono", LANGUAGES, "C#"),
    Need("libmono-system-numerics4.0-cil", "/usr/lib/mono/4.5/System.Numerics.dll", LANGUAGES, "MultiPL-E's C#"),
    Need("gdc", "gdc", LANGUAGES, "D"),
    Need("kotlin", "kotlinc", LANGUAGES, "SandboxFusion's kotlin_script"),
    Need(
        "libmono-system-net-http4.0-cil",
        "/usr/lib/mono/4.5/System.Net.Http.dll",
        LANGUAGES,
        "SandboxFusion's C#: .NET's implicit usings name System.Net.Http",
    ),
]
RUN_CODE = "tests/test_run_code_languages.py"
#: npm's (worker/languages/: a language's `npm`), each a command of its or of the package it goes with.
NPM = [
    Need("tsx@4", "tsx", RUN_CODE, "SandboxFusion's typescript"),
    *(
        Need(package, "jest", RUN_CODE, "SandboxFusion's jest: Jest, its JSON report, Babel's TypeScript")
        for package in (
            "jest@29",
            "@jest/globals@29",
            "jest-json-reporter@1",
            "@babel/core@7",
            "@babel/preset-env@7",
            "@babel/preset-typescript@7",
        )
    ),
]


def packages(test: str) -> list[str]:
    """The packages `test` needs."""
    return [need.package for need in NEEDS if need.test == test]


def present(need: Need) -> bool:
    return Path(need.provides).exists() if need.provides.startswith("/") else shutil.which(need.provides) is not None


def missing(test: str) -> str | None:
    """None if what `test` needs is installed; else what is missing, and how to get it (a skip's reason)."""
    absent = [need for need in NEEDS if need.test == test and not present(need)]
    if not absent:
        return None
    whats = "; ".join(f"{need.provides} ({need.why})" for need in absent)
    names = " ".join(need.package for need in absent)
    return f"not installed: {whats}: apt-get install {names} (.ci/run installs what the suite needs)"


if __name__ == "__main__":
    print(" ".join(need.package for need in (NPM if sys.argv[1:] == ["npm"] else NEEDS)))
    sys.exit(0)
