"""Rust: MultiPL-E's `rustc FILE -o BIN` (no --edition: 2015), 15 s, then the binary, 5 s; a compile out of
time is a timeout there (codeexec: syntax_error, as every compile out of its limit). rustup's `rustc` is a
proxy that reads its home: codeexec runs the toolchain's own rustc (and cargo), from `rustc --print sysroot`.
A failed assert! or assert_eq! is assertion_fail.

HumanEval-X's programs are a cargo project's binary with its tests (CodeGeeX: `cargo check --bin X`, then
`cargo test --bin X`, edition 2021) that uses the rand, regex and md5 crates. The crates are Debian's
(`/usr/share/cargo/registry`; cargo cannot reach crates.io here), built once for each worker by cargo, offline,
outside the sandbox (prebuilt.py's kind CRATES, read-only to programs); a program is then checked and compiled
as cargo would check and compile it, by rustc with those crates (`--extern`): 0.2 s, not cargo's start and
its lock on the project. Debian has rand 0.8, CodeGeeX's lock rand 0.4: the producer says what that changes
(producer/inputs/programs.py)."""

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from codeexec.worker.compilers import prebuilt
from codeexec.worker.languages.language import Language, RunCode, SelfTest, Toolchain, Unavailable

#: Debian's crates, as cargo's directory source (each `librust-<crate>-dev` package puts its source here).
REGISTRY = "/usr/share/cargo/registry"
#: HumanEval-X's crates (CodeGeeX's Cargo.toml: rand 0.4, regex 1, md5 0.7.0), with their default features.
CRATES = {"rand": "0.8", "regex": "1", "md5": "0.7"}
#: The crates built once: prebuilt.py's kind, <data_dir>/crates/.
BUILT = "crates"


@dataclass(frozen=True)
class Rust(Language):
    def resolve(self, tool: str) -> str | None:
        """The toolchain's own `tool` (rustc, cargo), beside its rustc, not rustup's proxy (which needs
        HOME's ~/.rustup)."""
        found = super().resolve(tool)
        rustc = super().resolve("rustc")
        if rustc is None:
            return found
        try:
            sysroot = subprocess.run(
                [rustc, "--print", "sysroot"], capture_output=True, text=True, timeout=60, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return found
        own = os.path.join(sysroot, "bin", tool)
        return own if os.access(own, os.X_OK) else found


@dataclass(frozen=True)
class WithCrates(Rust):
    """Rust whose programs use CRATES: each compile step given the crates built once."""

    def directories(self, tools: dict[str, str]) -> tuple[str, ...]:
        return (*super().directories(tools), prebuilt.directory(BUILT))

    def steps(self, file: str, toolchain: Toolchain, program: str = "") -> list[tuple[str, list[str], dict[str, str]]]:
        deps, built = crates(toolchain)
        flags = ["-L", f"dependency={deps}", *(f"--extern={name}={path}" for name, path in built.items())]
        return [
            (kind, [*argv, *flags] if kind == "compile" else argv, env)
            for kind, argv, env in super().steps(file, toolchain, program)
        ]


def crates(toolchain: Toolchain) -> tuple[str, dict[str, str]]:
    """(the directory of the built crates and what they depend on, each crate's library): built here the
    first time, by the toolchain's cargo and rustc, offline from REGISTRY; Unavailable where it cannot be."""
    rustc, cargo = toolchain.tools["rustc"], toolchain.tools["cargo"]
    given = [[path, os.stat(path).st_size, os.stat(path).st_mtime_ns] for path in (rustc, cargo)]
    versions = sorted(name for name in os.listdir(REGISTRY) if not name.startswith("."))
    key = hashlib.sha256(json.dumps([given, CRATES, versions]).encode()).hexdigest()[:24]
    said: list[str] = []

    def build(directory: Path) -> bool:
        dependencies = "".join(f'{name} = "{version}"\n' for name, version in CRATES.items())
        (directory / "Cargo.toml").write_text(
            '[package]\nname = "crates"\nversion = "0.0.0"\nedition = "2021"\n\n[lib]\npath = "lib.rs"\n\n'
            f"[dependencies]\n{dependencies}"
        )
        (directory / "lib.rs").write_text("")
        (directory / ".cargo").mkdir()
        (directory / ".cargo" / "config.toml").write_text(
            f'[source.crates-io]\nreplace-with = "debian"\n\n[source.debian]\ndirectory = "{REGISTRY}"\n'
        )
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(directory),
               "CARGO_HOME": str(directory / ".cargo"), "RUSTC": rustc}  # fmt: skip
        done = subprocess.run([cargo, "build", "--offline", "--message-format=json"], cwd=directory, env=env,
                              capture_output=True, text=True, timeout=600, check=False)  # fmt: skip
        libraries = {}
        for line in done.stdout.splitlines():
            message = json.loads(line) if line.startswith("{") else {}
            if message.get("reason") == "compiler-artifact" and message["target"]["name"] in CRATES:
                [rlib] = [path for path in message["filenames"] if path.endswith(".rlib")]
                libraries[message["target"]["name"]] = os.path.basename(rlib)
        if done.returncode != 0 or set(libraries) != set(CRATES):
            said.append(done.stderr.strip()[-2000:])
            return False
        (directory / "crates.json").write_text(json.dumps(libraries))
        return True

    found = prebuilt.entry(BUILT, key, build)
    if found is None:
        raise Unavailable(
            f"could not build the crates {', '.join(CRATES)} from {REGISTRY} with {cargo}: "
            + (said[0] if said else f"{prebuilt.root(BUILT)} is not the sandbox's")
        )
    deps = found / "target" / "debug" / "deps"
    libraries = json.loads((found / "crates.json").read_text())
    return str(deps), {name: str(deps / library) for name, library in libraries.items()}


LANGUAGE = Rust(
    name="rust",
    title="Rust",
    aliases=("rs", "rust"),
    tools=("rustc",),
    package="rustc",
    file="main.rs",
    compile=(("rustc", "{file}", "-o", "{stem}"),),
    run=("./{stem}",),
    artifacts=("{stem}",),
    failed_assertion=re.compile(r"assertion (?:`left == right` )?failed|assertion failed"),
    compile_limit_s=15.0,
    run_limit_s=5.0,
)
#: cargo check --bin's check (its build without the tests), then cargo test --bin's compile, as rustc commands.
_CHECK = ("rustc", "--edition", "2021", "--crate-type", "bin", "--emit=metadata", "-o", "{stem}.rmeta", "{file}")
_TEST = ("rustc", "--edition", "2021", "--test", "{file}", "-o", "{stem}")
#: Its packages: rustc, cargo, and the crates with their default features' dependencies.
_CRATES_PACKAGES = "rustc cargo librust-rand-dev librust-regex+default-dev librust-md5-dev"
DIALECTS = {
    "humaneval-x": WithCrates(
        **{
            **vars(LANGUAGE),
            "tools": ("rustc", "cargo"),
            "package": _CRATES_PACKAGES,
            "needs": tuple(f"{REGISTRY}/{name}-{version}.*" for name, version in CRATES.items()),
            "compile": (_CHECK, _TEST),
        }
    ),
}
SELF_TEST = SelfTest(
    passes="fn main() { assert_eq!(1 + 1, 2); }",
    fails="fn main() { assert_eq!(1 + 1, 3); }",
    fails_as="assertion_fail",
    broken="fn main( {",
)
RUN_CODE = {
    "rust": RunCode(
        "",
        echo=(
            "use std::io::Read;\n"
            "fn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();\n"
            '  let n: i64 = s.trim().parse().unwrap(); println!("{} {}", n, n + 1); }\n'
        ),
        failing="fn main() { assert_eq!(1, 2); }\n",
    ),
}
