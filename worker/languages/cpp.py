"""C++: MultiPL-E's `g++ FILE -o BIN -std=c++17` (15 s), then the binary (15 s); mxeval's plain `g++` (the
compiler's default standard: gnu++17 for g++ 12) with 100 s to compile and 10 s to run; HumanEval-X's
`-std=c++11`. A failed assert() is assertion_fail.

The system headers a program includes first (MBXP's and MultiPL-E's `#include <bits/stdc++.h>`, a third of
a second of every compile's CPU to parse) are compiled once, into a precompiled header of the worker's
(`<data_dir>/pch/`, read-only to programs: worker/compilers/prebuilt.py), for each set of flags, once a
second program has begun with them: the compile then takes it with `-include`, which is what the
program's own first lines include (each header again is a no-op: they are guarded), and gcc falls back to
the headers themselves where it cannot use it. Only system headers (`#include <...>`) are ever compiled
outside the sandbox.
"""

import hashlib
import os
import re
import subprocess
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from codeexec.worker.compilers import prebuilt
from codeexec.worker.languages.language import Language, Library, RunCode, SelfTest, Toolchain

#: Libraries a program links where it includes their headers (HumanEval-X's CPP/162 uses OpenSSL's MD5,
#: which CodeGeeX links for it: libssl-dev).
LIBRARIES = {"openssl/": ("-lcrypto", "-lssl")}


#: The leading lines a precompiled header may stand for: blank, or a system header's #include.
_SYSTEM_INCLUDE = re.compile(r"^\s*#\s*include\s*<[\w+./-]+>\s*$")
#: How many programs have begun with each set of headers and flags in this process: the second builds it.
_seen: Counter[str] = Counter()


@dataclass(frozen=True)
class Cpp(Language):
    def steps(self, file: str, toolchain: Toolchain, program: str = "") -> list[tuple[str, list[str], dict[str, str]]]:
        found = super().steps(file, toolchain, program)
        linked = [flag for header, flags in LIBRARIES.items() if header in program for flag in flags]
        steps = []
        for kind, argv, env in found:
            if kind == "compile":
                # Those that must be the header's too, for gcc to take it (it ignores one made otherwise).
                flags = [word for word in argv[1:] if word.startswith(("-std=", "-O", "-D"))]
                header = precompiled(argv[0], flags, leading_includes(program))
                argv = [argv[0], *(["-include", header] if header else []), *argv[1:], *linked]
            steps.append((kind, argv, env))
        return steps

    def directories(self, tools: dict[str, str]) -> tuple[str, ...]:
        """Also the precompiled headers' (worker/compilers/prebuilt.py)."""
        return (*super().directories(tools), prebuilt.directory(PCH))


#: The precompiled headers' kind of prebuilt.py: <data_dir>/pch/.
PCH = "pch"


def leading_includes(program: str) -> str:
    """The system headers `program` includes before anything else, as its lines."""
    lines = []
    for line in program.splitlines():
        if _SYSTEM_INCLUDE.match(line) and ".." not in line:
            lines.append(line.strip())
        elif line.strip():
            break
    return "".join(f"{line}\n" for line in lines)


def precompiled(compiler: str, flags: list[str], includes: str) -> str | None:
    """The header that stands for `includes` compiled with `flags`, once a second program has asked for it
    (built here, outside the sandbox, the first time); None for one not built."""
    if not includes or not prebuilt.ready(PCH):
        return None
    key = hashlib.sha256(repr((compiler, os.stat(compiler).st_mtime_ns, flags, includes)).encode()).hexdigest()[:24]
    if not (prebuilt.root(PCH) / key / "prefix.h.gch").exists():
        _seen[key] += 1
        if _seen[key] < 2:
            return None

    def build(directory: Path) -> bool:
        header = directory / "prefix.h"
        header.write_text(includes)
        done = subprocess.run([compiler, *flags, "-x", "c++-header", str(header), "-o", f"{header}.gch"],
                              capture_output=True, timeout=300, check=False)  # fmt: skip
        return done.returncode == 0

    found = prebuilt.entry(PCH, key, build)
    return None if found is None else str(found / "prefix.h")


LANGUAGE = Cpp(
    name="cpp",
    title="C++",
    aliases=("cpp", "c++", "cxx"),
    tools=("g++",),
    package="g++",
    file="main.cpp",
    compile=(("g++", "{file}", "-o", "{stem}", "-std=c++17"),),
    run=("./{stem}",),
    artifacts=("{stem}",),
    reads=("/usr/include",),
    failed_assertion=re.compile(r"Assertion `.*' failed"),
    compile_limit_s=15.0,
)
DIALECTS = {
    "mxeval": replace(LANGUAGE, compile=(("g++", "{file}", "-o", "{stem}"),), compile_limit_s=100.0, run_limit_s=10.0),
    "humaneval-x": replace(
        LANGUAGE,
        compile=(("g++", "-std=c++11", "{file}", "-o", "{stem}"),),
        libraries=(
            Library(("/usr/include/boost/any.hpp",), "HumanEval-X's CPP/22 and CPP/137", package="libboost-dev"),
            Library(("/usr/include/openssl/md5.h",), "HumanEval-X's CPP/162", package="libssl-dev"),
        ),
    ),
    # Competitive programming's: Codeforces' (and open-r1's judging of it) -O2 and ONLINE_JUDGE.
    "competitive": replace(
        LANGUAGE, compile=(("g++", "-O2", "-std=c++17", "-DONLINE_JUDGE", "{file}", "-o", "{stem}"),)
    ),
    # SandboxFusion's: OpenSSL's libraries linked where a program includes their headers (it links them
    # always where the machine has them); its limits are the request's.
    "sandboxfusion": replace(
        LANGUAGE,
        compile=(("g++", "-std=c++17", "{file}", "-o", "test", "-lpthread"),),
        run=("./test",),
        artifacts=("test",),
    ),
}
SELF_TEST = SelfTest(
    passes="#include <cassert>\nint main() { assert(1 + 1 == 2); }\n",
    fails="#include <cassert>\nint main() { assert(1 + 1 == 3); }\n",
    fails_as="assertion_fail",
    broken="int main( {",
)
RUN_CODE = {
    "cpp": RunCode(
        "sandboxfusion",
        echo=(
            "#include <iostream>\nint main() { int n; std::cin >> n; std::cout << n << ' ' << n + 1 << std::endl; }\n"
        ),
        failing="#include <cassert>\nint main() { assert(1 == 2); return 0; }\n",
    ),
}
