"""Rust: MultiPL-E's `rustc FILE -o BIN` (no --edition: 2015), 15 s, then the binary, 5 s; a compile out of
time is a timeout there (codeexec: syntax_error, as every compile out of its limit). rustup's `rustc` is a
proxy that reads its home: codeexec runs the toolchain's own rustc, from `rustc --print sysroot`. A failed
assert! or assert_eq! is assertion_fail."""

import os
import re
import subprocess
from dataclasses import dataclass

from codeexec.worker.languages.language import Language


@dataclass(frozen=True)
class Rust(Language):
    def resolve(self, tool: str) -> str | None:
        found = super().resolve(tool)
        if found is None:
            return None
        try:  # the toolchain's own rustc, not rustup's proxy (which needs HOME's ~/.rustup)
            sysroot = subprocess.run(
                [found, "--print", "sysroot"], capture_output=True, text=True, timeout=60, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return found
        own = os.path.join(sysroot, "bin", tool)
        return own if os.access(own, os.X_OK) else found


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
