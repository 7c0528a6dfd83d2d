"""The HTTP service (`codeexec serve`): SandboxFusion's /run_code, and a batch endpoint, on the same queue.

RL frameworks score rollouts by posting each program to a sandbox service; verl, tinker-cookbook and
SkyRL speak SandboxFusion's API. This server speaks it too, and hands every request to the workers
that evaluate benchmarks, as a job of one long-lived run (producer/service/dispatch.py): so it scales out as
they do (more workers, on more hosts, one Redis), and shares them fairly with evaluations.

    GET  /v1/ping          "pong" (SandboxFusion's)
    POST /run_code         run a program (python; pytest), as SandboxFusion's /run_code does
    POST /v1/batch         score many samples against test sets sent once (producer/service/batch.py)
    GET  /v1/batch/{id}    a batch's results again: all that are in, then the rest as they come

Where SandboxFusion's behaviour and codeexec's differ, the difference is chosen and written down in
docs/service.md. Everything runs under the sandbox, in its relaxed posture (docs/security.md).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hmac
import ipaddress
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any, Literal

from fastapi import FastAPI
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field, field_validator

from codeexec.producer.service import batch
from codeexec.producer.service.dispatch import Dispatch, Overloaded
from codeexec.protocol.kinds import Script
from codeexec.protocol.models import Problem, Sample, SampleKind
from codeexec.protocol.result import ScriptEnd, StoredResult
from codeexec.protocol.settings import Settings
from codeexec.worker.languages import RUN_CODE, run_code_language
from codeexec.worker.process.workfiles import path_parts

#: SandboxFusion's languages (its server's `Language`, sandbox/runners/types.py): a name outside them is
#: refused as SandboxFusion refuses it (422, naming those this server runs); one of them that codeexec does
#: not run, or whose toolchain no live worker has, is answered at once as SandboxFusion answers what it
#: cannot run, with SandboxError and a message saying so. What codeexec runs: Python's two, and the
#: languages of the workers' table (worker/languages/__init__.py, RUN_CODE).
SANDBOXFUSION_LANGUAGES = (
    "python", "cpp", "nodejs", "go", "go_test", "java", "php", "csharp", "bash", "typescript", "sql", "rust",
    "cuda", "lua", "R", "perl", "D_ut", "ruby", "scala", "julia", "pytest", "junit", "kotlin_script", "jest",
    "verilog", "python_gpu", "lean", "swift", "racket",
)  # fmt: skip
MAX_RUN_TIMEOUT_S = 3600.0


class RunCodeRequest(BaseModel):
    """SandboxFusion's RunCodeRequest. Unknown fields are ignored, as SandboxFusion ignores them."""

    model_config = ConfigDict(extra="ignore")

    code: str = Field(description="The program, written to its language's file in a fresh working directory.")
    language: str = Field(
        "python",
        description="python (`python FILE`), pytest (`pytest FILE`), or another language of SandboxFusion's that "
        "this server runs, as SandboxFusion's runner runs it; SandboxFusion requires it.",
    )
    compile_timeout: float = Field(10, description="Seconds a compiled language's compile may take (Python's: unused).")
    run_timeout: float = Field(
        10, gt=0, le=MAX_RUN_TIMEOUT_S, description="Seconds the program may run (time it could run)."
    )
    memory_limit_MB: int | None = Field(
        -1, description="Address space beyond its start, in MiB; -1, 0 or null: the workers' own limit."
    )
    stdin: str | None = Field(None, description="Its standard input (then end of file); null: empty.")
    files: dict[str, str | None] = Field(
        default_factory=dict, description="Relative path -> base64 content, written first; null values skipped."
    )
    fetch_files: list[str] = Field(default_factory=list, description="Files read back after the run, base64.")

    @field_validator("files")
    @classmethod
    def _files_inside(cls, files: dict[str, str | None]) -> dict[str, str | None]:
        for path, content in files.items():
            if path_parts(path) is None:
                raise ValueError(f"files: {path!r} is not a relative path inside the working directory")
            if content is not None:
                try:
                    base64.b64decode(content, validate=True)
                except (binascii.Error, ValueError):
                    raise ValueError(f"files: the content of {path!r} is not base64") from None
        return files


class CommandRunResult(BaseModel):
    """SandboxFusion's CommandRunResult: how the program's run ended."""

    status: Literal["Finished", "Error", "TimeLimitExceeded"]
    execution_time: float | None = Field(None, description="Wall-clock seconds.")
    return_code: int | None = Field(None, description="Its exit status (-N: killed by signal N); null on a timeout.")
    stdout: str = ""
    stderr: str = ""


class RunCodeResponse(BaseModel):
    """SandboxFusion's RunCodeResponse: `message` is always a string and `run_result` always there."""

    status: Literal["Success", "Failed", "SandboxError"]
    message: str = ""
    compile_result: CommandRunResult | None = None
    run_result: CommandRunResult | None = None
    executor_pod_name: str | None = None
    files: dict[str, str] = Field(default_factory=dict)


def run_code_response(stored: StoredResult) -> RunCodeResponse:
    """A /run_code answer from the run's stored result (SandboxFusion's parse_run_status: Success only for
    a program whose compile, if it has one, and run finished with status 0; a compile that did not is
    Failed, and the program never ran). A run whose runtime exits 0 where SandboxFusion's would not (Mono's
    failed Debug.Assert: ScriptEnd.failed) is Failed, its return code the one it had."""
    compiled = None if stored.compiled is None else command_result(stored.compiled)
    if compiled is not None and (compiled.status != "Finished" or compiled.return_code != 0):
        return RunCodeResponse(status="Failed", compile_result=compiled)
    end = stored.script
    if end is None:  # it never ran: the machine's fault, or the runner's
        why = stored.detail or "the program could not be run"
        return RunCodeResponse(
            status="SandboxError", message=why, run_result=CommandRunResult(status="Error", stderr=why)
        )
    result = command_result(end)
    # Stopped over its output cap: killed, as a program SandboxFusion kills is told (signal 9).
    message = f"{stored.detail}: the program was stopped" if end.ended == "output_limit" else ""
    success = result.status == "Finished" and result.return_code == 0 and not end.failed
    return RunCodeResponse(
        status="Success" if success else "Failed",
        message=message,
        compile_result=compiled,
        run_result=result,
        files=stored.files,
    )


def command_result(end: ScriptEnd) -> CommandRunResult:
    """SandboxFusion's CommandRunResult of a command (a compile, the run) that ended so."""
    if end.ended == "time_limit":
        return CommandRunResult(status="TimeLimitExceeded", execution_time=end.wall_s, stdout=end.stdout,
                                stderr=end.stderr)  # fmt: skip
    status = end.status if end.status is not None else -9
    return CommandRunResult(
        status="Finished", execution_time=end.wall_s, return_code=status, stdout=end.stdout, stderr=end.stderr
    )


def served(workers_have: set[str] | None) -> tuple[list[str], list[str]]:
    """The /run_code languages this server runs, and those whose toolchain its workers lack, each with how it
    is installed; `workers_have`: the languages of the live workers (Dispatch.languages()), None where that
    is not known (then every language codeexec runs is taken as run)."""
    runs, lacking = ["python", "pytest"], []
    for name, (language, _) in RUN_CODE.items():
        if workers_have is None or language in workers_have:
            runs.append(name)
        else:
            way = run_code_language(name)
            lacking.append(f"{name} ({way.install() if way else language})")
    return runs, lacking


def not_sandboxfusion_s(language: str, workers_have: set[str] | None) -> JSONResponse:
    """422, as a request SandboxFusion's model refuses, saying what this server runs instead."""
    runs, lacking = served(workers_have)
    why = f"{language!r} is not a language of SandboxFusion's; this server runs {', '.join(runs)}"
    if lacking:
        why += f"; its workers lack the toolchains of {', '.join(lacking)}"
    problem = {"type": "value_error", "loc": ["body", "language"], "msg": why, "input": language}
    return JSONResponse({"detail": [problem]}, status_code=422)


def not_run(language: str, workers_have: set[str] | None) -> RunCodeResponse | None:
    """SandboxError, at once, for a language of SandboxFusion's this server does not run: one codeexec does
    not, or one whose toolchain no live worker has; None for one it runs."""
    runs, _ = served(workers_have)
    if language in runs:
        return None
    if language in RUN_CODE:
        way = run_code_language(language)
        why = f"no worker of this server has the toolchain of {language} ({way.install() if way else ''})"
    else:
        why = f"language {language!r} is not run by this server (it runs {', '.join(runs)})"
    return RunCodeResponse(status="SandboxError", message=why, run_result=CommandRunResult(status="Error", stderr=why))


def busy(exc: Overloaded, status_code: int) -> JSONResponse:
    return JSONResponse({"detail": str(exc)}, status_code=status_code, headers={"Retry-After": str(exc.retry_after_s)})


def create_app(settings: Settings, redis_url: str) -> FastAPI:
    """The service's ASGI application, on the Redis at `redis_url` (the workers' own)."""
    state: dict[str, Dispatch] = {}

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        state["dispatch"] = dispatch = Dispatch.open(redis_url, settings)
        dispatch.start()
        try:
            yield
        finally:
            await dispatch.close()

    app = FastAPI(
        title="codeexec",
        summary="SandboxFusion's /run_code, and batch scoring of samples, on codeexec's queue and workers.",
        lifespan=lifespan,
    )

    @app.get("/v1/ping")
    async def ping() -> str:
        """SandboxFusion's liveness check."""
        return "pong"

    @app.post("/run_code", response_model=RunCodeResponse, responses={504: {"description": "Too busy: retry."}})
    async def run_code(request: RunCodeRequest) -> Any:
        """Run a program as SandboxFusion does: `python FILE` (or `pytest FILE`), or another language's
        compile and run, in a fresh directory with the request's files, on its stdin; its output, exit
        status, wall-clock time and the files asked for. Too many jobs waiting: 504 with Retry-After (the
        one status verl retries), nothing queued."""
        dispatch = state["dispatch"]
        workers_have = await dispatch.languages()
        if request.language not in SANDBOXFUSION_LANGUAGES:
            return not_sandboxfusion_s(request.language, workers_have)
        if (refused := not_run(request.language, workers_have)) is not None:
            return refused
        task_id = f"run-{secrets.token_hex(8)}"
        memory = request.memory_limit_MB
        script = Script(
            language=request.language,
            file=f"tmp{secrets.token_hex(4)}.py",
            stdin=request.stdin or "",
            files={path: content for path, content in request.files.items() if content is not None},
            fetch=request.fetch_files,
            time_limit_s=request.run_timeout,
            compile_limit_s=min(max(request.compile_timeout, 1e-3), MAX_RUN_TIMEOUT_S),  # what SandboxFusion takes
            memory_bytes=memory << 20 if memory is not None and memory > 0 else None,
        )
        problem = Problem(task_id=task_id, tests=script)
        try:
            sample = Sample(kind=SampleKind.SOLUTION, text=request.code)
            await dispatch.submit([(task_id, problem, [sample])])
        except Overloaded as exc:
            return busy(exc, 504)
        try:
            return run_code_response(await dispatch.result(task_id))
        finally:
            await dispatch.forget([task_id])

    batch.add_routes(app, state, busy)
    return app


Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class Guard:
    """What every request passes before the application: its token (where one is set; /v1/ping, which
    liveness probes call, needs none), and its body's size, read whole here (the application reads it
    whole anyway) so that one over the limit is turned away with 413 before anything of it is parsed."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], token: str | None, max_body: int):
        self.app, self.token, self.max_body = app, token, max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.token is not None and scope["path"] != "/v1/ping":  # liveness probes carry no token
            scope, given = _token_of(scope)
            if not (given and hmac.compare_digest(given.encode(), self.token.encode())):
                why = "a bearer token is required (Authorization: Bearer TOKEN, or a /t/TOKEN/ path prefix)"
                await _answer(send, 401, why if given is None else "the token is not this server's")
                return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            await _answer(send, 413, f"the request body is over this server's limit of {self.max_body} bytes")
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                await _answer(send, 413, f"the request body is over this server's limit of {self.max_body} bytes")
                return
        replayed = False

        async def replay() -> MutableMapping[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _token_of(scope: Scope) -> tuple[Scope, str | None]:
    """The token a request carries, and its scope without a /t/TOKEN prefix (for clients that are given a
    URL and send no header: verl, tinker-cookbook)."""
    path: str = scope["path"]
    if path.startswith("/t/"):
        given, _, rest = path[3:].partition("/")
        return dict(scope, path=f"/{rest}", raw_path=f"/{rest}".encode()), given
    authorization = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
    scheme, _, credentials = authorization.partition(" ")
    return scope, credentials.strip() if scheme.lower() == "bearer" and credentials.strip() else None


async def _answer(send: Send, status: int, detail: str) -> None:
    response = JSONResponse({"detail": detail}, status_code=status)
    await send({"type": "http.response.start", "status": status, "headers": response.raw_headers})
    await send({"type": "http.response.body", "body": response.body})


def is_loopback(host: str) -> bool:
    """Whether listening on `host` reaches this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
