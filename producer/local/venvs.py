"""`codeexec env build`: an environment (worker/environments.py) made from PyPI into the data directory,
a virtualenv of its own with a problem set's pinned libraries, for its candidates to run in.

A recipe names the Python it needs, its requirements, the modules a warm interpreter preloads and the
NLTK data its tasks read. BigCodeBench's is its own evaluation environment (Requirements/requirements-eval.txt,
the pins as it gives them, and the pyarrow its Docker image adds) on CPython 3.10, which those pins need
(numpy 1.21.2, scipy 1.7.2 and tensorflow 2.11.0 have no wheels for later Pythons). Any other environment is
built from a requirements file of one's own.

NLTK data comes from NLTK's own server (or a mirror's index), fetched by the environment's own nltk into
the virtualenv's nltk_data, a place nltk searches (sys.prefix) and candidates may read. A candidate has
no network, so a task's own nltk.download() cannot fetch it then: it fails, and the task finds the data
fetched here. What could not be fetched is recorded in the manifest and said by `env build` and `env
list`, never silent: the build goes on without it (a machine that reaches only package registries).

An environment is built where it stays (a virtualenv cannot move), its manifest written last: a failed
or interrupted build leaves none, never half of one that a worker would take for whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from codeexec.producer.inputs.files import InputError
from codeexec.worker import environments
from codeexec.worker.environments import MANIFEST, NAME, Environment

_DATA = Path(__file__).resolve().parents[1] / "data"  # producer/data
#: What a preload check may take: importing tensorflow alone takes seconds.
_PROBE_TIMEOUT_S = 600


@dataclass(frozen=True)
class Recipe:
    """How an environment is made: its Python (a version to find, unless one is given), its requirements
    file, the modules a warm interpreter of it imports before forking, its candidates' variables and the
    NLTK data packages its tasks read."""

    python: str | None
    requirements: Path | None
    preload: tuple[str, ...] = ()
    variables: dict[str, str] = field(default_factory=dict)
    nltk_data: tuple[str, ...] = ()


RECIPES = {
    "bigcodebench": Recipe(
        python="3.10",
        requirements=_DATA / "BigCodeBench-requirements.txt",
        # Its tasks' most used libraries (pandas 426 tasks, numpy 334, matplotlib 309, sklearn 152, scipy 85,
        # seaborn 72): each candidate would otherwise spend ~0.6 s importing them. TensorFlow (4 tasks) is left
        # to the tasks that import it.
        preload=(
            "numpy",
            "pandas",
            "matplotlib",
            "matplotlib.pyplot",
            "scipy",
            "scipy.stats",
            "sklearn",
            "sklearn.preprocessing",
            "sklearn.model_selection",
            "sklearn.linear_model",
            "seaborn",
            "statsmodels.api",
            "requests",
            "bs4",
            "PIL.Image",
            "nltk",
        ),
        # No GUI: BigCodeBench's image has no display, and matplotlib picks a non-GUI backend there.
        variables={"MPLBACKEND": "Agg"},
        # What its tasks read (26 use nltk): BigCodeBench's CI fetches punkt and stopwords, v0.1.5 makes
        # 9 tasks call nltk.download() for them, and tasks 656, 726 and 734 download the other three.
        nltk_data=("punkt", "stopwords", "words", "averaged_perceptron_tagger", "vader_lexicon"),
    ),
}


def build(
    name: str,
    data_dir: Path,
    python: str | None = None,
    requirements: Path | None = None,
    preload: list[str] | None = None,
    nltk_data: list[str] | None = None,
    nltk_index: str | None = None,
    log: Callable[[str], object] = print,
) -> Environment:
    """Build the environment `name` (a recipe's, or one of `requirements`) and return it; InputError says
    what is wrong. pip's own output goes to this process's stdout and stderr. NLTK data comes from
    `nltk_index` (a server's index.xml) or NLTK's own server."""
    if not NAME.fullmatch(name):
        raise InputError(f"environment {name!r}: use lower-case letters, digits, '.', '_' and '-'")
    recipe = RECIPES.get(name) or Recipe(python=None, requirements=None)
    requirements = requirements or recipe.requirements
    if requirements is None:
        raise InputError(f"environment {name!r} has no recipe: give its requirements (--requirements FILE)")
    if not requirements.is_file():
        raise InputError(f"{requirements}: no such requirements file")
    interpreter = python or find_python(recipe.python)
    place = environments.directory(data_dir) / name
    # In place (a virtualenv, and the paths matplotlib's font cache records, belong where they were made);
    # the manifest goes first and comes back last, so a worker never takes a half-built one for built.
    (place / MANIFEST).unlink(missing_ok=True)
    shutil.rmtree(place, ignore_errors=True)
    place.mkdir(parents=True)
    log(f"building environment {name} in {place} with {interpreter}, from {requirements}")
    python_path = str(place / "venv" / "bin" / "python")
    _run([interpreter, "-m", "venv", str(place / "venv")])
    _run([python_path, "-m", "pip", "install", "--upgrade", "pip"])
    _run([python_path, "-m", "pip", "install", "-r", str(requirements)])
    modules = list(preload if preload is not None else recipe.preload)
    variables = dict(recipe.variables)
    if "matplotlib" in modules:
        # Its font cache, made by the probe: inside the virtualenv, which candidates may read (Python's prefix);
        # one they could not read would be rebuilt by each fresh candidate, and its lock refused.
        variables["MPLCONFIGDIR"] = str(place / "venv" / "matplotlib")
        Path(variables["MPLCONFIGDIR"]).mkdir()
    failed = _probe(python_path, modules, variables)
    wanted = list(nltk_data if nltk_data is not None else recipe.nltk_data)
    missing = _fetch_nltk_data(python_path, wanted, place / "venv" / "nltk_data", nltk_index) if wanted else {}
    version = subprocess.run(
        [python_path, "-c", "import platform; print(platform.python_version())"], capture_output=True, text=True
    ).stdout.strip()
    environment = Environment(
        name=name,
        python=python_path,
        version=version,
        requirements_sha256=hashlib.sha256(requirements.read_bytes()).hexdigest(),
        preload=[module for module in modules if module not in failed],
        not_preloaded=failed,
        nltk_data=[package for package in wanted if package not in missing],
        missing_data=missing,
        variables=variables,
        built=time.time(),
    )
    (place / MANIFEST).write_text(environment.model_dump_json(indent=2))
    return environment


def find_python(version: str | None) -> str:
    """An interpreter of `version` ("3.10") that runs: python3.10 on PATH, or pyenv's (a pyenv shim on PATH
    answers for the versions made global only); this one's without a version."""
    if version is None:
        return sys.executable
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = [shutil.which(f"python{version}")]
    found += [str(path) for path in sorted(pyenv.glob(f"{version}.*/bin/python{version}"), reverse=True)]
    for candidate in filter(None, found):
        said = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"], capture_output=True, text=True
        )
        if said.returncode == 0 and said.stdout.strip() == version:
            return candidate
    raise InputError(f"no Python {version} on this machine (python{version} on PATH, or pyenv's): give one (--python)")


def _run(command: list[str]) -> None:
    if subprocess.run(command).returncode != 0:
        raise InputError(f"the environment was not built: {' '.join(command)} failed")


def _probe(python: str, preload: list[str], variables: dict[str, str]) -> dict[str, str]:
    """Import each preload module once in the new environment, as its candidates' warm interpreter will
    (which also makes matplotlib's font cache); why those that do not import fail."""
    probe = (
        "import importlib, json, sys\n"
        "failed = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except BaseException as exc:\n"
        "        failed[name] = f'{type(exc).__name__}: {exc}'[:300]\n"
        "print(json.dumps(failed))\n"
    )
    done = subprocess.run(
        [python, "-c", probe, *preload],
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "OMP_NUM_THREADS": "1", **variables},
        timeout=_PROBE_TIMEOUT_S,
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise InputError(f"the new environment's Python does not run: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _fetch_nltk_data(python: str, packages: list[str], into: Path, index: str | None) -> dict[str, str]:
    """Fetch NLTK data packages with the environment's own nltk; why those that were not fetched failed."""
    fetch = (
        "import io, json, sys\n"
        "from nltk.downloader import Downloader\n"
        "downloader = Downloader(server_index_url=sys.argv[2] or None)\n"
        "missing = {}\n"
        "for package in sys.argv[3:]:\n"
        "    try:\n"
        "        downloader.download(package, download_dir=sys.argv[1], quiet=True, raise_on_error=True,\n"
        "                            print_error_to=io.StringIO())\n"
        "    except BaseException as exc:\n"
        "        missing[package] = ' '.join(str(exc).split())[:300]\n"
        "print(json.dumps(missing))\n"
    )
    done = subprocess.run(
        [python, "-c", fetch, str(into), index or "", *packages], capture_output=True, text=True,
        timeout=_PROBE_TIMEOUT_S,
    )  # fmt: skip
    if done.returncode != 0 or not done.stdout.strip():
        reason = " ".join(done.stderr.split())[-300:] or f"exit status {done.returncode}"
        return dict.fromkeys(packages, f"nltk did not run: {reason}")
    return json.loads(done.stdout.strip().splitlines()[-1])
