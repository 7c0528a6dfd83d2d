"""Environments: Pythons with the libraries a problem set's tasks need (BigCodeBench's 70 pinned ones, on
CPython 3.10), in which its candidates run. `codeexec env build` makes one in the data directory
(producer/local/venvs.py); a worker serves every environment its data directory holds (or those
CODEEXEC_ENVIRONMENTS names), takes the jobs of runs that need them from their own queues
(protocol/keys.py), and says which it has in its heartbeat, so that `codeexec status` can tell when
no live worker has a run's.

    <data_dir>/envs/<name>/venv/               its virtualenv
    <data_dir>/envs/<name>/environment.json    the Environment below, written last: without it, an
                                               environment is not (yet) built
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from codeexec.protocol.settings import Settings

NAME = re.compile(r"[a-z0-9][a-z0-9_.-]{0,63}")
MANIFEST = "environment.json"


class Environment(BaseModel):
    """A built environment, as its manifest records it."""

    name: str
    python: str = Field(description="Its interpreter (the virtualenv's python).")
    version: str = Field(description="That interpreter's version, e.g. 3.10.13.")
    requirements_sha256: str = Field(description="Of the requirements it was built from.")
    preload: list[str] = Field(
        default_factory=list,
        description="Modules a warm interpreter of it imports before its first fork (isolation fork), so that "
        "no candidate pays their import: those of the recipe that imported when it was built.",
    )
    not_preloaded: dict[str, str] = Field(
        default_factory=dict, description="Modules of the recipe's preload list that did not import, and why."
    )
    nltk_data: list[str] = Field(
        default_factory=list, description="NLTK data packages in it (its virtualenv's nltk_data), for its tasks."
    )
    missing_data: dict[str, str] = Field(
        default_factory=dict,
        description="NLTK data packages its recipe names that could not be fetched when it was built, and why.",
    )
    variables: dict[str, str] = Field(
        default_factory=dict, description="Set for its candidates (a non-GUI matplotlib, its config directory)."
    )
    built: float = Field(description="Unix time it was built.")

    def runner_options(self) -> dict[str, object]:
        """The RunnerConfig fields a candidate of this environment runs with."""
        return {"interpreter": self.python, "preload": self.preload, "variables": self.variables}


def directory(data_dir: Path) -> Path:
    return data_dir / "envs"


def load(data_dir: Path, name: str) -> Environment | None:
    """The environment `name` built in the data directory, or None."""
    try:
        return Environment.model_validate_json((directory(data_dir) / name / MANIFEST).read_text())
    except (OSError, ValidationError):
        return None


def built(data_dir: Path) -> list[Environment]:
    """Every environment built in the data directory, by name."""
    root = directory(data_dir)
    names = sorted(path.parent.name for path in root.glob(f"*/{MANIFEST}")) if root.is_dir() else []
    return [found for name in names if (found := load(data_dir, name)) is not None]


def served(settings: Settings) -> list[str]:
    """The environments a worker with these settings serves: CODEEXEC_ENVIRONMENTS, or every one built."""
    if settings.environments is not None:
        return sorted(settings.environments)
    return [environment.name for environment in built(settings.data_dir)]
