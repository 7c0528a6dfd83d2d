"""What the test suite needs from outside Python: Debian's packages, in one table, each with the file it
provides that a test looks for, and who needs it; and every language's packages (Debian's and npm's), as its
module in worker/languages/ names them, read from codeexec's table of languages. `.ci/run` installs them all
(`python3 tests/system.py` prints their names); a test that needs one of the table's, where it is missing,
installs it itself if it can (root and apt-get: tests/test_compose.py) or is skipped, saying what is missing
and how to get it (missing()); a language's tests skip where its toolchain is missing, naming its packages.
Everything else the suite needs comes from PyPI (pip install '.[test]', and the virtualenvs tests make)
or is the machine's: the supported Pythons (found on PATH or in pyenv's versions; each one missing is a
skip that names it) and the kernel's features (the sandbox's tests say which one it refuses).

npm's packages are for what Debian lacks (SandboxFusion's tsx and Jest: Debian's jest needs Debian's Node.js,
which these machines' Node.js 20 replaces): `.ci/run` installs them with `npm install -g` (`python3
tests/system.py npm` prints them).

Run as a script, it prints the packages' names, for apt-get install (with `npm`: npm's, for npm install -g).
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType
from typing import NamedTuple


class Need(NamedTuple):
    package: str
    provides: str  # a command on PATH, or an absolute path
    test: str  # the test that needs it
    why: str


ROOT = Path(__file__).resolve().parents[1]
REPORTS, MULTIHOST, COMPOSE = "tests/test_reports.py", "tests/test_multihost.py", "tests/test_compose.py"
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
]


def languages() -> ModuleType:
    """codeexec's table of languages (worker/languages/), read from this checkout: this script runs before
    codeexec and its requirements are installed (.ci/run), and the table imports nothing but Python's own
    modules (tests/test_languages.py checks that it loads without them)."""
    if importlib.util.find_spec("codeexec") is None:  # not installed: this checkout's own, its files as they are
        spec = importlib.util.spec_from_file_location(
            "codeexec", ROOT / "__init__.py", submodule_search_locations=[str(ROOT)]
        )
        assert spec is not None and spec.loader is not None
        sys.modules["codeexec"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["codeexec"])
    return importlib.import_module("codeexec.worker.languages")


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
    if sys.argv[1:] == ["npm"]:
        print(languages().npm_packages("all"))
    else:
        print(" ".join([need.package for need in NEEDS]), languages().packages("all"))
    sys.exit(0)
