"""What a language is to codeexec: how a program in it is laid out in a file, compiled and run, what its
toolchain is, and how a run's end reads as a verdict. Each language is one module beside this one, which
holds all of it:

    LANGUAGE    a Language (or an instance of a subclass, where a language lays out or reads its programs its
                own way): its names, its packages, its commands
    DIALECTS    the same language as another benchmark's harness runs it, by the benchmark's name (optional)
    RUN_CODE    the names SandboxFusion's /run_code gives it, each a RunCode: the dialect it runs as, and its
                check programs (optional: a language /run_code does not name)
    SELF_TEST   a SelfTest: a program that passes, one whose assertion fails, one that does not compile

worker/languages/__init__.py finds them by scanning this folder: adding a language is its module and its row in
docs/languages.md.

A program runs as steps (worker/judging/kinds/program.py): the compile steps, each under the compile's time
limit, then the run, under the test's; each step a command in a process of its own, in the sandbox's
programs posture (worker/candidate/sandbox.py), in a working directory that holds the program's file.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from codeexec.worker.candidate.sandbox import EXEC_PATHS

#: Where a toolchain's commands are looked for besides the worker's PATH: rustup's and Go's usual homes.
_ALSO = ("/usr/local/go/bin", os.path.expanduser("~/.cargo/bin"))


@dataclass(frozen=True)
class SelfTest:
    """What a language's toolchain is checked with, as its benchmarks' tests are written (asserts, a test
    framework's checks): `passes`, a program that passes; `fails`, one whose assertion fails, and `fails_as`,
    what that reads as ("assertion_fail", or "error" where the reference cannot tell); `broken`, one that does
    not compile (or parse: None where its toolchain cannot tell, Lua's). tests/test_languages.py runs it for every
    language, and so does `codeexec doctor --check`."""

    passes: str
    fails: str
    fails_as: str
    broken: str | None


@dataclass(frozen=True)
class RunCode:
    """A name SandboxFusion's /run_code gives the language: `dialect`, the module's DIALECTS entry that runs a
    program as SandboxFusion's runner does ("": LANGUAGE itself); and its check programs (tests/
    test_run_code_languages.py): `echo`, which reads a number and prints it and one more (a test file's
    language: whose test passes), and `failing`, which fails an assertion."""

    dialect: str
    echo: str
    failing: str


@dataclass(frozen=True)
class Library:
    """What some of a benchmark's programs need beyond the toolchain (HumanEval-X's C++ includes Boost in two
    of its tests): found where any of `paths` exists, provided by Debian's `package` or npm's `npm`, needed
    by `needed_by`. Where it is missing only those programs fail, as under the reference's harness without it;
    `codeexec doctor` says so, and the worker image and the test suite install it with the language."""

    paths: tuple[str, ...]
    needed_by: str
    package: str = ""
    npm: str = ""

    def found(self) -> bool:
        return any(glob.glob(path) for path in self.paths)

    def install(self) -> str:
        return f"apt-get install {self.package}" if self.package else f"npm install -g {self.npm}"


class Unavailable(Exception):
    """What a language's steps need that this worker has, but could not make (Rust's crates built once): the
    machine's failure, not the program's."""


@dataclass(frozen=True)
class Toolchain:
    """A language's toolchain as found on this worker: each tool's absolute path, and the directories its
    programs must read and execute beyond the system's (the programs posture's `toolchains`)."""

    tools: dict[str, str]
    directories: tuple[str, ...]


@dataclass(frozen=True)
class Language:
    """A language: its name in codeexec (`name`, what a problem's tests name), the names benchmark files
    give it (`aliases`: MultiPL-E's file suffix, mxeval's language, HumanEval-X's task id prefix), and:

    - `tools`: each command its steps name, as looked up on the worker (PATH, then _ALSO); `package`: the
      Debian packages that provide them, `npm`: npm's (`npm install -g`), for what Debian has not (tsx,
      Jest), which an error and `codeexec doctor` name where one is missing (`install`);
    - `file`: the program's file name; `compile`: the compile steps, `run`: the run's command, each a list
      of words, where "{file}" is the file's name, "{stem}" the name without its suffix, and a word that
      is a tool's name, that tool's path ("{main}": `main`, the class a JVM runs; "{memory}": the step's
      memory limit in bytes, worker/judging/kinds/program.py); `env`: variables of every
      step ("{dir}": the working directory);
    - `reads`: directories beyond the system's its steps read and execute (headers, class libraries);
      `needs`: files or directories without which its programs cannot be judged (a library the tests
      import; a pattern of glob's, where any version will do): where one is missing, so is the toolchain;
      `libraries`: what only some of its programs need (Library), checked by `codeexec doctor`;
    - `failed_assertion`: what in a failed run's stderr (or stdout) says a test's assertion failed, rather
      than that the program crashed (assertion_fail against error);
    - how a step's end reads, where the reference reads more than its exit status: `compiled`, the exit
      statuses of a compile that succeeded; `failed_if`, text in the run's stdout or stderr that fails it
      whatever its status (Go's FAIL); `quiet`, what fails it if anything is written there: "stderr"
      (Racket, Scala), "both" stdout and stderr (HumanEval-X's JavaScript), "" nothing;
      `status_ignored`, only failed_if decides (C#'s mono exits 0 when a Debug.Assert fails);
      `syntax_text`, what in a failed run says its program did not compile (a language whose one step
      compiles and runs: Go's go test, D's rdmd);
    - `refused`: why codeexec does not run this benchmark's programs in it ("" where it does);
    - `companions`: files it puts beside every program, by name (SandboxFusion's Jest project's own);
    - `artifacts`: the files the compile makes that the run needs (as `file`'s words: "{stem}"), kept for
      the same program again (worker/compilers/cache.py); none: each program compiles anew;
    - `warm`: the command that starts a compiler kept running (worker/compilers/persistent.py), which compiles
      program after program in place of the one compile step ("{scratch}": its own directory, which holds
      `warm_files`, its own files beside this module); `warm_statuses`, the statuses that are its verdict
      on a program (others: it failed, and the program compiles as a step); none: each compile is a step;
    - `compile_limit_s`, `run_limit_s`: the time limits of the compile and of the run where neither the
      problem nor the run gives one (the references': MultiPL-E's 15 s, mxeval's 10 s a run).
    """

    name: str
    title: str
    aliases: tuple[str, ...]
    tools: tuple[str, ...]
    package: str
    file: str
    run: tuple[str, ...]
    compile: tuple[tuple[str, ...], ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    reads: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    libraries: tuple[Library, ...] = ()
    failed_assertion: re.Pattern[str] | None = None
    compiled: frozenset[int] = frozenset({0})
    failed_if: re.Pattern[str] | None = None
    quiet: str = ""
    status_ignored: bool = False
    syntax_text: re.Pattern[str] | None = None
    compile_limit_s: float = 30.0
    run_limit_s: float = 15.0
    version: tuple[str, ...] = ("--version",)
    main: str = ""
    refused: str = ""
    artifacts: tuple[str, ...] = ()
    npm: str = ""
    companions: dict[str, str] = field(default_factory=dict)
    warm: tuple[str, ...] = ()
    warm_files: tuple[str, ...] = ()
    warm_statuses: frozenset[int] = frozenset()

    def install(self) -> str:
        """How its toolchain is installed: its Debian packages, and npm's where it needs some."""
        return f"apt-get install {self.package}" + (f", then npm install -g {self.npm}" if self.npm else "")

    def artifacts_of(self, file: str) -> list[str]:
        """The files the compile of `file` makes that its run needs (`artifacts`)."""
        return [_fill(name, self._words(file)) for name in self.artifacts]

    def file_of(self, program: str) -> str:
        """The program's file name (Java's is its public class's)."""
        return self.file

    def text_of(self, program: str) -> str:
        """The text of the program's file (SandboxFusion's PHP puts a `<?php` tag where it has none)."""
        return program

    def steps(self, file: str, toolchain: Toolchain, program: str = "") -> list[tuple[str, list[str], dict[str, str]]]:
        """("compile" or "run", argv, env) of each step of `program`, in `file`, its tools' paths from
        `toolchain` (env's "{dir}" is the runner's to fill: worker/candidate/forked_runs.py); Unavailable
        where what they need could not be made."""
        words = self._words(file)

        def argv(template: tuple[str, ...]) -> list[str]:
            return [toolchain.tools.get(word) or _fill(word, words) for word in template]

        env = dict(self.env)
        return [("compile", argv(step), env) for step in self.compile] + [("run", argv(self.run), env)]

    def warm_command(self, toolchain: Toolchain, scratch: str) -> list[str]:
        """The command that starts the compiler kept running (`warm`), in its directory `scratch`."""
        return [toolchain.tools.get(word) or _fill(word, {"{scratch}": scratch}) for word in self.warm]

    def warm_arguments(self, argv: list[str], directory: str) -> list[str]:
        """The warm compiler's arguments for the compile step `argv`, whose files are in `directory` (where
        the compiler compiles, as the command would): the command's, after the tool."""
        return argv[1:]

    def _words(self, file: str) -> dict[str, str]:
        """What the words of the commands and `artifacts` stand for, for the program in `file`."""
        return {"{file}": file, "{stem}": file.rsplit(".", 1)[0], "{main}": self.main}

    def run_ended(self, status: int | None, stdout: str, stderr: str) -> str:
        """How a run that exited with `status` reads: "pass", "assertion_fail", "syntax_error" or "error"."""
        written = {"": "", "stderr": stderr, "both": stdout + stderr}[self.quiet]
        said = self.failed_if is not None and self.failed_if.search(f"{stdout}\n{stderr}") is not None
        failed = said or bool(written.strip())
        if not failed and (status == 0 or self.status_ignored):
            return "pass"
        for outcome, pattern in (("syntax_error", self.syntax_text), ("assertion_fail", self.failed_assertion)):
            if pattern is not None and (pattern.search(stderr) or pattern.search(stdout)):
                return outcome
        return "error"

    def toolchain(self) -> Toolchain | str:
        """This worker's toolchain, or what is missing and the package that provides it."""
        return _toolchain(self)

    def directories(self, tools: dict[str, str]) -> tuple[str, ...]:
        """The directories beyond the system's that the steps need: `reads`, and where each tool really
        lives (a rustup toolchain, /usr/local/go)."""
        found = [path for path in self.reads if os.path.exists(path)]
        for path in tools.values():
            home = os.path.dirname(os.path.dirname(os.path.realpath(path)))
            # EXEC_PATHS: what the programs posture covers already (worker/candidate/sandbox.py).
            if not any(home == top or home.startswith(top + "/") for top in EXEC_PATHS) and home != "/usr":
                found.append(home)
        return tuple(dict.fromkeys(found))

    def resolve(self, tool: str) -> str | None:
        """The path of `tool` on this worker: the worker's PATH, then _ALSO."""
        return shutil.which(tool) or shutil.which(tool, path=os.pathsep.join(_ALSO))

    def describe(self) -> tuple[str, str]:
        """(where its first tool is, its version's first line), or ("", what is missing): for doctor."""
        found = self.toolchain()
        if isinstance(found, str):
            return "", found
        first = found.tools[self.tools[0]]
        try:
            ran = subprocess.run([first, *self.version], capture_output=True, text=True, timeout=60, check=False)
            said = (ran.stdout.strip() or ran.stderr.strip()).splitlines()
            # A JVM's warnings about the options its launcher gave it (kotlinc's -noverify) come before the version.
            said = [line for line in said if " VM warning: " not in line] or said
        except (OSError, subprocess.TimeoutExpired) as exc:
            said = [f"did not say its version: {exc}"]
        return first, said[0] if said else ""


def absolute(words: list[str], directory: str) -> list[str]:
    """`words` with those that name a file of `directory`, or the directory itself ("."), made absolute: a
    JVM compiler kept running compiles where it started, not in `directory`."""
    found = []
    for word in words:
        named = word == "." or (not word.startswith(("-", "/")) and os.path.isfile(os.path.join(directory, word)))
        found.append(os.path.normpath(os.path.join(directory, word)) if named else word)
    return found


def _fill(word: str, words: dict[str, str]) -> str:
    for key, value in words.items():
        word = word.replace(key, value)
    return word


_found: dict[tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], Toolchain | str] = {}


def _toolchain(language: Language) -> Toolchain | str:
    """language.toolchain(), looked for once per process for each way of running the language (a benchmark's
    may read more: HumanEval-X's Go, testify)."""
    key = (language.name, language.tools, language.reads, language.needs)
    if key not in _found:
        _found[key] = _look_for(language)
    return _found[key]


def _look_for(language: Language) -> Toolchain | str:
    tools: dict[str, str] = {}
    for tool in language.tools:
        path = language.resolve(tool)
        if path is None:
            return f"no {tool} on this machine ({language.install()})"
        tools[tool] = path
    for path in language.needs:
        if not glob.glob(path):
            return f"no {path} on this machine ({language.install()})"
    return Toolchain(tools, language.directories(tools))
