"""The one table of languages: each module of this folder is one language, which holds all of it (its names, its
packages, its commands, its dialects, its names in SandboxFusion's /run_code, its self-test:
worker/languages/language.py says what a module gives), found here by scanning the folder. Adding a language is
its module and its row in docs/languages.md.

A module may give DIALECTS: the same language as another benchmark's harness runs it, where that differs
from the module's own way (MultiPL-E's, where it has one): mxeval's TypeScript compile, its Go `go run`.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from codeexec.worker.languages.language import Language, RunCode, SelfTest


def _scan() -> dict[str, ModuleType]:
    """Each language's module, by the language's name: every module here but language.py."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name != "language":
            module = importlib.import_module(f"{__name__}.{info.name}")
            found[module.LANGUAGE.name] = module
    return dict(sorted(found.items()))


_MODULES = _scan()
#: Each language by its name.
LANGUAGES: dict[str, Language] = {name: module.LANGUAGE for name, module in _MODULES.items()}
#: Each language's self-test (language.py, SelfTest).
SELF_TESTS: dict[str, SelfTest] = {name: module.SELF_TEST for name, module in _MODULES.items()}
#: Each name a benchmark's file may give a language (MultiPL-E's, mxeval's, HumanEval-X's), lower-cased.
_ALIASES: dict[str, str] = {
    alias.lower(): lang.name for lang in LANGUAGES.values() for alias in (lang.name, *lang.aliases)
}
#: Benchmarks whose harnesses run a language their own way (a module's DIALECTS).
BENCHMARKS = ("multipl-e", "mxeval", "humaneval-x")
#: SandboxFusion's names of the languages of its /run_code that codeexec runs (worker/judging/kinds/script.py),
#: in the order of their names: each, codeexec's language and how SandboxFusion's runner runs a program in it
#: (language.py, RunCode).
RUN_CODE: dict[str, tuple[str, RunCode]] = dict(
    sorted(
        ((name, (language, served)) for language, module in _MODULES.items()
         for name, served in getattr(module, "RUN_CODE", {}).items()),
        key=lambda item: item[0].lower(),
    )
)  # fmt: skip


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
        for language in every_way(name_of(name) or name)
        for provides in (language, *language.libraries)
        for package in getattr(provides, kind).split()
    ]
    return list(dict.fromkeys(found))


def found_here() -> list[str]:
    """The languages whose toolchain this machine has (their own way: a benchmark's may want more)."""
    return [name for name, language in LANGUAGES.items() if not isinstance(language.toolchain(), str)]


def every_way(name: str) -> list[Language]:
    """The language called `name`, as each benchmark's harness runs it (HumanEval-X's Go needs testify)."""
    return [LANGUAGES[name], *dialects(name).values()]


def dialects(name: str) -> dict[str, Language]:
    """The language called `name` as other benchmarks' harnesses run it, by the benchmark's name."""
    return getattr(_MODULES[name], "DIALECTS", {})


def name_of(given: str) -> str | None:
    """codeexec's name of the language a benchmark's file calls `given`, or None where it has none."""
    return _ALIASES.get(given.strip().lower())


def run_code_language(name: str) -> Language | None:
    """The language SandboxFusion calls `name`, as its /run_code runs it; None for one codeexec does not run."""
    found = RUN_CODE.get(name)
    return None if found is None else language_of(found[0], found[1].dialect)


def language_of(name: str, benchmark: str = "") -> Language:
    """The language called `name` (codeexec's name), as `benchmark`'s harness runs it."""
    return dialects(name).get(benchmark, LANGUAGES[name])
