"""The one table of the kinds of test: each module of this folder is one kind (worker/judging/kind.py's Kind, its
KIND), found by scanning the folder. A problem's tests are one of protocol/kinds.py's models, named by their
`kind`; the queue's task looks its kind up here (kind_of()) and never asks which it has, and so do the
producer's reports.

Adding a kind is: its model in protocol/kinds.py (a TestSet, in the Tests union), its module here, its
tests, and its line in docs/architecture.md (which says how).
"""

from __future__ import annotations

import importlib
import pkgutil

from codeexec.protocol.kinds import TestSet
from codeexec.worker.judging.kind import Kind


def _scan() -> dict[str, Kind]:
    found: dict[str, Kind] = {}
    for module in pkgutil.iter_modules(__path__):
        kind = importlib.import_module(f"{__name__}.{module.name}").KIND
        if kind.name != module.name:
            raise ImportError(
                f"worker/judging/kinds/{module.name}.py judges {kind.name!r}: a kind's module is its name"
            )
        found[kind.name] = kind
    return dict(sorted(found.items()))


#: Each kind (TestSet.kind) and what it is.
KINDS: dict[str, Kind] = _scan()


def kind_of(tests: TestSet) -> Kind:
    """The kind of a test set."""
    return KINDS[tests.kind]
