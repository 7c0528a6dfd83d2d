"""`codeexec env`: build a problem set's environment (its pinned libraries, from PyPI: producer/local/venvs.py),
or list the environments built in the data directory."""

from __future__ import annotations

import argparse
from pathlib import Path

from codeexec.producer.entry.flags import parse_names
from codeexec.producer.inputs.files import InputError
from codeexec.producer.local.venvs import RECIPES, build
from codeexec.protocol.settings import get_settings
from codeexec.worker import environments
from codeexec.worker.environments import Environment

HELP = "build or list a problem set's libraries"


def add_flags(env: argparse.ArgumentParser) -> None:
    """The flags of `codeexec env`."""
    env.add_argument("action", choices=["build", "list"])
    env.add_argument("name", nargs="?", help="bigcodebench, or a name of one's own (with --requirements)")
    env.add_argument("--requirements", type=Path, help="its requirements file (default: the recipe's)")
    env.add_argument("--python", help="the Python it is made with (default: the recipe's version, found here)")
    env.add_argument("--preload", type=parse_names, help="modules, comma-separated (default: the recipe's)")
    env.add_argument(
        "--nltk-data", type=parse_names, help="NLTK data packages, comma-separated (default: the recipe's)"
    )
    env.add_argument("--nltk-index", help="the index.xml of NLTK data's server (default: NLTK's own)")


def run(args: argparse.Namespace) -> int:
    """`codeexec env build NAME` and `codeexec env list` (the flags above)."""
    data_dir = get_settings().data_dir
    if args.action == "list":
        found = environments.built(data_dir)
        for environment in found:
            print(f"{environment.name}: Python {environment.version}, {environment.python}")
            print(f"  preloads {', '.join(environment.preload) or 'nothing'}")
            _say_what_it_has_and_lacks(environment)
        if not found:
            print(f"no environment is built in {data_dir} (codeexec env build bigcodebench)")
        return 0
    if not args.name:
        raise InputError(f"codeexec env build: which environment? ({', '.join(RECIPES)}, or one of your own)")
    built = build(args.name, data_dir, args.python, args.requirements, args.preload, args.nltk_data, args.nltk_index)
    print(f"built environment {built.name} (Python {built.version}): workers that start from now on serve it")
    _say_what_it_has_and_lacks(built)
    return 0


def _say_what_it_has_and_lacks(environment: Environment) -> None:
    if environment.nltk_data:
        print(f"  NLTK data: {', '.join(environment.nltk_data)}")
    for module, why in environment.not_preloaded.items():
        print(f"  not preloaded: {module} ({why})")
    for package, why in environment.missing_data.items():
        print(f"  without NLTK data {package}: tasks that read it fail ({why})")
