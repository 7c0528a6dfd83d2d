"""A program in another language than Python, compiled and run as steps: the one way such a program is
compiled and run, whoever runs it: a benchmark's program (worker/judging/kinds/program.py: run_in()), a
/run_code script (worker/judging/kinds/script.py: run_in() with what it is Given), and a competitive
program's stdin tests (worker/judging/kinds/stdin.py: prepare(), then a run of what the compile made per test).

Each step (a compile, the run) is a command executed in a process of its own by the candidate's runner
(worker/candidate/forked_runs.py, run_steps()), confined by the sandbox's programs posture: the system's and
the language's toolchain directories read and executed, the working directory written and executed, no
network. A step's time is charged as a stdin test's (worker/process/timelimit.py): the compile's under a
limit of its own, which counts against the verdict only when it is exceeded, and the run's the test's.
Memory: each step's RLIMIT_DATA is the run's memory limit (RLIMIT_AS, which Python's candidates have, breaks
runtimes that reserve address space up front: the JVM, Node, Go).

Outcomes: a compile that fails (or runs out of time) is syntax_error, with the compiler's message; a run
that exits 0 passes; one whose output says an assertion failed (the language's failed_assertion) is
assertion_fail; a run out of time is timeout; any other end is error, with the end of its stderr.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace

from codeexec.protocol.result import Outcome, RunResult, ScriptEnd
from codeexec.protocol.settings import runner_config
from codeexec.worker.compilers import cache
from codeexec.worker.compilers.persistent import compile_warm
from codeexec.worker.languages.language import Language, Toolchain, Unavailable
from codeexec.worker.process.runner import Harness, run_program
from codeexec.worker.process.watch import TestEnded

#: What of a step's stderr (or stdout) a result keeps: the compiler's first errors, a traceback's end.
_KEPT = 4096
# The runner's own time beyond its steps' limits: its start, the forks, the clean-up.
_SLACK_S = 5.0


@dataclass(frozen=True)
class Given:
    """What a program run as a script (/run_code's: worker/judging/kinds/script.py) is given beyond its file: its
    run's standard input, files written beside it first, the files read back after its run, and its
    compile's time limit (else its language's)."""

    stdin: bytes = b""
    files: dict[str, bytes] = field(default_factory=dict)
    fetch: tuple[str, ...] = ()
    compile_limit: float | None = None


def run_in(
    program: str, language: Language, run_limit: float, options: dict[str, object], given: Given | None = None
) -> RunResult:
    """Compile and run `program` in `language`; the run under `run_limit` seconds (prepare() says how it
    compiles). A script's result (`given`) also says how its run ended (RunResult.script, None where it
    never ran) and its compile (RunResult.compiled), and holds the files it fetched."""
    script, given = given is not None, given or Given()
    ready = prepare(program, language, options, given.compile_limit, given.files)
    if isinstance(ready, RunResult):
        return ready
    if isinstance(ready, Failed):
        return _result(language, ready.runs, ready.ended, script)
    run = replace(ready.run, limit=run_limit, stdin=given.stdin)
    done = ready.execute([*ready.compiles, run], fetch=given.fetch)
    return _result(language, [*ready.runs, done[0]], ready.ended + done[1], script)


@dataclass(frozen=True)
class Ready:
    """A program ready to run: its files (with what its compile made, where that was kept or made before),
    the compile steps still to run with it (none where it was compiled before: what the compile made is
    among the files), its run's step (to be given its limit and input), and what its compile did."""

    program: str
    language: Language
    files: dict[str, bytes]
    compiles: list[Step]
    run: Step
    runs: list[RunResult]
    ended: list[tuple[Step, TestEnded]]
    options: dict[str, object]

    def execute(
        self, steps: list[Step], fetch: Sequence[str] = (), on_run: Callable[[int, TestEnded], bool] | None = None
    ) -> tuple[RunResult, list[tuple[Step, TestEnded]]]:
        """Run `steps` (the compiles still to run, then runs of its run step) in one working directory;
        `on_run(n, test)`: the nth run ended, say whether to go on (else: while each exits with status 0)."""
        made = self.language.artifacts_of(self.language.file_of(self.program))
        return _steps(self.program, self.language, steps, self.files, self.options, fetch, made, on_run)


@dataclass(frozen=True)
class Failed:
    """A program whose compile failed (or ran out of time): what it did."""

    language: Language
    runs: list[RunResult]
    ended: list[tuple[Step, TestEnded]]

    def result(self) -> RunResult:
        """The program's result: syntax_error with the compiler's message (infra_error: the machine's)."""
        return _result(self.language, self.runs, self.ended, False)


def prepare(
    program: str,
    language: Language,
    options: dict[str, object],
    compile_limit: float | None = None,
    beside: dict[str, bytes] | None = None,
) -> Ready | Failed | RunResult:
    """`program` in `language` made ready to run, with the files `beside` it: a compile whose files are kept
    (worker/compilers/cache.py) is not made again, its files put beside the program's; where the language
    has a compiler kept running (worker/compilers/persistent.py), it compiles; else its compile's steps run alone
    where what they make is known (then kept), or go before the run in its working directory. A RunResult
    where it cannot run here (the toolchain missing: infra_error)."""
    beside = beside or {}
    toolchain = language.toolchain()
    if isinstance(toolchain, str):  # this worker lacks it: the machine's failure, not the program's
        return _unavailable(language, toolchain)
    program = language.text_of(program)
    file = language.file_of(program)
    try:
        steps = [
            Step(kind, argv, env, compile_limit or language.compile_limit_s if kind == "compile" else 0.0)
            for kind, argv, env in language.steps(file, toolchain, program)
        ]
    except Unavailable as missing:
        return _unavailable(language, str(missing))
    options = options | {
        "posture": "programs",
        "toolchains": list(toolchain.directories),
        "deny_imports": False,  # no Python of the candidate's runs: its steps are other programs
    }
    files = beside | {name: text.encode() for name, text in language.companions.items()} | {file: program.encode()}
    made = language.artifacts_of(file)
    compiles = [step for step in steps if step.kind == "compile"]
    [run] = [step for step in steps if step.kind == "run"]
    runs: list[RunResult] = []
    ended: list[tuple[Step, TestEnded]] = []
    kept: dict[str, bytes] | None = None
    entry = ""  # the compile's key where what it makes is kept: not worked out for every program
    with ExitStack() as held:
        if made and compiles:
            # The language's commands as it says them, not as made for this program: a precompiled header
            # or a prebuilt cache that one compile has and the next has not changes nothing it makes.
            commands = [(list(step), language.env) for step in language.compile]
            entry = cache.key(toolchain, commands, file, program, beside)
            held.enter_context(cache.compiling(entry))  # the host's other processes wait, then find it
            kept = cache.get(entry, made)
        if kept is None and language.warm and len(compiles) == 1:
            warmed = _warm(language, toolchain, compiles[0], files, options)
            if warmed is not None:
                done, test, kept = warmed
                runs.append(done)
                ended.append((compiles[0], test))
                if kept is None:
                    return Failed(language, runs, ended)
                if made and set(made) <= set(kept):
                    cache.put(entry, {name: kept[name] for name in made})
        if kept is None and made and compiles:  # compile alone, and read what it made before anything of it runs
            done, steps_ended = _steps(program, language, compiles, files, options, fetch=made)
            runs.append(done)
            ended += steps_ended
            if (
                done.exit_code is Outcome.INFRA_ERROR
                or len(steps_ended) < len(compiles)
                or not compile_succeeded(language, steps_ended[-1][1])
            ):
                return Failed(language, runs, ended)
            kept = {name: base64.b64decode(content) for name, content in done.files.items()}
            if set(kept) == set(made):
                cache.put(entry, kept)
        if kept is not None:
            if not ended and compiles:  # kept from before: a compile that succeeded, and said nothing now
                ended.append((compiles[-1], TestEnded(0, "pass", "", "", 0.0, "", 0, 0.0)))
            compiles = []
            files |= kept
    return Ready(program, language, files, compiles, run, runs, ended, options)


def _unavailable(language: Language, missing: str) -> RunResult:
    detail = f"{language.title}: {missing}"
    return RunResult(exit_code=Outcome.INFRA_ERROR, score=0.0, passed=0, total=1, detail=detail, lasting=True)


def _warm(
    language: Language, toolchain: Toolchain, step: Step, files: dict[str, bytes], options: dict[str, object]
) -> tuple[RunResult, TestEnded, dict[str, bytes] | None] | None:
    """The compile `step` by the language's compiler kept running (worker/compilers/persistent.py): the compile as a
    run, its end as a step's, and what it made where it compiled; None where there is no such compiler."""
    warmed = compile_warm(language, toolchain, step.argv, files, step.limit, runner_config(**options))
    if warmed is None:
        return None
    test = TestEnded(
        0, "pass" if warmed.ended == "pass" else "limit", warmed.detail, "", warmed.charged_s, warmed.said,
        warmed.status, warmed.wall_s,
    )  # fmt: skip
    run = RunResult(
        exit_code=Outcome.PASS, score=0.0, passed=0, total=1, duration_s=warmed.wall_s, protections=warmed.protections
    )
    return run, test, warmed.made if compile_succeeded(language, test) else None


@dataclass(frozen=True)
class Step:
    kind: str  # "compile" or "run"
    argv: list[str]
    env: dict[str, str]
    limit: float
    stdin: bytes = b""
    cap: int = 0  # what it may print (0: the run's output limit)


def _steps(
    program: str,
    language: Language,
    steps: list[Step],
    files: dict[str, bytes],
    options: dict[str, object],
    fetch: Sequence[str] = (),
    executable: Sequence[str] = (),
    on_run: Callable[[int, TestEnded], bool] | None = None,
) -> tuple[RunResult, list[tuple[Step, TestEnded]]]:
    """Run `steps` in one candidate's working directory holding `files`: each step that ended, in turn. The
    next step runs after a compile that succeeded; after a run, where `on_run(n, test)` (the nth run) says so,
    else where it exited with status 0."""
    config = runner_config(**options)
    given = {
        "steps": [
            {
                "argv": _with_memory(step.argv, config.memory_bytes),
                "env": step.env,
                "limit": step.limit,
                "cap": step.cap or config.output_bytes,
                "data_bytes": config.memory_bytes,
                "stdin": step.stdin,
            }
            for step in steps
        ],
        "stderr_cap": config.stderr_bytes,
        "ceiling": config.wall_ceiling_factor,
    }
    ended: list[tuple[Step, TestEnded]] = []
    compiles = sum(step.kind == "compile" for step in steps)

    def keep(test: TestEnded) -> bool:
        ended.append((steps[test.index], test))
        if on_run is not None and test.index >= compiles:
            return on_run(test.index - compiles, test)
        return compile_succeeded(language, test)

    limits = options | {
        "memory_bytes": None,  # each step's RLIMIT_DATA instead (above)
        "data_bytes": None,
        # Room for the runner's own lines beside what the steps print, which it caps.
        "output_bytes": sum(step.cap or config.output_bytes for step in steps) + 4096,
        "stderr_bytes": config.stderr_bytes * len(steps) + 4096,
    }
    timeout = sum(step.limit for step in steps) + _SLACK_S
    run = run_program(
        program, Harness("steps", given), timeout, on_test=keep, files=files, fetch=fetch, executable=executable,
        **limits,
    )  # fmt: skip
    return run, ended


def _result(language: Language, runs: list[RunResult], ended: list[tuple[Step, TestEnded]], script: bool) -> RunResult:
    """The program's result from its steps' runs: the verdict of the last step that ended, and how it ended
    (`script`: the end of what it printed, its steps' times together). A script's: how its run ended (the
    whole of what it printed, to its cap; None where it never ran), its last compile (`compiled`), and the
    files its run's fetch read."""
    run = runs[-1].model_copy(update={"duration_s": sum(each.duration_s for each in runs)})
    failed = next((each for each in runs if each.exit_code is Outcome.INFRA_ERROR), None)
    if failed is not None or not ended:  # the machine's failure, or the runner's: nothing of the program ended
        outcome, detail = (Outcome.INFRA_ERROR, failed.detail) if failed is not None else (Outcome.ERROR, run.detail)
        return run.model_copy(update={"exit_code": outcome, "detail": detail, "total": 1, "passed": 0, "score": 0.0})
    step, last = ended[-1]
    outcome, detail = _verdict(language, step.kind, last)
    charged = last.charged_s if step.kind == "run" else 0.0
    if not script:
        wall_s, charged_s = (sum(getattr(test, name) for _, test in ended) for name in ("wall_s", "charged_s"))
        end = how_it_ended(last, last.stdout[-_KEPT:], last.stderr[-_KEPT:], wall_s, charged_s)
        return one_test(run, outcome, detail, charged, end).model_copy(update={"files": {}})  # what a compile made
    compiles = [test for each, test in ended if each.kind == "compile"]
    made = compiles[-1] if compiles else None
    compiled = made and how_it_ended(made, made.stdout[-_KEPT:], made.stderr[-_KEPT:], made.wall_s, made.charged_s)
    ran = step.kind == "run"
    end = how_it_ended(last, last.stdout, last.stderr, last.wall_s, last.charged_s) if ran else None
    if end is not None and language.status_ignored and end.status == 0 and outcome is not Outcome.PASS:
        end = end.model_copy(update={"failed": True})  # Mono's failed Debug.Assert: its status says nothing
    result = one_test(run, outcome, detail, charged, end)  # type: ignore[arg-type]
    return result.model_copy(update={"script": end, "compiled": compiled, "files": run.files if ran else {}})


def _with_memory(argv: list[str], memory_bytes: int | None) -> list[str]:
    """`argv` with "{memory}" the step's memory limit in bytes (a JVM's heap is sized from it); a word that
    names it is left out where there is none."""
    if memory_bytes is None:
        return [word for word in argv if "{memory}" not in word]
    return [word.replace("{memory}", str(memory_bytes)) for word in argv]


def compile_succeeded(language: Language, test: TestEnded) -> bool:
    """Whether a compile step that ended so made what the run needs."""
    return test.ended in ("pass", "killed") and test.status in language.compiled


def _verdict(language: Language, kind: str, test: TestEnded) -> tuple[Outcome, str]:
    """The outcome of the program from its last step, and why."""
    if kind == "compile":
        if test.ended == "limit":
            return Outcome.SYNTAX_ERROR, f"the compile {test.detail}"
        if compile_succeeded(language, test):  # the run never came: the runner stopped
            return Outcome.ERROR, "the program was compiled, and did not run"
        return Outcome.SYNTAX_ERROR, f"it does not compile: {_head(test.stderr or test.stdout) or test.detail}"
    if test.ended == "limit":
        return Outcome.TIMEOUT, test.detail
    if test.ended in ("output", "error"):  # over a cap; a command that could not be executed
        return Outcome.ERROR, test.detail
    ended = language.run_ended(test.status, test.stdout, test.stderr)
    if ended == "pass":
        return Outcome.PASS, ""
    said = _tail(test.stderr) or _tail(test.stdout)
    if ended == "syntax_error":
        return Outcome.SYNTAX_ERROR, f"it does not compile: {_head(test.stdout + test.stderr)}"
    if ended == "assertion_fail":
        return Outcome.ASSERTION_FAIL, said or test.detail
    return Outcome.ERROR, f"{test.detail}: {said}" if said else test.detail or "it failed"


def _head(text: str) -> str:
    """The first lines of a compiler's message: its first error."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[:4])[:400]


def _tail(text: str) -> str:
    """The last lines of what a step wrote that say most: at most a few hundred characters."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-4:])[-400:]


def how_it_ended(test: TestEnded, stdout: str, stderr: str, wall_s: float, charged_s: float) -> ScriptEnd:
    """A program's end as a script's (RunResult.script): from its last test, with what it printed and its times."""
    how = {"limit": "time_limit", "output": "output_limit"}.get(test.ended, "exited")
    return ScriptEnd(
        ended=how,  # type: ignore[arg-type]
        status=test.status,
        stdout=stdout,
        stderr=stderr,
        wall_s=round(wall_s, 6),
        charged_s=round(charged_s, 6),
    )


def one_test(run: RunResult, outcome: Outcome, detail: str, charged_s: float, end: ScriptEnd) -> RunResult:
    """`run` as the result of one test that came to `outcome`: a script's, a program's in another language."""
    passed = int(outcome is Outcome.PASS)
    update = {"exit_code": outcome, "score": float(passed), "passed": passed, "total": 1, "detail": detail}
    return run.model_copy(update=update | {"charged_s": charged_s, "script": end})
