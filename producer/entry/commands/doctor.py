"""`codeexec doctor`: what candidates run under on this machine, in each isolation mode and posture, and
the languages whose toolchains are here, with what each benchmark's way of running them lacks (a library
some of its programs need) and one command that installs everything missing; with --check, each of those
languages' self-test run as a program of it is (worker/languages/: a program that passes, one whose
assertion fails, one that does not compile)."""

from __future__ import annotations

import argparse
import json
import sys

from codeexec.producer.inputs.files import InputError
from codeexec.protocol.settings import get_settings

HELP = "the protections candidates run under on this machine, and its languages"


def run(args: argparse.Namespace) -> int:
    """Run a probe candidate in each isolation mode, with this machine's settings, and say what it ran
    under; exit 1 if the settings require a protection that is not in place."""
    from codeexec.worker.languages import LANGUAGES
    from codeexec.worker.process.protections import NAMES, missing, probe, programs_relaxations, relaxations

    settings = get_settings()
    found = probe()
    relaxed = {f"{mode}, relaxed posture": states for mode, states in probe(posture="relaxed").items()}
    programs = {f"{mode}, programs posture": states for mode, states in probe(posture="programs").items()}
    absent = {
        mode: missing(protections, settings.pid_namespace, settings.sandbox)
        for mode, protections in (found | relaxed | programs).items()
    }
    languages = {}
    checked = _checked(args.check)
    for name, language in LANGUAGES.items():
        path, said = language.describe()
        toolchain = language.toolchain()
        languages[name] = {"title": language.title, "aliases": list(language.aliases), "path": path} | (
            {"missing": said} if isinstance(toolchain, str) else {"version": said, "directories": toolchain.directories}
        )
        if not isinstance(toolchain, str):
            languages[name] |= {"lacking": _lacking(name)} if _lacking(name) else {}
        if name in checked and not isinstance(toolchain, str):
            languages[name]["checked"] = checked[name]
    install = _install(languages)
    if args.json:
        document = {"sandbox": settings.sandbox, "pid_namespace": settings.pid_namespace, "isolation": found}
        document |= {"relaxed": relaxed, "relaxations": relaxations(), "programs": programs}
        document |= {"programs_relaxations": programs_relaxations(), "languages": languages, "install": install}
        print(json.dumps(document))
    else:
        print(f"settings: CODEEXEC_SANDBOX={settings.sandbox}, CODEEXEC_PID_NAMESPACE={settings.pid_namespace}")
        for mode, protections in (found | relaxed | programs).items():
            print(f"isolation {mode}:")
            for name in NAMES:
                print(f"  {name:<14} {protections.get(name, 'unknown')}")
        print("the relaxed posture (BigCodeBench's and ClassEval's problems; docs/security.md) allows besides:")
        print("".join(f"  - {line}\n" for line in relaxations()), end="")
        print("the programs posture (programs in other languages; docs/languages.md) allows besides:")
        print("".join(f"  - {line}\n" for line in programs_relaxations()), end="")
        print("languages (docs/languages.md):")
        for name, found_ in languages.items():
            where = f"{found_['path']}  {found_['version']}" if "version" in found_ else f"missing: {found_['missing']}"
            print(f"  {found_['title'] + ' (' + name + ')':<24} {where}")
            for lacking in found_.get("lacking", []):
                print(f"  {'':<24} {lacking['way']} lacks {lacking['what']}: {lacking['why']} ({lacking['install']})")
            if "checked" in found_:
                for said in found_["checked"] or ["its self-test: passes, fails and refuses as it should"]:
                    print(f"  {'':<24} {said}")
        commands = [f"apt-get install {' '.join(install['apt'])}"] * bool(install["apt"])
        commands += [f"npm install -g {' '.join(install['npm'])}"] * bool(install["npm"])
        print(f"to install every language's toolchain and libraries: {' && '.join(commands)}" if commands else
              "every language's toolchain and libraries are here")  # fmt: skip
        for mode, names in absent.items():
            if names:
                print(f"codeexec: required, and not in place (isolation {mode}): {', '.join(names)}", file=sys.stderr)
    failed = [name for name, found_ in languages.items() if found_.get("checked")]
    if failed:
        print(f"codeexec: the self-test of {', '.join(failed)} went wrong (above)", file=sys.stderr)
    return 1 if any(absent.values()) or failed else 0


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--check",
        nargs="?",
        const="all",
        metavar="LANGUAGES",
        help="also run each language's self-test (all, or the comma-separated names), as programs of it run here",
    )


def _lacking(name: str) -> list[dict[str, str]]:
    """What the language lacks here as each benchmark's harness runs it (a way's own toolchain, a library some
    of its programs need), where its own toolchain is here."""
    from codeexec.worker.languages import dialects

    found = []
    for benchmark, way in dialects(name).items():
        toolchain = way.toolchain()
        if isinstance(toolchain, str):
            what = {"what": "its toolchain", "why": toolchain, "package": way.package, "npm": way.npm}
            found.append({"way": f"as {benchmark} runs it,", **what, "install": way.install()})
        for library in way.libraries:
            if not library.found():
                what = {"what": library.npm or library.paths[0], "why": f"needed by {library.needed_by}"}
                found.append(
                    {"way": f"as {benchmark} runs it,", **what, "package": library.package, "npm": library.npm,
                     "install": library.install()}
                )  # fmt: skip
    return found


def _install(languages: dict[str, dict]) -> dict[str, list[str]]:
    """Debian's and npm's packages of everything missing: the languages' toolchains and their libraries."""
    from codeexec.worker.languages import LANGUAGES

    apt: list[str] = []
    npm: list[str] = []
    for name, found in languages.items():
        if "missing" in found:
            apt += LANGUAGES[name].package.split()
            npm += LANGUAGES[name].npm.split()
        for lacking in found.get("lacking", []):
            apt += lacking["package"].split()
            npm += lacking["npm"].split()
    return {"apt": list(dict.fromkeys(apt)), "npm": list(dict.fromkeys(npm))}


def _checked(asked: str | None) -> dict[str, list[str]]:
    """Each language asked for (--check: "all", or names) whose toolchain is here, and what went wrong in its
    self-test ([]: nothing)."""
    if asked is None:
        return {}
    from codeexec.worker.judging.kinds.program import self_test, self_test_failures
    from codeexec.worker.languages import LANGUAGES, name_of

    names = list(LANGUAGES) if asked == "all" else [name_of(given) or given for given in asked.split(",") if given]
    unknown = [name for name in names if name not in LANGUAGES]
    if unknown:
        raise InputError(f"--check: not a language codeexec runs: {', '.join(unknown)} (one of {', '.join(LANGUAGES)})")
    here = [name for name in names if not isinstance(LANGUAGES[name].toolchain(), str)]
    return {name: self_test_failures(name, self_test(name)) for name in here}
