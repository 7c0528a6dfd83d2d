"""Languages, as problem and sample files name them: what a file calls a language, and codeexec's name of it,
refused where codeexec does not run it or this machine lacks its toolchain (worker/languages/). The shapes of
rows in other languages than Python (producer/inputs/shapes/: MultiPL-E's, MBXP's, HumanEval-X's), the
competitive-programming shapes and the samples reader ask here.

A row's language must be one codeexec runs, and its toolchain must be on this machine where the workers
are this machine's (`codeexec doctor` lists them); else the file's line is named with the package to install,
and nothing is enqueued.
"""

from __future__ import annotations

from typing import Any

from codeexec.protocol.settings import get_settings
from codeexec.worker.languages import LANGUAGES, language_of, name_of

#: What a language field may say of Python: those rows are read as Python's shapes are.
PYTHON = {"python", "python3", "py"}


def another_language(record: dict[str, Any]) -> bool:
    """Whether a row says its language, and not Python's."""
    language = record.get("language")
    return isinstance(language, str) and language.strip().lower() not in PYTHON


#: CodeContests' Language enum (its solutions' `language`): 1 is Python 2, which codeexec does not run.
CODECONTESTS = {2: "cpp", 3: "python", 4: "java"}


def program_language(given: Any) -> str:
    """The language a competitive program is in, where its row or its sample says (a name, or CodeContests'
    number): Python where it says none, else codeexec's name of it, run as competitive programming's judges
    run it; ValueError for one codeexec does not run."""
    if isinstance(given, int) and not isinstance(given, bool):
        if given not in CODECONTESTS:
            raise ValueError(
                f"language {given}: CodeContests' {given} is not one codeexec runs (2 C++, 3 Python 3, 4 Java)"
            )
        given = CODECONTESTS[given]
    if given is None or (isinstance(given, str) and given.lower() in PYTHON):
        return "python"
    if not isinstance(given, str):
        raise ValueError(f"language: expected a language's name, got {given!r}")
    return language_named(given, "competitive")


def language_named(given: str, benchmark: str) -> str:
    """codeexec's name of the language a row names; ValueError where codeexec does not run it, or where
    the workers are this machine's (no CODEEXEC_REDIS_URL) and it lacks the toolchain. Workers elsewhere
    say so of theirs (an infra_error naming the package)."""
    name = name_of(given)
    if name is None:
        known = ", ".join(sorted(LANGUAGES))
        raise ValueError(f"language {given!r}: codeexec does not run it (it runs Python and {known})")
    language = language_of(name, benchmark)
    if language.refused:
        raise ValueError(f"language {given!r} of {benchmark}: {language.refused}")
    if get_settings().redis_url is None:
        found = language.toolchain()
        if isinstance(found, str):
            raise ValueError(f"language {given!r}: {found}")
    return name
