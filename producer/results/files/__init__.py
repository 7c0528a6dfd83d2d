"""The reference harnesses' own results files, written of a run so that scripts made for each reference read
codeexec's results: one module per file (EvalPlus's eval_results.json, LiveCodeBench's _eval_all.json,
MultiPL-E's results.json files, mxeval's _results.jsonl, BigCodeBench's _eval_results.json), each a
ResultsFile (its flag, the kinds of test whose runs it fits, how it is written), found by scanning this
folder. A flag that does not fit a run's problems is refused before anything is enqueued (fit())."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codeexec.producer.inputs.files import InputError
from codeexec.protocol.run import RunMeta

if TYPE_CHECKING:
    from codeexec.producer.run import Run


@dataclass(frozen=True)
class ResultsFile:
    """One reference's results file: its command-line `flag` (and `metavar`, `help`); `kinds`, the kinds of test
    (worker/judging/kinds/) a run must have some of for it to mean anything; `write(run, out, samples_path,
    make)`, which writes it and says what it wrote (`samples_path`: where the run's samples file is now, if it
    moved; `make`: it may submit and wait for what it needs, a ground-truth run, as eval does)."""

    flag: str
    metavar: str
    help: str
    kinds: frozenset[str]
    write: Callable[[Run, Path, Path | None, bool], list[str]]

    @property
    def dest(self) -> str:
        """Its flag's attribute on the command line's arguments."""
        return self.flag.removeprefix("--").replace("-", "_")

    def fits(self, meta: RunMeta) -> bool:
        return any(meta.has(kind) for kind in self.kinds)


def _scan() -> dict[str, ResultsFile]:
    found = {}
    for module in pkgutil.iter_modules(__path__):
        results_file = importlib.import_module(f"{__name__}.{module.name}").FILE
        found[results_file.flag] = results_file
    return dict(sorted(found.items()))


#: Each results file, by its flag.
RESULTS_FILES: dict[str, ResultsFile] = _scan()


def fit(meta: RunMeta, flags: Iterable[str]) -> None:
    """InputError for the first of `flags` whose results file does not fit the run: said before it is judged."""
    for flag in flags:
        results_file = RESULTS_FILES[flag]
        if not results_file.fits(meta):
            kinds = ", ".join(sorted(results_file.kinds))
            has = ", ".join(meta.kinds or ["assertions"])
            raise InputError(
                f"{flag} is for runs whose problems have {kinds} tests; run {meta.run!r}'s have {has} tests"
            )
