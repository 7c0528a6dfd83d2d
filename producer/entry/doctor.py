"""`codeexec doctor`: what candidates run under on this machine, in each isolation mode and posture, and
the languages whose toolchains are here."""

from __future__ import annotations

import argparse
import json
import sys

from codeexec.protocol.settings import get_settings


def run(args: argparse.Namespace) -> int:
    """Run a probe candidate in each isolation mode, with this machine's settings, and say what it ran
    under; exit 1 if the settings require a protection that is not in place."""
    from codeexec.worker.candidate.sandbox import missing
    from codeexec.worker.languages import LANGUAGES
    from codeexec.worker.process.protections import NAMES, probe, programs_relaxations, relaxations

    settings = get_settings()
    found = probe()
    relaxed = {f"{mode}, relaxed posture": states for mode, states in probe(posture="relaxed").items()}
    programs = {f"{mode}, programs posture": states for mode, states in probe(posture="programs").items()}
    absent = {
        mode: missing(protections, settings.pid_namespace, settings.sandbox)
        for mode, protections in (found | relaxed | programs).items()
    }
    languages = {}
    for name, language in LANGUAGES.items():
        path, said = language.describe()
        toolchain = language.toolchain()
        languages[name] = {"title": language.title, "aliases": list(language.aliases), "path": path} | (
            {"missing": said} if isinstance(toolchain, str) else {"version": said, "directories": toolchain.directories}
        )
    if args.json:
        document = {"sandbox": settings.sandbox, "pid_namespace": settings.pid_namespace, "isolation": found}
        document |= {"relaxed": relaxed, "relaxations": relaxations(), "programs": programs}
        print(json.dumps(document | {"programs_relaxations": programs_relaxations(), "languages": languages}))
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
        for mode, names in absent.items():
            if names:
                print(f"codeexec: required, and not in place (isolation {mode}): {', '.join(names)}", file=sys.stderr)
    return 1 if any(absent.values()) else 0
