"""A program run as a script (the HTTP service's /run_code): `python FILE` (or `pytest FILE`) on a standard
input, with files in its working directory, and how it ended (RunResult.script), not a verdict.

It runs on the stdin tests' path (worker/judging/kinds/stdin.py) with one test: the candidate's process is its
runner and forks the program's process, confined by the sandbox, from a warm interpreter; the runner
keeps its stderr as well as its stdout, and runs it as Python runs a file (worker/candidate/forked_runs.py,
run_file()). The host writes the files into the working directory before, and reads the ones asked
for after (worker/process/workfiles.py).

Its time limit is counted as codeexec counts time (what it could have run: worker/process/timelimit.py),
with the wall-clock ceiling of every candidate; its wall-clock time is reported beside.
"""

from __future__ import annotations

import base64
import marshal
from typing import TYPE_CHECKING

from codeexec.protocol.kinds import Script
from codeexec.protocol.result import Outcome, RunResult
from codeexec.protocol.settings import runner_config
from codeexec.worker.judging.helpers.steps import Given, how_it_ended, one_test, run_in
from codeexec.worker.judging.kind import Kind
from codeexec.worker.languages import RUN_CODE, run_code_language
from codeexec.worker.process import workfiles
from codeexec.worker.process.runner import Harness, run_program
from codeexec.worker.process.watch import TestEnded

if TYPE_CHECKING:
    from codeexec.protocol.run import RunMeta
    from codeexec.worker.judging.context import Context

# The runner's own time beyond the script's limit: its start, a fork, the clean-up. Only a runner that
# cannot go on meets it.
_SLACK_S = 5.0


def judge(program: str, tests: Script, context: Context) -> RunResult:
    if tests.language in ("python", "pytest"):
        return run_script(program, tests, context.options)
    return run_other(program, tests, context.options)


def host_compared(tests: Script) -> int:
    return 0  # not a verdict: how it ended


def run_script(code: str, script: Script, options: dict[str, object]) -> RunResult:
    """Run `code` as the file script.file and say how it ended."""
    if script.memory_bytes is not None:
        options = options | {"memory_bytes": script.memory_bytes}
    if script.relaxed:  # what a sandbox service's programs use: subprocess, a loopback, requests
        options = options | {"deny_imports": False, "posture": "relaxed"}
    config = runner_config(**options)
    cap = script.output_bytes
    stdio = {
        "prelude": "",
        "inputs": marshal.dumps([script.stdin.encode()]),
        "limit": script.time_limit_s,
        "caps": [cap],
        "stderr_cap": cap,
        "budget": script.time_limit_s,
        "ceiling": config.wall_ceiling_factor,
        "script": {
            "file": script.file,
            "pytest": script.language == "pytest",
            "scratch": workfiles.scratch_paths(script.fetch),
        },
    }
    files = {path: base64.b64decode(content) for path, content in script.files.items()} | {script.file: code.encode()}
    ended: list[TestEnded] = []

    def keep(test: TestEnded) -> bool:
        ended.append(test)
        return False

    # Room for the runner's own lines beside the program's output, which the runner caps.
    options = options | {"output_bytes": cap + 4096, "stderr_bytes": cap + 4096}
    harness = Harness("stdin", stdio)
    timeout = script.time_limit_s + _SLACK_S
    run = run_program(code, harness, timeout, on_test=keep, files=files, fetch=script.fetch, **options)
    if run.exit_code is Outcome.INFRA_ERROR or not ended:
        # It never got to run (the runner could not start, or died): the machine's fault, or the runner's.
        outcome = Outcome.INFRA_ERROR if run.exit_code is Outcome.INFRA_ERROR else Outcome.ERROR
        return run.model_copy(update={"exit_code": outcome, "total": 1, "passed": 0, "score": 0.0})
    test = ended[0]
    end = how_it_ended(test, test.stdout, test.stderr, test.wall_s, test.charged_s)
    if end.ended == "time_limit":
        outcome = Outcome.TIMEOUT
    else:
        outcome = Outcome.PASS if test.status == 0 and end.ended == "exited" else Outcome.ERROR
    return one_test(run, outcome, test.detail, test.charged_s, end)


def run_other(code: str, script: Script, options: dict[str, object]) -> RunResult:
    """Run `code` in another language, as SandboxFusion's runner of it does: compiled (under the script's
    compile limit), then run on its standard input; how each ended."""
    language = run_code_language(script.language)
    if language is None:
        why = f"language {script.language!r} is not run by this worker (it runs {', '.join(RUN_CODE)})"
        return RunResult.not_run(Outcome.INFRA_ERROR, 1, why)
    options = options | {"output_bytes": script.output_bytes, "stderr_bytes": script.output_bytes}
    if script.memory_bytes is not None:
        options |= {"memory_bytes": script.memory_bytes}
    files = {path: base64.b64decode(content) for path, content in script.files.items()}
    given = Given(script.stdin.encode(), files, tuple(script.fetch), script.compile_limit_s)
    return run_in(code, language, script.time_limit_s, options, given)


def describe_limits(meta: RunMeta) -> str:
    return "each its own (a request's run_timeout); a compile its own, or its language's"


KIND = Kind(Script, judge, host_compared, "scripts", describe_limits)
