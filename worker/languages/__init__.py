"""The one table of languages: each is one module beside this one (worker/languages/language.py says what
a module gives), found here by its name or by the names benchmark files give it. Adding a language is:
its module, its line in MODULES, its tests (tests/test_languages.py), and its line in docs/languages.md.

A module may give DIALECTS: the same language as another benchmark's harness runs it, where that differs
from the module's own way (MultiPL-E's, where it has one): mxeval's TypeScript compile, its Go `go run`.
"""

from __future__ import annotations

from types import ModuleType

from codeexec.worker.languages import (
    bash,
    c,
    cpp,
    csharp,
    d,
    go,
    java,
    javascript,
    kotlin,
    lua,
    perl,
    php,
    r,
    racket,
    ruby,
    rust,
    scala,
    typescript,
    verilog,
)
from codeexec.worker.languages.language import Language

MODULES: tuple[ModuleType, ...] = (
    c,
    cpp,
    java,
    javascript,
    typescript,
    go,
    rust,
    bash,
    php,
    ruby,
    lua,
    perl,
    r,
    racket,
    scala,
    csharp,
    d,
    kotlin,
    verilog,
)
#: Each language by its name.
LANGUAGES: dict[str, Language] = {module.LANGUAGE.name: module.LANGUAGE for module in MODULES}
#: Each name a benchmark's file may give a language (MultiPL-E's, mxeval's, HumanEval-X's), lower-cased.
_ALIASES: dict[str, str] = {
    alias.lower(): lang.name for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)
}
#: Benchmarks whose harnesses run a language their own way (a module's DIALECTS).
BENCHMARKS = ("multipl-e", "mxeval", "humaneval-x")
#: SandboxFusion's names of the languages of its /run_code that codeexec runs (worker/judging/kinds/script.py):
#: each, codeexec's language and the dialect that runs a program as SandboxFusion's runner does ("": the
#: module's own way, where it is SandboxFusion's: `ruby FILE`, `rustc FILE -o BIN`).
RUN_CODE: dict[str, tuple[str, str]] = {
    "cpp": ("cpp", "sandboxfusion"),
    "java": ("java", "sandboxfusion"),
    "nodejs": ("javascript", "sandboxfusion"),
    "go": ("go", "sandboxfusion"),
    "go_test": ("go", "humaneval-x"),  # `go test FILE`, its status deciding, with testify
    "rust": ("rust", ""),
    "php": ("php", "sandboxfusion"),
    "bash": ("bash", ""),
    "ruby": ("ruby", ""),
    "lua": ("lua", ""),
    "perl": ("perl", ""),
    "R": ("r", ""),
    "racket": ("racket", ""),
    "scala": ("scala", "sandboxfusion"),
    "D_ut": ("d", ""),
    "junit": ("java", "junit"),
    "verilog": ("verilog", ""),
    "typescript": ("typescript", "sandboxfusion"),
    "jest": ("typescript", "jest"),
    "kotlin_script": ("kotlin", ""),
    "csharp": ("csharp", "sandboxfusion"),
}


def packages(names: str) -> str:
    """The Debian packages of the languages `names` names (comma- or space-separated; "all": every one), as
    each benchmark runs them, for `apt-get install`: the worker image's LANGUAGES build argument
    (Dockerfile). ValueError for a name that is not a language's."""
    return " ".join(_wanted(names, "package"))


def npm_packages(names: str) -> str:
    """npm's packages of the same languages, for `npm install -g` after them (SandboxFusion's tsx, Jest)."""
    return " ".join(_wanted(names, "npm"))


def _wanted(names: str, kind: str) -> list[str]:
    wanted = list(LANGUAGES) if names.strip() == "all" else [name for name in names.replace(",", " ").split()]
    unknown = [name for name in wanted if name_of(name) is None]
    if unknown:
        raise ValueError(f"not a language codeexec runs: {', '.join(unknown)} (one of {', '.join(LANGUAGES)})")
    found = [
        package
        for name in wanted
        for language in _all_ways(name_of(name) or name)
        for package in getattr(language, kind).split()
    ]
    return list(dict.fromkeys(found))


def _all_ways(name: str) -> list[Language]:
    """The language called `name`, as each benchmark's harness runs it (HumanEval-X's Go needs testify)."""
    return [LANGUAGES[name], *_dialects(name).values()]


def _dialects(name: str) -> dict[str, Language]:
    return getattr(MODULES[list(LANGUAGES).index(name)], "DIALECTS", {})


def name_of(given: str) -> str | None:
    """codeexec's name of the language a benchmark's file calls `given`, or None where it has none."""
    return _ALIASES.get(given.strip().lower())


def run_code_language(name: str) -> Language | None:
    """The language SandboxFusion calls `name`, as its /run_code runs it; None for one codeexec does not run."""
    found = RUN_CODE.get(name)
    return None if found is None else language_of(*found)


def language_of(name: str, benchmark: str = "") -> Language:
    """The language called `name` (codeexec's name), as `benchmark`'s harness runs it."""
    return _dialects(name).get(benchmark, LANGUAGES[name])
